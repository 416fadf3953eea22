import { sql } from 'kysely'
import type { Trx } from './database'

/**
 * Telegram delivers updates at least once. A handler whose effects must happen once claims the update id in the
 * same transaction as those effects: a redelivery finds the row and does nothing, while a first attempt that failed
 * rolled the claim back with everything else, so Telegram's retry is processed normally.
 */
export async function claimUpdate(trx: Trx, botId: number, updateId: number): Promise<boolean> {
  const r = await sql<{ ok: number }>`
    insert into processed_update (bot_id, update_id) values (${botId}, ${updateId})
    on conflict do nothing returning 1 as ok`.execute(trx)
  return r.rows.length === 1
}
