import { type Kysely, sql } from 'kysely'

/**
 * /mydata's per-client limit (issue 23): when a client last had an export queued, one row per desk and client. The
 * request takes the row in one upsert that only moves the time forward once the interval has passed, so two
 * requests at once queue one export. Frozen in time: it never imports app code.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table data_export_request (
    bot_id bigint not null,
    user_id bigint not null,
    requested_at timestamptz not null,
    primary key (bot_id, user_id)
  )`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table data_export_request`.execute(db)
}
