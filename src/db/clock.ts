import { sql } from 'kysely'
import type { Db, Trx } from './database'

/** The database clock, for checks that must use the instant after a lock was granted. */
export async function clockNow(q: Db | Trx): Promise<Date> {
  const r = await sql<{ now: Date }>`select clock_timestamp() as now`.execute(q)
  return r.rows[0]!.now
}
