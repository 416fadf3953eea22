import { type Kysely, sql } from 'kysely'

/**
 * desk_message.appeal_id loses its foreign key. Every client message joins the consultation's open appeal, and the
 * foreign-key check takes FOR KEY SHARE on that one appeal row in every admission: a lock written into the appeal's
 * tuple (and WAL) per message, on the hottest row of the consultation, for a reference that only the admission
 * writes, under the consultation's lock, to the appeal it has just read. (The consultation_id key stays: the
 * admission holds that row FOR UPDATE already, so its check costs no new lock.)
 *
 * Frozen in time: it never imports app code.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table desk_message drop constraint desk_message_appeal_id_fkey`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table desk_message add constraint desk_message_appeal_id_fkey
    foreign key (appeal_id) references desk_appeal (id)`.execute(db)
}
