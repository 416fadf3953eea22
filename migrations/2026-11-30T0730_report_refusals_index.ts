import { type Kysely, sql } from 'kysely'

/**
 * /report counts the ledger's refusals of a date range (src/reports/reports.repository.ts). Without an index that is
 * a scan of every reservation ever made; refusals are a small part of them, so a partial index on their creation
 * time costs nothing on the admission path (an admitted hold never enters it). Frozen in time: it never imports
 * app code.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index ledger_reservation_refused on ledger_reservation (created_at) where state = 'refused'`.execute(
    db,
  )
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index ledger_reservation_refused`.execute(db)
}
