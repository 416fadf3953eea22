import { type Kysely, sql } from 'kysely'

/**
 * The shared Telegram budget settles each send when Telegram has answered (src/telegram/budget.ts,
 * src/telegram/sql/tg_budget_settle.sql): a send's row carries the token of the call that took it, so that call can
 * move the row to the instant of the answer. tg_budget_take gains the token argument (a changed signature: the old
 * function is dropped here, the repeatable file creates the new one).
 *
 * Named after the newest migration before it (migrations apply in name order, and a database migrated past a name
 * refuses a migration that sorts earlier).
 *
 * Frozen in time: it never imports app code.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table tg_budget_send add column token uuid`.execute(db)
  await sql`drop function if exists tg_budget_take(text[], integer[], double precision[], integer[], text, text,
    integer, double precision)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function if exists tg_budget_settle(text[], uuid, double precision)`.execute(db)
  await sql`drop function if exists tg_budget_take(text[], integer[], double precision[], integer[], text, text,
    integer, double precision, uuid)`.execute(db)
  await sql`alter table tg_budget_send drop column token`.execute(db)
}
