// Over the house's ~400 lines on purpose: the squash of every migration before the first release, one statement
// per table with the comments that say why a column or an index is there. Later changes are new, small migrations.

import { type Kysely, sql } from 'kysely'

/**
 * The baseline: every table, index, constraint and row the app needs, as they stood when nothing had been released
 * yet (the seventeen migrations of 2026-11-30 squashed into one). The database functions are not here: each lives
 * in one .sql file next to the code that calls it (src/ledger/sql, src/consultations/sql, src/payments/sql) and is
 * applied by the migrator after the versioned migrations whenever its text changes (src/db/migrator.ts).
 *
 * Frozen in time: it never imports app code. A change to a table is a new migration after this one.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // Telegram update ids already handled, written in the same transaction as the update's effects (src/db/once.ts).
  await sql`
    create table processed_update (
      bot_id bigint not null,
      update_id bigint not null,
      processed_at timestamptz not null default now(),
      constraint processed_update_pk primary key (bot_id, update_id)
    )`.execute(db)

  await sql`
    create table client (
      bot_id bigint not null,
      user_id bigint not null,
      first_name text not null,
      last_name text,
      username text,
      language_code text,
      time_zone text,
      banned_at timestamptz,
      banned_by bigint,
      blocked_bot_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      constraint client_pk primary key (bot_id, user_id)
    )`.execute(db)

  // One row per message the bot has sent on behalf of a job, keyed by the job's idempotency key, written before the
  // job is marked done: a job that runs again finds it and sends nothing twice.
  await sql`
    create table outbound_message (
      key text primary key,
      bot_id bigint not null,
      chat_id bigint not null,
      message_id bigint,
      outcome text not null,
      sent_at timestamptz not null default now()
    )`.execute(db)

  await ledger(db)
  await orders(db)
  await desk(db)
  await drafts(db)
  await lifecycle(db)
}

/**
 * The quota ledger: accounts per (scope, subject, unit, period), reservations (one row per admission attempt, keyed
 * by the caller's request id), the journal of every counter change, idempotent grants, and concurrency slots.
 */
async function ledger(db: Kysely<any>): Promise<void> {
  await sql`
    create table ledger_account (
      id bigint generated always as identity primary key,
      scope text not null,
      subject text not null,
      unit text not null,
      period_start timestamptz not null,
      period_end timestamptz not null,
      time_zone text not null default 'UTC',
      granted bigint not null default 0,
      reserved bigint not null default 0,
      used bigint not null default 0,
      holds integer not null default 0,
      active boolean not null default true,
      rolled_over_to bigint references ledger_account (id),
      created_at timestamptz not null default now(),
      constraint ledger_account_key unique (scope, subject, unit, period_start),
      -- One CHECK, not five: PostgreSQL re-reads every CHECK expression at the start of each statement that
      -- writes the row, and accounts are written twice per admission.
      constraint ledger_account_sane
        check (period_end > period_start and granted >= 0 and reserved >= 0 and used >= 0 and holds >= 0)
    ) with (fillfactor = 80)
  `.execute(db)

  // Refused decisions are stored too (state 'refused'), so a replay returns the same numbers. One CHECK (see
  // ledger_account_sane); the first two states are written without a move, every later state records the state it
  // came from. `x = any ('{a,...}')` rather than `x in ('a', ...)`: PostgreSQL reads each CHECK back from its stored
  // text and plans it at the start of every statement that writes the table, and `in` is stored as an array built
  // from one constant node per element (rebuilt by every statement); the array literal is one constant.
  await sql`
    create table ledger_reservation (
      request_id text primary key,
      state text not null,
      account_ids bigint[] not null,
      amounts bigint[] not null,
      actuals bigint[],
      charged bigint[],
      overrun boolean not null default false,
      concurrency_key text,
      fingerprint text not null,
      decision jsonb not null,
      created_at timestamptz not null default now(),
      expires_at timestamptz,
      settled_at timestamptz,
      note text,
      prev_state text,
      constraint ledger_reservation_sane check (
        state = any ('{reserved,committed,released,expired,unknown,refused}'::text[])
        and (prev_state is null) = (state = any ('{reserved,refused}'::text[]))
        and cardinality(account_ids) = cardinality(amounts)
        and length(request_id) between 1 and 200)
    )
  `.execute(db)
  // The sweeper's scan: only holds still in state reserved, oldest deadline first.
  await sql`create index ledger_reservation_due on ledger_reservation (expires_at) where state = 'reserved'`.execute(
    db,
  )
  // Holds awaiting reconciliation (outcome unknown), for a person or a reconciliation job.
  await sql`create index ledger_reservation_unknown on ledger_reservation (created_at) where state = 'unknown'`.execute(
    db,
  )
  // /report counts the refusals of a date range (src/reports/reports.repository.ts): without an index a scan of
  // every reservation ever made. Refusals are a small part of them, and an admitted hold never enters this index.
  await sql`create index ledger_reservation_refused on ledger_reservation (created_at) where state = 'refused'`.execute(
    db,
  )

  await sql`
    create table ledger_journal (
      id bigint generated always as identity primary key,
      account_id bigint not null references ledger_account (id),
      request_id text,
      reason text not null,
      d_granted bigint not null default 0,
      d_reserved bigint not null default 0,
      d_used bigint not null default 0,
      note text,
      created_at timestamptz not null default now(),
      constraint ledger_journal_reason
        check (reason = any ('{grant,reserve,commit,release,expire,adjust,rollover}'::text[]))
    )
  `.execute(db)
  await sql`create index ledger_journal_account on ledger_journal (account_id)`.execute(db)

  await sql`
    create table ledger_grant (
      request_id text primary key,
      account_id bigint not null references ledger_account (id),
      amount bigint not null,
      carried bigint not null default 0,
      carried_from bigint references ledger_account (id),
      fingerprint text not null,
      created_at timestamptz not null default now(),
      constraint ledger_grant_amount check (amount >= 0),
      constraint ledger_grant_carried check (carried >= 0)
    )
  `.execute(db)

  await sql`
    create table ledger_slot (
      key text primary key,
      active integer not null default 0,
      constraint ledger_slot_active check (active >= 0)
    ) with (fillfactor = 80)
  `.execute(db)

  // The allowed moves of a reservation, the one table every settling function checks before it writes. Read without
  // a lock (a foreign key to it would take FOR KEY SHARE on these few rows from every commit: a contention hot spot).
  await sql`
    create table ledger_transition (
      from_state text not null,
      to_state text not null,
      primary key (from_state, to_state)
    )
  `.execute(db)
  await sql`
    insert into ledger_transition (from_state, to_state) values
      ('reserved', 'committed'),
      ('reserved', 'released'),
      ('reserved', 'expired'),
      ('reserved', 'unknown'),
      ('unknown', 'committed'),
      ('unknown', 'released')
  `.execute(db)
}

/** Orders (a tariff snapshot), payments and refunds, consultations, the audit log, the dispute desk. */
async function orders(db: Kysely<any>): Promise<void> {
  await sql`
    create table orders (
      id bigint generated always as identity primary key,
      bot_id bigint not null,
      user_id bigint not null,
      -- The tariff as it was when the order was created; a later config change never alters an order.
      tariff_code text not null,
      title text not null,
      price_stars integer not null check (price_stars > 0),
      window_minutes integer not null check (window_minutes > 0),
      appeals integer not null check (appeals > 0),
      drafts integer not null default 0 check (drafts >= 0),
      sla_minutes integer not null check (sla_minutes > 0),
      start_mode text not null check (start_mode in ('immediate', 'scheduled', 'on_request')),
      start_within_days integer,
      breach_policy jsonb not null default '{"kind":"none"}',
      terms_version text not null,
      lang text not null,
      -- scheduled: the chosen slot; immediate/on_request: null.
      slot_start timestamptz,
      state text not null default 'created'
        check (state in ('created', 'reserved', 'paid_waiting', 'active', 'closed', 'cancelled', 'refunded')),
      -- The capacity hold taken at pre-checkout (a ledger reservation) and when it lapses.
      hold_request_id text,
      hold_expires_at timestamptz,
      -- Paid after the hold lapsed and no capacity was left: waits for a start date chosen with the client.
      needs_start_date boolean not null default false,
      invoice_message_id bigint,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      -- The capacity account the order's start takes from: 'day:<tariff>:<YYYY-MM-DD>' or 'slot:<tariff>:<epoch ms>'.
      capacity_key text,
      paid_at timestamptz,
      -- on_request: the client may press Start until then.
      start_by timestamptz,
      cancel_reason text
    )`.execute(db)
  await sql`create index orders_user_idx on orders (bot_id, user_id, created_at desc)`.execute(db)
  await sql`create index orders_hold_idx on orders (hold_expires_at) where state = 'reserved'`.execute(db)
  await sql`create index orders_created_idx on orders (created_at) where state = 'created'`.execute(db)

  // A payment whose payload names no order of this desk is still recorded (Telegram took the Stars): 'unmatched',
  // order_id null, queued for an admin like an overpayment (a second, different payment for an order already paid).
  await sql`
    create table payment (
      id bigint generated always as identity primary key,
      bot_id bigint not null,
      order_id bigint references orders (id),
      user_id bigint not null,
      telegram_payment_charge_id text not null,
      provider_payment_charge_id text,
      currency text not null,
      total_amount integer not null,
      kind text not null check (kind in ('payment', 'overpayment', 'unmatched')),
      refunded_at timestamptz,
      refunded_by bigint,
      created_at timestamptz not null default now(),
      invoice_payload text not null default '',
      -- A refund call in flight: set by the admin action that calls refundStarPayment, so a second press waits for
      -- the first instead of calling Telegram twice. Cleared when the call fails; stale after a minute (crash).
      refund_started_at timestamptz,
      refund_error text,
      -- admin | telegram (a refunded_payment message: refunded elsewhere) | dispute
      refund_source text,
      unique (bot_id, telegram_payment_charge_id),
      constraint payment_order_check check ((kind = 'unmatched') = (order_id is null))
    )`.execute(db)
  await sql`create index payment_order_idx on payment (order_id)`.execute(db)
  await sql`create index payment_user_idx on payment (bot_id, user_id, created_at desc)`.execute(db)
  await sql`create index payment_queue_idx on payment (bot_id) where kind <> 'payment' and refunded_at is null`.execute(
    db,
  )

  await sql`
    create table consultation (
      id bigint generated always as identity primary key,
      bot_id bigint not null,
      order_id bigint not null unique references orders (id),
      user_id bigint not null,
      state text not null default 'waiting' check (state in ('waiting', 'active', 'closed', 'revoked')),
      -- The access window: a message is accepted iff starts_at <= now() < access_until (database clock).
      starts_at timestamptz,
      access_until timestamptz,
      check (access_until is null or access_until > starts_at),
      revoked_at timestamptz,
      closed_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      -- What a refund does to questions already accepted: 'deliver' (answers still delivered) or 'stop'.
      refund_policy text
    )`.execute(db)
  await sql`create index consultation_user_idx on consultation (bot_id, user_id, created_at desc)`.execute(db)

  await sql`
    create table audit_log (
      id bigint generated always as identity primary key,
      bot_id bigint not null,
      -- Telegram user id of the person who acted; null for the system.
      actor_id bigint,
      action text not null,
      subject_type text not null,
      subject_id text not null,
      details jsonb not null default '{}',
      at timestamptz not null default now()
    )`.execute(db)
  await sql`create index audit_subject_idx on audit_log (subject_type, subject_id)`.execute(db)

  await sql`
    create table dispute (
      -- The ticket number the client sees.
      id bigint generated always as identity primary key,
      bot_id bigint not null,
      user_id bigint not null,
      payment_id bigint references payment (id),
      telegram_payment_charge_id text,
      order_id bigint references orders (id),
      lang text not null,
      reason text not null,
      state text not null default 'open' check (state in ('open', 'refunded', 'declined', 'closed')),
      -- The staff topic; null until the topic job has created it.
      thread_id bigint,
      -- An admin pressed "Decline": their next message in the topic is the reason.
      decline_pending_by bigint,
      resolution text,
      resolved_by bigint,
      resolved_at timestamptz,
      -- What the client was promised: an answer by then (business time).
      reply_by timestamptz not null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db)
  // One open ticket per client and payment (null payment = "not in the list"): a replayed conversation step or a
  // second /paysupport finds the open one instead of opening another.
  await sql`create unique index dispute_open_idx on dispute (bot_id, user_id, coalesce(payment_id, 0)) where state = 'open'`.execute(
    db,
  )
  await sql`create unique index dispute_thread_idx on dispute (bot_id, thread_id) where thread_id is not null`.execute(
    db,
  )

  // @grammyjs/conversations replay state per private chat; nothing of a conversation lives in memory.
  await sql`
    create table conversation_state (
      bot_id bigint not null,
      chat_id bigint not null,
      data jsonb not null,
      updated_at timestamptz not null default now(),
      primary key (bot_id, chat_id)
    )`.execute(db)
}

/**
 * The consultation desk: the desk's side of a consultation (client blocked, lane leases, pending topic work), forum
 * topic routes keyed (bot_id, support_chat_id, message_thread_id), appeals with their SLA, and the message map that
 * doubles as the ordered delivery queue of each consultation.
 */
async function desk(db: Kysely<any>): Promise<void> {
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
      created_at timestamptz not null default now(),
      -- A topic-lane job is queued and has not started draining: an admission then needs no new job (the lane
      -- clears the flag, under this row's lock, before it reads what is pending; see desk_admit.sql).
      in_queued boolean not null default false
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

  // appeal_id has no foreign key: every client message joins the consultation's open appeal, and the check would
  // take FOR KEY SHARE on that one appeal row in every admission (a lock written into the hottest row's tuple and
  // WAL per message) for a reference only the admission writes, under the consultation's lock, to the appeal it has
  // just read. The consultation_id key stays: the admission holds that row FOR UPDATE already.
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
      appeal_id bigint,
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

/**
 * AI drafts for experts: one row per draft request, keyed by its ledger request id (derived from the /draft message
 * or the button press, so a redelivered update or a double tap finds the row and does nothing), and the expert
 * messages that were taken as an edited version of a draft (so a redelivered edit is never relayed to the client).
 */
async function drafts(db: Kysely<any>): Promise<void> {
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

/**
 * SLA jobs and the window lifecycle: what the jobs did, per appeal and per consultation, so each thing they do
 * happens once however often a job runs. Every "once" is a conditional UPDATE on these rows (or on the state the
 * desk already keeps: desk_appeal.breached_at, consultation.state); notifications are deduplicated again by their
 * key in outbound_message.
 */
async function lifecycle(db: Kysely<any>): Promise<void> {
  await sql`
    create table appeal_sla (
      appeal_id bigint primary key references desk_appeal (id),
      bot_id bigint not null,
      consultation_id bigint not null references consultation (id),
      -- The reminder was written into the topic.
      reminded_at timestamptz,
      -- The breach policy as the order snapshotted it, and what applying it gave (set once, with breached_at).
      breach_policy jsonb,
      breach_outcome text check (breach_outcome in ('none', 'extended', 'extra_appeal', 'skipped')),
      breach_detail jsonb,
      -- Never answered by the end of the consultation: admins were asked for a refund decision.
      refund_flagged_at timestamptz,
      -- The client had blocked the bot when a job for this appeal ran: noted, nothing paused.
      client_blocked_at timestamptz,
      created_at timestamptz not null default now()
    )`.execute(db)
  await sql`create index appeal_sla_consultation on appeal_sla (consultation_id)`.execute(db)

  await sql`
    create table consultation_lifecycle (
      consultation_id bigint primary key references consultation (id),
      bot_id bigint not null,
      -- The access_until the "closes soon" notice was written for (an extension moves the window: a new notice).
      closing_soon_for timestamptz,
      -- The window-end job closed the consultation (closed_at on consultation is the window's end).
      window_closed_at timestamptz,
      -- The staff topic was closed (every accepted appeal answered).
      topic_closed_at timestamptz,
      created_at timestamptz not null default now()
    )`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    drop table if exists consultation_lifecycle, appeal_sla, draft_edit, draft, desk_message, desk_appeal, desk_route,
      desk_consultation, conversation_state, dispute, audit_log, consultation, payment, orders, ledger_transition,
      ledger_slot, ledger_grant, ledger_journal, ledger_reservation, ledger_account, outbound_message, client,
      processed_update`.execute(db)
}
