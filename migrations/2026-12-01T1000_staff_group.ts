import { type Kysely, sql } from 'kysely'

/**
 * Several staff groups per desk (issue 16): the staff supergroup a consultation's topic lives in, chosen once at
 * activation (its owner's group, else the least loaded). Null: the desk's home group (staffChatId) — every
 * consultation activated before this column existed. Frozen in time: it never imports app code.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table consultation add column staff_chat_id bigint`.execute(db)
  // The least-loaded choice counts live consultations per group of a desk.
  await sql`create index consultation_live_group on consultation (bot_id, staff_chat_id) where state = 'active'`.execute(
    db,
  )
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index consultation_live_group`.execute(db)
  await sql`alter table consultation drop column staff_chat_id`.execute(db)
}
