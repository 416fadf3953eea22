import { type Kysely, sql } from 'kysely'

/**
 * Retention (issue 18): indexes the pruning job (src/jobs/retention.ts) walks, oldest first, in bounded batches.
 * Frozen in time: it never imports app code.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index processed_update_age on processed_update (processed_at)`.execute(db)
  // Only handled updates are pruned; pending and parked ones are never in this index.
  await sql`create index inbox_update_done_age on inbox_update (done_at) where state = 'done'`.execute(db)
  await sql`create index outbound_message_age on outbound_message (sent_at)`.execute(db)
  await sql`create index conversation_state_age on conversation_state (updated_at)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index conversation_state_age`.execute(db)
  await sql`drop index outbound_message_age`.execute(db)
  await sql`drop index inbox_update_done_age`.execute(db)
  await sql`drop index processed_update_age`.execute(db)
}
