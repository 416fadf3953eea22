import { type Kysely, sql } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('processed_update')
    .addColumn('bot_id', 'bigint', (c) => c.notNull())
    .addColumn('update_id', 'bigint', (c) => c.notNull())
    .addColumn('processed_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('processed_update_pk', ['bot_id', 'update_id'])
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('processed_update').execute()
}
