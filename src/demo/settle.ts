import { sql } from 'kysely'
import type { BotApiStandIn } from '../../test/support/bot-api'
import type { Db } from '../db/database'
import { BOSS_SCHEMA } from '../jobs/jobs'

/** The desk is idle: no update waiting, no job due, nothing pending in a lane (three looks in a row). */
export async function settle(db: Db, tg: BotApiStandIn, botId: number, waitMs: number): Promise<void> {
  const deadline = Date.now() + waitMs
  let calm = 0
  while (calm < 3) {
    if (Date.now() > deadline) throw new Error('the desk did not settle in time')
    const jobs = await sql<{ n: number }>`select count(*)::int as n from ${sql.id(BOSS_SCHEMA, 'job')}
      where state in ('created', 'retry', 'active') and start_after <= now() and name not like '\\_\\_%'`.execute(
      db,
    )
    const lanes = await sql<{ n: number }>`select
        (select count(*) from desk_message where state = 'pending')
      + (select count(*) from desk_consultation where in_lease is not null or out_lease is not null
           or card_dirty or title_dirty)::int as n`.execute(db)
    const idle =
      jobs.rows[0]!.n === 0 && Number(lanes.rows[0]!.n) === 0 && tg.pendingUpdates(botId).length === 0
    calm = idle ? calm + 1 : 0
    await new Promise((r) => setTimeout(r, 40))
  }
}
