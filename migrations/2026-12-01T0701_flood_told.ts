import { type Kysely, sql } from 'kysely'

/**
 * Anti-flood (src/routing/antiflood.ts): the client is told once per question that their next messages go to the
 * expert together. One row per told question; the notice is enqueued in the transaction that inserts it.
 *
 * Frozen in time: it never imports app code.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table desk_flood_told (
    consultation_id bigint not null,
    appeal_id bigint not null,
    told_at timestamptz not null default now(),
    primary key (consultation_id, appeal_id)
  )`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table desk_flood_told`.execute(db)
}
