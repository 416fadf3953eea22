import { type Kysely, sql } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  // One row per message the bot has sent on behalf of a job, keyed by the job's idempotency key, written before the
  // job is marked done: a job that runs again finds it and sends nothing twice.
  await db.schema
    .createTable('outbound_message')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('bot_id', 'bigint', (c) => c.notNull())
    .addColumn('chat_id', 'bigint', (c) => c.notNull())
    .addColumn('message_id', 'bigint')
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('sent_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('outbound_message').execute()
}
