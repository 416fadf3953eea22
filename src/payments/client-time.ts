import { IANAZone } from 'luxon'
import type { DeskRuntime } from '../config/load'
import type { Db, Trx } from '../db/database'
import type { Consultation, Order } from '../orders/orders.repository'
import { formatHours, formatInstant } from './format'

/**
 * Time zones offered to clients (a short list: a button per zone fits a Telegram keyboard; anything else an admin
 * can set). Index = the callback's argument, so the list only grows at the end.
 */
export const OFFERED_ZONES = [
  'Europe/Kaliningrad',
  'Europe/Moscow',
  'Europe/Samara',
  'Asia/Yekaterinburg',
  'Asia/Omsk',
  'Asia/Novosibirsk',
  'Asia/Krasnoyarsk',
  'Asia/Irkutsk',
  'Asia/Vladivostok',
  'Europe/London',
  'Europe/Berlin',
  'Asia/Tbilisi',
  'Asia/Almaty',
  'Asia/Dubai',
  'America/New_York',
  'UTC',
] as const

/** The zone a client sees times in: their choice, else the desk's. */
export async function clientZone(q: Db | Trx, desk: DeskRuntime, userId: number): Promise<string> {
  const c = await q
    .selectFrom('client')
    .select('time_zone')
    .where('bot_id', '=', desk.botId)
    .where('user_id', '=', userId)
    .executeTakeFirst()
  const tz = c?.time_zone
  return tz && IANAZone.isValidZone(tz) ? tz : desk.schedule.timezone
}

export async function setClientZone(
  q: Db | Trx,
  botId: number,
  userId: number,
  zone: string,
): Promise<boolean> {
  if (!IANAZone.isValidZone(zone)) return false
  const r = await q
    .updateTable('client')
    .set({ time_zone: zone })
    .where('bot_id', '=', botId)
    .where('user_id', '=', userId)
    .executeTakeFirst()
  return Number(r.numUpdatedRows) > 0
}

/** Parameters of a window for the locale files: start, end, zone, length and SLA. */
export function windowParams(
  c: Pick<Consultation, 'starts_at' | 'access_until'>,
  o: Pick<Order, 'window_minutes' | 'sla_minutes' | 'lang'>,
  zone: string,
): Record<string, string> {
  return {
    start: c.starts_at ? formatInstant(c.starts_at, zone, o.lang) : '—',
    end: c.access_until ? formatInstant(c.access_until, zone, o.lang) : '—',
    window: formatHours(o.window_minutes, o.lang),
    sla: formatHours(o.sla_minutes, o.lang),
  }
}
