import { type Kysely, sql } from 'kysely'

/**
 * The consultation desk: the desk's side of a consultation (client blocked, lane leases, pending topic work), forum
 * topic routes keyed (bot_id, support_chat_id, message_thread_id), appeals with their SLA, and the message map that
 * doubles as the ordered delivery queue of each consultation. Frozen in time: it never imports app code.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table desk_consultation (
      consultation_id bigint primary key references consultation (id),
      bot_id bigint not null,
      user_id bigint not null,
      -- The consultation should have a topic (set when it activates); a pending message also makes it need one.
      topic_wanted boolean not null default false,
      topics_created integer not null default 0,
      -- Work for the topic lane besides messages: re-render the pinned card, rename the topic.
      card_dirty boolean not null default false,
      title_dirty boolean not null default false,
      -- A send to the client failed with 403: set once (staff are told once), cleared when the client writes again.
      client_blocked_at timestamptz,
      -- Lane leases: one worker at a time writes into the topic (in) and into the client's chat (out), so copies
      -- keep their order and a topic is created at most once. A lease, not a transaction: no network call ever
      -- runs inside a transaction, and a crashed holder's lease simply runs out.
      in_lease text,
      in_lease_until timestamptz,
      out_lease text,
      out_lease_until timestamptz,
      created_at timestamptz not null default now()
    )`.execute(db)

  await sql`
    create table desk_route (
      bot_id bigint not null,
      support_chat_id bigint not null,
      message_thread_id bigint not null,
      consultation_id bigint not null references consultation (id),
      user_id bigint not null,
      -- active: where the consultation's topic is now; replaced: a topic that was deleted, closed or archived.
      state text not null default 'active' check (state in ('active', 'replaced')),
      topic_name text not null,
      card_message_id bigint,
      -- A recreated topic owes the staff a summary of the conversation so far (posted after the card).
      summary_pending boolean not null default false,
      replaced_reason text,
      replaced_at timestamptz,
      created_at timestamptz not null default now(),
      primary key (bot_id, support_chat_id, message_thread_id)
    )`.execute(db)
  // At most one live topic per consultation, whatever races.
  await sql`create unique index desk_route_active on desk_route (consultation_id) where state = 'active'`.execute(
    db,
  )

  await sql`
    create table desk_appeal (
      id bigint generated always as identity primary key,
      bot_id bigint not null,
      consultation_id bigint not null references consultation (id),
      -- 1, 2, 3 ... within the consultation.
      number integer not null,
      state text not null default 'open' check (state in ('open', 'answered', 'cancelled')),
      -- The ledger reservation holding one unit of the consultation's appeals.
      request_id text not null unique,
      -- The client's message that opened it (in the client's chat).
      opened_by_message_id bigint not null,
      accepted_at timestamptz not null,
      sla_minutes integer not null,
      -- accepted_at + sla_minutes business minutes of the desk's schedule.
      due_at timestamptz not null,
      first_response_at timestamptz,
      -- A staff user id, or the staff chat id for an anonymous admin.
      answered_by bigint,
      response_business_minutes integer,
      in_time boolean,
      -- Set by the SLA jobs when the due time passes unanswered.
      breached_at timestamptz,
      -- What the ledger said when the first answer committed the unit (committed, or e.g. released after a refund).
      ledger_outcome text,
      created_at timestamptz not null default now(),
      unique (consultation_id, number)
    )`.execute(db)
  await sql`create unique index desk_appeal_open on desk_appeal (consultation_id) where state = 'open'`.execute(
    db,
  )
  await sql`create index desk_appeal_due on desk_appeal (due_at) where state = 'open'`.execute(db)

  await sql`
    create table desk_message (
      id bigint generated always as identity primary key,
      bot_id bigint not null,
      consultation_id bigint references consultation (id),
      -- in: goes into the staff topic; out: goes to the client.
      direction text not null check (direction in ('in', 'out')),
      -- copy: a person's message copied with copyMessage(s); text: bot-authored text with entities; note: a locale
      -- key with parameters, rendered when sent.
      kind text not null check (kind in ('copy', 'text', 'note')),
      -- The source message (null for text/note).
      chat_id bigint,
      message_id bigint,
      from_id bigint,
      media_group_id text,
      -- The message the source replies to, in the source chat.
      reply_to_message_id bigint,
      appeal_id bigint references desk_appeal (id),
      content_type text not null,
      content jsonb,
      -- Edits: version grows with each real change of text/caption; the mirror has caught up at mirror_version.
      version integer not null default 0,
      mirror_version integer not null default 0,
      state text not null check (state in ('pending', 'sent', 'failed', 'blocked', 'refused', 'withheld')),
      refusal jsonb,
      -- Database clock at admission (checked_at): the instant that decides whether it was in the window.
      accepted_at timestamptz,
      mirror_chat_id bigint,
      mirror_thread_id bigint,
      mirror_message_id bigint,
      reacted boolean not null default false,
      attempts integer not null default 0,
      error text,
      -- Bot-authored items enqueued idempotently (e.g. one reminder per appeal).
      dedupe_key text,
      sent_at timestamptz,
      created_at timestamptz not null default clock_timestamp(),
      unique (bot_id, chat_id, message_id)
    )`.execute(db)
  // The lanes' queue: pending items of one consultation and direction, in admission order.
  await sql`create index desk_message_pending on desk_message (consultation_id, direction, id) where state = 'pending'`.execute(
    db,
  )
  // Reverse look-ups of the message map (a reply to, or an edit of, a copy).
  await sql`create index desk_message_mirror on desk_message (bot_id, mirror_chat_id, mirror_message_id) where mirror_message_id is not null`.execute(
    db,
  )
  await sql`create index desk_message_edits on desk_message (consultation_id, direction) where version > mirror_version`.execute(
    db,
  )
  await sql`create index desk_message_consultation on desk_message (consultation_id, id)`.execute(db)
  await sql`create unique index desk_message_dedupe on desk_message (dedupe_key) where dedupe_key is not null`.execute(
    db,
  )
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table desk_message, desk_appeal, desk_route, desk_consultation`.execute(db)
}
