import { formatHours, formatInstant, type Zone } from './format'

/**
 * The default of the time zones a desk offers (rules.zones, src/config/rules.schema.ts; a desk changes its list in
 * /settings → Desk rules): a short list, a button per zone fits a Telegram keyboard; a client can pick no other, and
 * an admin picks the desk's zone from the desk's list. Index = the argument of the older `tz:set:<i>` buttons still
 * in chats, so this list only grows at the end.
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

/** Parameters of a window for the locale files: start, end, zone, length and SLA. */
export function windowParams(
  c: { starts_at: Date | null; access_until: Date | null },
  o: { window_minutes: number; sla_minutes: number; lang: string },
  zone: Zone,
): Record<string, string> {
  return {
    start: c.starts_at ? formatInstant(c.starts_at, zone, o.lang) : '—',
    end: c.access_until ? formatInstant(c.access_until, zone, o.lang) : '—',
    window: formatHours(o.window_minutes, o.lang),
    sla: formatHours(o.sla_minutes, o.lang),
  }
}
