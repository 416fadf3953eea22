import { type Kysely, sql } from 'kysely'

/**
 * Telegram's limits as one budget shared by every process of a deployment (src/telegram/budget.ts, the function
 * src/telegram/sql/tg_budget_take.sql):
 * - tg_budget: one row per budget key ('bot:<id>', 'chat:<bot>:<chat>'), locked by each take, with the time until
 *   which Telegram told us to wait (a 429's retry_after, for every process);
 * - tg_budget_send: the sends of the current window per key (a sliding window: rows older than it are deleted by
 *   the next take of the same key);
 * - tg_budget_waiter: who waits for a group's budget, for priorities and round robin across lanes.
 *
 * Frozen in time: it never imports app code.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table tg_budget (
    key text primary key,
    blocked_until timestamptz not null default '-infinity'
  )`.execute(db)
  await sql`create table tg_budget_send (
    key text not null,
    at timestamptz not null,
    n integer not null
  ) with (autovacuum_vacuum_threshold = 1000, autovacuum_vacuum_scale_factor = 0)`.execute(db)
  await sql`create index tg_budget_send_key_at on tg_budget_send (key, at)`.execute(db)
  await sql`create table tg_budget_waiter (
    key text not null,
    lane text not null,
    priority integer not null,
    waiting boolean not null,
    since timestamptz not null,
    seen_at timestamptz not null,
    served_at timestamptz,
    primary key (key, lane)
  )`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table tg_budget_waiter`.execute(db)
  await sql`drop table tg_budget_send`.execute(db)
  await sql`drop table tg_budget`.execute(db)
}
