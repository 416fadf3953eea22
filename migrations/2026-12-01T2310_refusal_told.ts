import { type Kysely, sql } from 'kysely'

/**
 * Refusals told (issue 23): a client's refused messages are answered once per chat, reason and consultation every
 * few minutes, not once per message (src/consultations/refusal-told.ts). One row per chat and refusal; the refusal's
 * transaction upserts it and tells only when the row was new or older than the quiet period, so two messages racing
 * tell once. Pruned a day after the last refusal (src/jobs/retention.ts), hence the index on told_at.
 *
 * Frozen in time: it never imports app code.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table refusal_told (
    bot_id bigint not null,
    chat_id bigint not null,
    topic text not null,
    told_at timestamptz not null default now(),
    primary key (bot_id, chat_id, topic)
  )`.execute(db)
  await sql`create index refusal_told_age on refusal_told (told_at)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table refusal_told`.execute(db)
}
