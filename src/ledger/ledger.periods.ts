import { DateTime, IANAZone } from 'luxon'

/** A half-open interval [start, end). */
export interface Period {
  start: Date
  end: Date
}

function zoneOf(timeZone: string): IANAZone {
  const zone = IANAZone.create(timeZone)
  if (!zone.isValid) throw new RangeError(`not an IANA time zone: ${timeZone}`)
  return zone
}

/**
 * The calendar month containing `at`, in the desk's time zone: from local midnight of the 1st to local midnight of
 * the next 1st (so a Moscow month starts at 21:00 UTC on the last day of the previous month).
 */
export function monthlyPeriod(at: Date, timeZone: string): Period {
  const local = DateTime.fromJSDate(at, { zone: zoneOf(timeZone) }).startOf('month')
  return { start: local.toJSDate(), end: local.plus({ months: 1 }).toJSDate() }
}

/** The local calendar day containing `at` (e.g. an expert's daily cap). DST days are 23 or 25 hours long. */
export function dailyPeriod(at: Date, timeZone: string): Period {
  const local = DateTime.fromJSDate(at, { zone: zoneOf(timeZone) }).startOf('day')
  return { start: local.toJSDate(), end: local.plus({ days: 1 }).toJSDate() }
}

/** The monthly period right after `period` (whose start must be a local month start in that zone). */
export function nextMonthlyPeriod(period: Period, timeZone: string): Period {
  return monthlyPeriod(period.end, timeZone)
}

const isoCache = new Map<string, string>()

/**
 * An instant as ISO 8601 in the given zone, e.g. 2026-12-14T00:00:00.000+03:00. Memoized: every decision reports
 * its period's end, and the same few period ends come up again and again.
 */
export function isoInZone(at: Date, timeZone: string): string {
  const key = `${at.getTime()} ${timeZone}`
  let iso = isoCache.get(key)
  if (iso === undefined) {
    const dt = DateTime.fromJSDate(at, { zone: timeZone })
    iso = (dt.isValid ? dt : DateTime.fromJSDate(at, { zone: 'UTC' })).toISO()!
    if (isoCache.size >= 10_000) isoCache.clear()
    isoCache.set(key, iso)
  }
  return iso
}
