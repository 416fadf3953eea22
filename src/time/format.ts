import { DateTime, IANAZone } from 'luxon'
import { timeWord } from './words'

/**
 * Dates shown to people: in a zone (the client's choice, else the desk's), in their language, with the zone said
 * in words ("14:00 Moscow time" / «14:00 по Москве»; a zone without a name in the locale files: "UTC+5") so
 * "10:00" is never ambiguous and no zone id reaches a reader. `zone: false` leaves the zone out, for texts that say
 * it once for all their dates (a list, a card, a report).
 */
export interface InstantOptions {
  zone?: boolean
}

export function formatInstant(at: Date, zone: string, lang: string, opts: InstantOptions = {}): string {
  const z = IANAZone.isValidZone(zone) ? zone : 'UTC'
  const d = DateTime.fromJSDate(at, { zone: z }).setLocale(lang === 'ru' ? 'ru' : 'en-GB')
  const text = d.toFormat('d MMM yyyy, HH:mm')
  return opts.zone === false ? text : `${text} ${zoneIn(z, lang, at)}`
}

export function formatDate(at: Date, zone: string, lang: string): string {
  const z = IANAZone.isValidZone(zone) ? zone : 'UTC'
  return DateTime.fromJSDate(at, { zone: z })
    .setLocale(lang === 'ru' ? 'ru' : 'en-GB')
    .toFormat('d MMM yyyy')
}

/** A zone as a reader says it after a time: "Moscow time" / «по Москве»; "UTC+5" for a zone without a name. */
export function zoneIn(zone: string, lang: string, at: Date = new Date()): string {
  const offset = utcOffset(zone, at)
  return timeWord(lang, 'time-zone-in', { zone: zoneKey(zone), offset }, offset)
}

/** A zone as a name on its own: "Moscow" / «Москва»; "UTC+5" for a zone without a name. */
export function zoneName(zone: string, lang: string, at: Date = new Date()): string {
  const offset = utcOffset(zone, at)
  return timeWord(lang, 'tz-city', { zone: zoneKey(zone), name: offset }, offset)
}

/** Fluent selector keys cannot hold "/": "Europe/Moscow" -> "Europe-Moscow". */
function zoneKey(zone: string): string {
  return zone.replaceAll('/', '-')
}

/** "UTC+3", "UTC-4:30", "UTC". */
function utcOffset(zone: string, at: Date): string {
  const z = IANAZone.isValidZone(zone) ? zone : 'UTC'
  const off = DateTime.fromJSDate(at, { zone: z }).offset
  if (off === 0) return 'UTC'
  const sign = off < 0 ? '-' : '+'
  const h = Math.floor(Math.abs(off) / 60)
  const m = Math.abs(off) % 60
  return `UTC${sign}${h}${m ? `:${String(m).padStart(2, '0')}` : ''}`
}

/** Hours as a short human duration: 24 -> "24 h" / «24 ч». */
export function formatHours(minutes: number, lang: string): string {
  const h = minutes / 60
  const n = Number.isInteger(h) ? String(h) : h.toFixed(1)
  return timeWord(lang, 'time-hours', { n }, `${n} h`)
}
