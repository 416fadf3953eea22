import { type Kysely, sql } from 'kysely'

/**
 * Private alerts to a desk's owner and admins (issue 25): a /paysupport ticket opened, a parked update, a dead
 * letter, a reconciliation mismatch. One row per desk and alert key, inserted in the transaction that enqueues the
 * messages: a second detection of the same event finds the row and tells nobody again.
 *
 * Frozen in time: it never imports app code.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table private_alert (
    bot_id bigint not null,
    alert_key text not null check (length(alert_key) between 1 and 200),
    created_at timestamptz not null default now(),
    primary key (bot_id, alert_key)
  )`.execute(db)
  // Pruned after 30 days (src/jobs/retention.ts), by age.
  await sql`create index private_alert_created on private_alert (created_at)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table private_alert`.execute(db)
}
