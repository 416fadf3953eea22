import { type Kysely, sql } from 'kysely'

/**
 * Data rights (issue 18): when a client used /forget, their client row is anonymised and this instant kept, so the
 * desk can tell them (and an auditor) that it happened. Frozen in time: it never imports app code.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table client add column forgotten_at timestamptz`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table client drop column forgotten_at`.execute(db)
}
