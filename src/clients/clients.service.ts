import { IANAZone } from 'luxon'
import type { Db, Trx } from '../db/database'
import { findClientZone, updateClientZone } from './clients.repository'

/** The zone a client sees times in: their choice, else the desk's. */
export async function clientZone(
  q: Db | Trx,
  desk: { botId: number; schedule: { timezone: string } },
  userId: number,
): Promise<string> {
  const tz = await findClientZone(q, desk.botId, userId)
  return tz && IANAZone.isValidZone(tz) ? tz : desk.schedule.timezone
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
