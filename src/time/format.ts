import { DateTime, IANAZone } from 'luxon'
import { timeWord } from './words'

/**
 * The zone a reader sees times in. `own`: the reader chose it (a client's pick, src/clients/clients.service.ts
 * clientZone), so a time in it names no zone. A plain zone id is a zone the reader may not live by (the desk's zone
 * shown to a client who picked none): a time in it says the zone in words.
 */
export interface ReaderZone {
  id: string
  own: boolean
}

export type Zone = string | ReaderZone

export function zoneId(zone: Zone): string {
  return typeof zone === 'string' ? zone : zone.id
}

/**
 * The zone staff read times in: the desk's, their own (they work its hours, and every staff text is in it), so a
 * time in it names no zone. /settings is where the desk's zone is said (st-hours).
 */
export function staffZone(desk: { schedule: { timezone: string } }): ReaderZone {
  return { id: desk.schedule.timezone, own: true }
}

/** Whether a time in `zone` names it: not when it is the reader's own. */
export function namesZone(zone: Zone): boolean {
  return typeof zone === 'string' || !zone.own
}

/**
 * Dates shown to people: in a zone (the client's choice, else the desk's), in their language, with the zone said
 * in words when it is not the reader's own ("14:00 Moscow time" / «14:00 по Москве»; a zone without a name in the
 * locale files: "UTC+5") so "10:00" is never ambiguous and no zone id reaches a reader. In the reader's own zone
 * (a ReaderZone with `own`: a client's pick, or the desk's zone for its staff, staffZone) the time stands alone:
 * "14:00". `zone: false` leaves the zone out whatever it is: for texts that say it once for all their dates
 * (/status, the transcript).
 */
export interface InstantOptions {
  zone?: boolean
}

export function formatInstant(at: Date, zone: Zone, lang: string, opts: InstantOptions = {}): string {
  const id = zoneId(zone)
  const z = IANAZone.isValidZone(id) ? id : 'UTC'
  const d = DateTime.fromJSDate(at, { zone: z }).setLocale(lang === 'ru' ? 'ru' : 'en-GB')
  const text = d.toFormat('d MMM yyyy, HH:mm')
  return opts.zone === false || !namesZone(zone) ? text : `${text} ${zoneIn(z, lang, at)}`
}

export function formatDate(at: Date, zone: Zone, lang: string): string {
  const id = zoneId(zone)
  const z = IANAZone.isValidZone(id) ? id : 'UTC'
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
