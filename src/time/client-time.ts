import { formatHours, formatInstant } from './format'

/**
 * Time zones offered to clients (a short list: a button per zone fits a Telegram keyboard); a client can pick no
 * other. The same list is what an admin picks the desk's zone from in /settings; a desk zone outside it comes only
 * from the config file. Index = the callback's argument, so the list only grows at the end.
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
  zone: string,
): Record<string, string> {
  return {
    start: c.starts_at ? formatInstant(c.starts_at, zone, o.lang) : '—',
    end: c.access_until ? formatInstant(c.access_until, zone, o.lang) : '—',
    window: formatHours(o.window_minutes, o.lang),
    sla: formatHours(o.sla_minutes, o.lang),
  }
}
