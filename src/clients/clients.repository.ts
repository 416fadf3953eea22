import type { User } from 'grammy/types'
import { sql } from 'kysely'
import type { Db, Trx } from '../db/database'

/** Records (or refreshes) who the client is; a client who writes again has evidently unblocked the bot. */
export async function upsertClient(trx: Db | Trx, botId: number, from: User): Promise<void> {
  await trx
    .insertInto('client')
    .values({
      bot_id: botId,
      user_id: from.id,
      first_name: from.first_name,
      last_name: from.last_name ?? null,
      username: from.username ?? null,
      language_code: from.language_code ?? null,
    })
    .onConflict((oc) =>
      oc.columns(['bot_id', 'user_id']).doUpdateSet({
        first_name: from.first_name,
        last_name: from.last_name ?? null,
        username: from.username ?? null,
        language_code: from.language_code ?? null,
        blocked_bot_at: null,
        updated_at: sql`now()`,
      }),
    )
    .execute()
}

export async function findClient(trx: Db | Trx, botId: number, userId: number) {
  return trx
    .selectFrom('client')
    .selectAll()
    .where('bot_id', '=', botId)
    .where('user_id', '=', userId)
    .executeTakeFirst()
}

export async function markBlocked(trx: Db | Trx, botId: number, userId: number): Promise<boolean> {
  const r = await trx
    .updateTable('client')
    .set({ blocked_bot_at: sql`now()` })
    .where('bot_id', '=', botId)
    .where('user_id', '=', userId)
    .where('blocked_bot_at', 'is', null)
    .executeTakeFirst()
  return Number(r.numUpdatedRows) > 0
}

/** The time zone the client chose (null: none chosen). */
export async function findClientZone(q: Db | Trx, botId: number, userId: number): Promise<string | null> {
  return (await findClient(q, botId, userId))?.time_zone ?? null
}

export async function updateClientZone(
  q: Db | Trx,
  botId: number,
  userId: number,
  zone: string,
): Promise<boolean> {
  const r = await q
    .updateTable('client')
    .set({ time_zone: zone })
    .where('bot_id', '=', botId)
    .where('user_id', '=', userId)
    .executeTakeFirst()
  return Number(r.numUpdatedRows) > 0
}

export async function isClientBanned(q: Db | Trx, botId: number, userId: number): Promise<boolean> {
  return Boolean((await findClient(q, botId, userId))?.banned_at)
}
