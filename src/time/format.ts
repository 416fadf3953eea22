import { DateTime, IANAZone } from 'luxon'

/**
 * Dates shown to clients: in their time zone (their choice, else the desk's), in their language, with the zone
 * named so "10:00" is never ambiguous.
 */
export function formatInstant(at: Date, zone: string, lang: string): string {
  const z = IANAZone.isValidZone(zone) ? zone : 'UTC'
  const d = DateTime.fromJSDate(at, { zone: z }).setLocale(lang === 'ru' ? 'ru' : 'en-GB')
  return `${d.toFormat('d MMM yyyy, HH:mm')} (${zoneLabel(d)})`
}

export function formatDate(at: Date, zone: string, lang: string): string {
  const z = IANAZone.isValidZone(zone) ? zone : 'UTC'
  return DateTime.fromJSDate(at, { zone: z })
    .setLocale(lang === 'ru' ? 'ru' : 'en-GB')
    .toFormat('d MMM yyyy')
}

/** "Europe/Moscow, UTC+3". */
function zoneLabel(d: DateTime): string {
  const off = d.offset
  const sign = off < 0 ? '-' : '+'
  const h = Math.floor(Math.abs(off) / 60)
  const m = Math.abs(off) % 60
  return `${d.zoneName}, UTC${sign}${h}${m ? `:${String(m).padStart(2, '0')}` : ''}`
}

/** Hours as a short human duration: 24 -> "24 h" / "24 ч". */
export function formatHours(minutes: number, lang: string): string {
  const h = minutes / 60
  const n = Number.isInteger(h) ? String(h) : h.toFixed(1)
  return lang === 'ru' ? `${n} ч` : `${n} h`
}
