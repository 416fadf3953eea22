import { type Kysely, sql } from 'kysely'

/**
 * AI drafts for experts (issue 7): one row per draft request, keyed by its ledger request id (derived from the
 * /draft message or the button press, so a redelivered update or a double tap finds the row and does nothing), and
 * the expert messages that were taken as an edited version of a draft (so a redelivered edit is never relayed to
 * the client). Frozen in time: it never imports app code.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table draft (
      id bigint generated always as identity primary key,
      bot_id bigint not null,
      consultation_id bigint not null references consultation (id),
      -- The appeal the draft answers (the open one when it was requested).
      appeal_id bigint references desk_appeal (id),
      -- The ledger reservation's request id (also for refusals, which the ledger or this table stores).
      request_id text not null unique,
      requested_by bigint not null,
      -- Where it was asked for: the /draft message, or the message whose "Draft answer" button was pressed.
      source text not null check (source in ('command', 'button')),
      source_chat_id bigint not null,
      source_message_id bigint not null,
      instruction text,
      model text,
      -- refused: never admitted (refusal says why); queued: admitted, job written; calling: the provider call may
      -- have been sent; ready: posted with buttons; editing: waiting for the expert's edited text; sent, discarded;
      -- failed: no usable draft (released, or an empty text, or an unknown outcome reconciled since);
      -- unknown: outcome unknown, the hold stays until an admin reconciles.
      state text not null check (state in ('refused', 'queued', 'calling', 'ready', 'editing', 'sent', 'discarded',
        'failed', 'unknown')),
      refusal jsonb,
      -- The chat messages to send, fixed at admission so the request matches the estimate the bound was priced on;
      -- cleared once the call is over.
      prompt jsonb,
      est_input_tokens integer,
      max_output_tokens integer,
      -- The desk budget line: its unit ('money' | 'tokens') and the reserved upper bound in it (null: no budget).
      budget_unit text,
      budget_reserved bigint,
      -- The instant the reservation was judged at (its periods: the expert's day, the desk's month).
      reserved_at timestamptz,
      input_tokens integer,
      output_tokens integer,
      -- What the reported usage costs in money minor units (the budget line's actual is in the ledger).
      cost bigint,
      overrun boolean not null default false,
      provider_request_id text,
      finish_reason text,
      text text,
      truncated boolean not null default false,
      -- Grows with every edit; buttons carry it so an old version's Send cannot send a newer text unseen.
      version integer not null default 1,
      error text,
      editing_by bigint,
      editing_since timestamptz,
      approved_by bigint,
      sent_item_id bigint,
      sent_at timestamptz,
      discarded_by bigint,
      discarded_at timestamptz,
      reconciled_by bigint,
      reconciled_at timestamptz,
      reconciliation text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db)
  await sql`create index draft_consultation on draft (consultation_id, id)`.execute(db)
  // Drafts awaiting reconciliation, for the admins' list.
  await sql`create index draft_unknown on draft (created_at) where state = 'unknown'`.execute(db)
  // Every staff message in a topic asks whether its author is editing a draft: a tiny partial index answers it.
  await sql`create index draft_editing on draft (bot_id, editing_by) where state = 'editing'`.execute(db)

  await sql`
    create table draft_edit (
      bot_id bigint not null,
      chat_id bigint not null,
      message_id bigint not null,
      draft_id bigint not null references draft (id),
      version integer not null,
      created_at timestamptz not null default now(),
      primary key (bot_id, chat_id, message_id)
    )`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table draft_edit, draft`.execute(db)
}
