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
    ) with (fillfactor = 80)`.execute(db)
  // The chats' queues: the oldest pending update of each key is its head, the only one that may be taken.
  await sql`
    create index inbox_update_pending on inbox_update (bot_id, chat_key, update_id)
      where state = 'pending'`.execute(db)

  // Takes work for a processor: first marks what it finished as done, then (a second statement, so it sees those
  // marks) leases up to p_limit heads - the oldest pending update of chats whose head is neither leased by a live
  // holder nor waiting out a backoff - payments first. SKIP LOCKED: two processors never take the same head, and
  // a chat's next update is no head while the one before it is pending, so one chat is never handled twice at once.
  // Marks and leases are bookkeeping: losing the last ones in a server crash makes an update handled again, which
  // every handler tolerates (that is why the processor may commit them asynchronously).
  await sql`
    create function inbox_take(
      p_owner text, p_done_bots bigint[], p_done_ids bigint[], p_bots bigint[], p_limit integer,
      p_lease_seconds integer)
    returns table (bot_id bigint, update_id bigint, payload json, kind text, attempts integer, tries integer,
                   received_at timestamptz)
    language plpgsql as $$
    #variable_conflict use_column
    begin
      if cardinality(p_done_ids) > 0 then
        update inbox_update u
          set state = 'done', done_at = clock_timestamp(), lease_owner = null, lease_until = null
          from unnest(p_done_bots, p_done_ids) as d (b, i)
          where u.bot_id = d.b and u.update_id = d.i and u.lease_owner = p_owner and u.state = 'pending';
      end if;
      if p_limit <= 0 then
        return;
      end if;
      return query
        with heads as (
          select distinct on (h.bot_id, h.chat_key) h.bot_id, h.update_id
            from inbox_update h
            where h.state = 'pending' and h.bot_id = any (p_bots)
            order by h.bot_id, h.chat_key, h.update_id
        ), picked as (
          select c.bot_id, c.update_id
            from inbox_update c join heads on heads.bot_id = c.bot_id and heads.update_id = c.update_id
            where c.state = 'pending' and c.next_attempt_at <= clock_timestamp()
              and (c.lease_until is null or c.lease_until < clock_timestamp())
            order by c.priority, c.received_at, c.update_id
            limit p_limit
            for update of c skip locked
        )
        update inbox_update u
          set lease_owner = p_owner, lease_until = clock_timestamp() + make_interval(secs => p_lease_seconds),
              tries = u.tries + 1
          from picked
          where u.bot_id = picked.bot_id and u.update_id = picked.update_id
          returning u.bot_id, u.update_id, u.payload, u.kind, u.attempts, u.tries, u.received_at;
    end $$`.execute(db)

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
  await sql`drop function inbox_take`.execute(db)
  await sql`drop table inbox_update`.execute(db)
}
