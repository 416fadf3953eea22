import type { User } from 'grammy/types'
import { IANAZone } from 'luxon'
import type { Db, Trx } from '../db/database'
import { claimUpdate } from '../db/once'
import type { ReaderZone } from '../time/format'
import { findClientZone, updateClientZone, upsertClient } from './clients.repository'

/**
 * The zone a client sees times in: their choice (their own: a time in it names no zone), else the desk's (named in
 * words, src/time/format.ts).
 */
export async function clientZone(
  q: Db | Trx,
  desk: { botId: number; schedule: { timezone: string } },
  userId: number,
): Promise<ReaderZone> {
  const tz = await findClientZone(q, desk.botId, userId)
  return tz && IANAZone.isValidZone(tz) ? { id: tz, own: true } : { id: desk.schedule.timezone, own: false }
}

/** Records the client's choice of zone; false for a zone that is not an IANA zone or a client not on record. */
export async function setClientZone(
  q: Db | Trx,
  botId: number,
  userId: number,
  zone: string,
): Promise<boolean> {
  if (!IANAZone.isValidZone(zone)) return false
  return updateClientZone(q, botId, userId, zone)
}

/** The client picked a zone (their row is created if this is their first word to the bot). */
export async function chooseClientZone(
  q: Db | Trx,
  botId: number,
  from: User,
  zone: string,
): Promise<boolean> {
  await upsertClient(q, botId, from)
  return setClientZone(q, botId, from.id, zone)
}

/** /start: records who the client is, once per update; false for a redelivered /start (answered already). */
export function recordStart(db: Db, botId: number, updateId: number, from: User): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    if (!(await claimUpdate(trx, botId, updateId))) return false
    await upsertClient(trx, botId, from)
    return true
  })
}
