import { type Kysely, sql } from 'kysely'

/**
 * The durable intake (issue 17): every update is stored in inbox_update before Telegram is told it arrived, then
 * handled from there one chat at a time; app_instance carries each process's heartbeat (a dead worker's jobs are
 * released when its heartbeat stops, not when their expiry runs out); a card's pin becomes its own step.
 * Frozen in time: it never imports app code.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table inbox_update (
      bot_id bigint not null,
      update_id bigint not null,
      -- Updates with the same key are handled one at a time, in update_id order: a private chat, one forum topic of
      -- a group (topics are separate consultations), or the sender of an update without a chat.
      chat_key text not null,
      -- Taken first when several chats wait: 0 payments, 1 button presses, 2 everything else.
      priority smallint not null,
      -- The update's type (successful_payment, message, callback_query, ...), for logs and the staff's alerts.
      kind text not null,
      payload json not null,
      -- pending: to be handled; done: handled; parked: failed MAX_ATTEMPTS times with a non-transient error, kept
      -- for a person (never deleted by the app), the user and the staff told once.
      state text not null default 'pending' check (state in ('pending', 'done', 'parked')),
      received_at timestamptz not null default now(),
      -- Failed handlings that count towards parking (transient failures - database, network - do not).
      attempts integer not null default 0,
      -- Times taken by a processor, whatever the outcome.
      tries integer not null default 0,
      next_attempt_at timestamptz not null default '-infinity',
      -- The processor handling it now (a lease with a deadline, renewed while the handler runs; a dead holder's
      -- lease just runs out). No transaction is held open over a handler: handlers call Telegram.
      lease_owner text,
      lease_until timestamptz,
      last_error text,
      done_at timestamptz,
      primary key (bot_id, update_id)
    ) with (
      -- Room on each page for the lease updates to stay HOT (no new index entries).
      fillfactor = 80,
      -- A queue table: every update leaves a dead row version and a dead entry in inbox_update_pending behind, and
      -- the chat-head probes walk through them until a vacuum removes them. Vacuum after a thousand of them, not
      -- after 20% of a table that keeps every handled update.
      autovacuum_vacuum_scale_factor = 0,
      autovacuum_vacuum_threshold = 1000,
      autovacuum_vacuum_cost_delay = 0
    )`.execute(db)
  // The chats' queues: the oldest pending update of each key is its head, the only one that may be taken.
  await sql`
    create index inbox_update_pending on inbox_update (bot_id, chat_key, update_id)
      where state = 'pending'`.execute(db)
  // inbox_take, the processors' one statement, lives in src/intake/sql/inbox_take.sql (a repeatable file).

  await sql`
    create table app_instance (
      -- One row per running process (random id per start): its heartbeat and the pg-boss jobs it is working on.
      id uuid primary key,
      role text not null,
      host text not null,
      pid integer not null,
      started_at timestamptz not null default now(),
      beat_at timestamptz not null default now(),
      active_jobs uuid[] not null default '{}'
    )`.execute(db)

  // The card's pin as its own step: the pinned message is recorded after Telegram pinned it, so a worker that dies
  // between posting the card and pinning it leaves work the next lane run sees. Cards posted before this migration
  // count as pinned (re-pinning every live topic at once would spend the group's 20 messages a minute).
  await sql`alter table desk_route add column card_pinned_message_id bigint`.execute(db)
  await sql`update desk_route set card_pinned_message_id = card_message_id`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table desk_route drop column card_pinned_message_id`.execute(db)
  await sql`drop table app_instance`.execute(db)
  await sql`drop table inbox_update`.execute(db)
}
