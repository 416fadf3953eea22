/**
 * Business time: when a desk is open and how much of its working time lies between two instants.
 *
 * A pure module over the desk's `schedule` config (time zone, weekly hours, holidays, extra working days). Compile
 * the config once with {@link compileSchedule}; every other function takes the compiled {@link BusinessSchedule} and
 * plain `Date` instants and never reads the clock. (About 430 lines, a third of them this model's explanation: one
 * compiled schedule serves every function below.)
 *
 * ## Model
 *
 * Every local calendar date D of the desk's time zone has a list of *working intervals*, given in wall-clock time:
 * - if D is a holiday: none;
 * - else if D is an extra working day: the intervals listed for it (whatever the weekday);
 * - else: the weekly intervals of D's weekday.
 *
 * An interval "HH:MM-HH:MM" whose end is before its start spans midnight and **belongs to the date it starts on**:
 * "Fri 22:00-02:00" is Friday's interval and runs into Saturday. "24:00" as an end means the following midnight, so
 * "00:00-24:00" is the whole day. Overlapping or touching intervals (also across midnight) are simply merged.
 *
 * Holidays close the **whole local date**: a holiday's own intervals are cancelled entirely (including the part of an
 * overnight interval that runs past the holiday's midnight, since that shift belongs to the holiday), and an
 * overnight interval of the day before is cut at the holiday's 00:00. So no working time ever falls on a holiday's
 * date, and a holiday never extends into the next day beyond cancelling its own shifts.
 *
 * A date may not be both a holiday and an extra working day (compiling throws): the config would be ambiguous.
 *
 * ## Time zones and DST
 *
 * Hours are local wall-clock hours: "10:00-18:00" is 10:00-18:00 local on both sides of a DST change, so a 23- or
 * 25-hour day still has 8 working hours. Business time itself is real elapsed time between instants, so a
 * "00:00-24:00" day has 23 working hours on the spring-forward date and 25 on the fall-back date. Wall times are
 * resolved from the zone's offsets alone, never from the current date (see `wallToMs`): a time that does not exist (in
 * the spring gap) is shifted forward by the gap ("02:30" becomes 03:30 in Europe/Berlin), and an ambiguous time (in
 * the autumn overlap, one hour in Berlin, 30 minutes on Lord Howe) resolves to the later, standard-time occurrence.
 * An interval that becomes empty after this resolution is dropped.
 *
 * ## Semantics of the operations
 *
 * Intervals are half-open: the desk is open at the opening instant and closed at the closing instant (10:00 open,
 * 18:00 closed). Adding business time to an instant outside hours starts the clock at the next opening, and the
 * result may be exactly a closing instant (Friday 17:00 + 1 h = Friday 18:00, not Monday 10:00). Adding 0 gives the
 * next opening (the instant itself when open).
 *
 * Searching forward for working time stops with a {@link NoBusinessTimeError} after {@link MAX_IDLE_DAYS} consecutive
 * dates without any: a schedule that is never open must not loop forever.
 *
 * ## Performance
 *
 * Walks interval by interval, never minute by minute. A date's intervals are converted to instants once and memoized
 * in the compiled schedule (a bounded cache), so a call costs a few map look-ups plus a luxon conversion per date not
 * seen before.
 *
 * One file, a little over the house's ~400 lines: the queries below share the model's private helpers (local day
 * numbers, the span cache); split, those would have to be exported.
 */
import { DateTime, IANAZone } from 'luxon'

/** Luxon weekday 1..7 maps to index 0..6. */
export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const

export type Weekday = (typeof WEEKDAYS)[number]

/** How many consecutive dates without working time a forward search scans before giving up. */
export const MAX_IDLE_DAYS = 400

/** The schedule config is not usable (bad zone, interval, date, or a date both holiday and extra working day). */
export class ScheduleConfigError extends Error {
  override name = 'ScheduleConfigError'
}

/** A forward search found no working time within {@link MAX_IDLE_DAYS} days (e.g. an empty schedule). */
export class NoBusinessTimeError extends Error {
  override name = 'NoBusinessTimeError'
}

/** A configured interval as minutes after the local midnight of the date it belongs to; `end` may exceed 1440. */
interface MinuteInterval {
  readonly start: number
  readonly end: number
  /** The config text, for display. */
  readonly text: string
}

/** A working interval as epoch milliseconds, half-open [start, end). */
type Span = readonly [start: number, end: number]

/** A compiled schedule. Treat it as opaque; build it with {@link compileSchedule}. */
export interface BusinessSchedule {
  readonly timezone: string
  /** @internal */
  readonly zone: IANAZone
  /** @internal Weekly intervals, index 0 = Monday. */
  readonly weekly: readonly (readonly MinuteInterval[])[]
  /** @internal ISO dates. */
  readonly holidays: ReadonlySet<string>
  /** @internal ISO date -> its intervals. */
  readonly extra: ReadonlyMap<string, readonly MinuteInterval[]>
  /** @internal Memoized working spans per local date (days since 1970-01-01). */
  readonly cache: Map<number, readonly Span[]>
}

/** A working interval as instants, half-open: open at `start`, closed at `end`. */
export interface OpenInterval {
  start: Date
  end: Date
}

/** What a local date's hours are, for showing the schedule to clients. */
export interface DayHours {
  /** Local date, "YYYY-MM-DD". */
  date: string
  weekday: Weekday
  /** `holiday`: closed by the holiday list; `extra`: an extra working day; `regular`: the weekly hours. */
  kind: 'regular' | 'holiday' | 'extra'
  /** Wall-clock intervals as configured; `overnight` when the interval ends on the next date. */
  intervals: { start: string; end: string; overnight: boolean }[]
}

/**
 * A desk's `schedule` as the config file gives it (src/config/schema.ts validates it with compileSchedule, so the
 * shape is declared here, on the floor below the config); holidays and extra working days may be left out.
 */
export interface ScheduleInput {
  readonly timezone: string
  readonly weekly: Readonly<Partial<Record<Weekday, readonly string[]>>>
  readonly holidays?: readonly string[]
  readonly extraWorkingDays?: Readonly<Record<string, readonly string[]>>
}

const DAY_MS = 86_400_000
const MINUTE_MS = 60_000
const CACHE_LIMIT = 2048

// ---------------------------------------------------------------------------------------------------------------
// Compiling

function parseClock(s: string, what: string): number {
  const m = /^(\d{2}):(\d{2})$/.exec(s)
  if (!m) throw new ScheduleConfigError(`${what}: expected "HH:MM-HH:MM"`)
  const h = Number(m[1])
  const min = Number(m[2])
  if (min > 59 || h > 24 || (h === 24 && min !== 0))
    throw new ScheduleConfigError(`${what}: "${s}" is not a time of day (00:00..24:00)`)
  return h * 60 + min
}

function parseInterval(text: string, what: string): MinuteInterval {
  const parts = text.split('-')
  if (parts.length !== 2) throw new ScheduleConfigError(`${what}: expected "HH:MM-HH:MM", got "${text}"`)
  const start = parseClock(parts[0]!, what)
  let end = parseClock(parts[1]!, what)
  if (start === 1440) throw new ScheduleConfigError(`${what}: an interval cannot start at 24:00 ("${text}")`)
  if (end === start) throw new ScheduleConfigError(`${what}: empty interval "${text}"`)
  if (end < start) end += 1440 // spans midnight; belongs to the date it starts on
  return { start, end, text }
}

function checkDate(iso: string, what: string): void {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(iso) || !DateTime.fromISO(iso, { zone: 'utc' }).isValid)
    throw new ScheduleConfigError(`${what}: "${iso}" is not a date "YYYY-MM-DD"`)
}

/**
 * Validates the schedule config and precomputes what the queries need. Throws {@link ScheduleConfigError} with a
 * one-line message naming the offending entry.
 */
export function compileSchedule(cfg: ScheduleInput): BusinessSchedule {
  if (!IANAZone.isValidZone(cfg.timezone))
    throw new ScheduleConfigError(`schedule.timezone: "${cfg.timezone}" is not an IANA time zone`)
  const weekly = WEEKDAYS.map((day) =>
    (cfg.weekly[day] ?? []).map((t, i) => parseInterval(t, `schedule.weekly.${day}[${i}]`)),
  )
  const holidays = new Set<string>()
  for (const [i, d] of (cfg.holidays ?? []).entries()) {
    checkDate(d, `schedule.holidays[${i}]`)
    holidays.add(d)
  }
  const extra = new Map<string, MinuteInterval[]>()
  for (const [d, list] of Object.entries(cfg.extraWorkingDays ?? {})) {
    const what = `schedule.extraWorkingDays.${d}`
    checkDate(d, what)
    if (holidays.has(d))
      throw new ScheduleConfigError(`${what}: the date is also listed in schedule.holidays`)
    extra.set(
      d,
      list.map((t, i) => parseInterval(t, `${what}[${i}]`)),
    )
  }
  return {
    timezone: cfg.timezone,
    zone: IANAZone.create(cfg.timezone),
    weekly,
    holidays,
    extra,
    cache: new Map(),
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Local dates as day numbers (days since 1970-01-01, proleptic Gregorian)

function isoOf(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10)
}

/** Monday = 0 … Sunday = 6 (1970-01-01 was a Thursday). */
function weekdayOf(day: number): number {
  return (((day + 3) % 7) + 7) % 7
}

/** The local date (day number) of an instant in the schedule's zone. */
function localDay(s: BusinessSchedule, ms: number): number {
  return Math.floor((ms + s.zone.offset(ms) * MINUTE_MS) / DAY_MS)
}

/**
 * The instant of a wall-clock time `minute` minutes after the local midnight of `day` (may roll into later days),
 * resolved without reading the clock. The two candidate offsets are the zone's offsets a day before and a day
 * after (no zone changes its offset twice within two days): each gives a candidate instant, valid when the zone
 * really has that offset there.
 * - One valid candidate (or two equal ones): that instant.
 * - Two valid candidates, the wall time is repeated (autumn overlap): the later occurrence, on standard time.
 * - None, the wall time does not exist (spring gap): read with the offset before the change, so it is shifted forward
 *   by the gap (02:30 in Europe/Berlin becomes 03:30 summer time).
 * luxon's own resolution (DateTime.fromObject) guesses with the offset at the current date, so a repeated hour
 * would depend on the season the server runs in.
 */
function wallToMs(s: BusinessSchedule, day: number, minute: number): number {
  const local = day * DAY_MS + minute * MINUTE_MS
  const before = s.zone.offset(local - DAY_MS)
  const after = s.zone.offset(local + DAY_MS)
  const valid = [before, after]
    .map((offset) => ({ offset, ms: local - offset * MINUTE_MS }))
    .filter((c) => s.zone.offset(c.ms) === c.offset)
    .map((c) => c.ms)
  if (valid.length === 0) return local - before * MINUTE_MS
  return Math.max(...valid)
}

function configuredIntervals(s: BusinessSchedule, iso: string, day: number): readonly MinuteInterval[] {
  if (s.holidays.has(iso)) return []
  return s.extra.get(iso) ?? s.weekly[weekdayOf(day)]!
}

/** The working spans belonging to a local date: sorted, merged, cut at the next date's midnight if it's a holiday. */
function daySpans(s: BusinessSchedule, day: number): readonly Span[] {
  const cached = s.cache.get(day)
  if (cached) return cached
  const list = configuredIntervals(s, isoOf(day), day)
  const spans: Span[] = []
  if (list.length > 0) {
    const nextIsHoliday = s.holidays.has(isoOf(day + 1))
    const raw: [number, number][] = []
    for (const iv of list) {
      const start = wallToMs(s, day, iv.start)
      let end = wallToMs(s, day, iv.end)
      if (nextIsHoliday && iv.end > 1440) end = Math.min(end, wallToMs(s, day + 1, 0))
      if (end > start) raw.push([start, end])
    }
    raw.sort((a, b) => a[0] - b[0])
    for (const r of raw) {
      const last = spans[spans.length - 1]
      if (last && r[0] <= last[1]) spans[spans.length - 1] = [last[0], Math.max(last[1], r[1])]
      else spans.push(r)
    }
  }
  if (s.cache.size >= CACHE_LIMIT) s.cache.clear()
  s.cache.set(day, spans)
  return spans
}

/**
 * Disjoint working spans in time order whose end is after `fromMs` (the first may start before it), up to the date
 * of `untilMs`. Unbounded walks throw {@link NoBusinessTimeError} after {@link MAX_IDLE_DAYS} empty dates.
 * Spans touching at midnight are yielded separately.
 */
function* spansFrom(
  s: BusinessSchedule,
  fromMs: number,
  untilMs = Number.POSITIVE_INFINITY,
): Generator<Span> {
  // An overnight interval of the previous date may still be running at fromMs.
  let day = localDay(s, fromMs) - 1
  const lastDay = Number.isFinite(untilMs) ? localDay(s, untilMs) : Number.POSITIVE_INFINITY
  let lastEnd = Number.NEGATIVE_INFINITY
  let idle = 0
  for (; day <= lastDay; day++) {
    let found = false
    for (const [a, b] of daySpans(s, day)) {
      if (b <= fromMs || b <= lastEnd) continue
      found = true
      yield [Math.max(a, lastEnd), b]
      lastEnd = b
    }
    if (found) idle = 0
    else if (++idle > MAX_IDLE_DAYS && lastDay === Number.POSITIVE_INFINITY)
      throw new NoBusinessTimeError(
        `the schedule (${s.timezone}) has no working time in the ${MAX_IDLE_DAYS} days after ` +
          `${new Date(fromMs).toISOString()}`,
      )
  }
}

function ms(t: Date, what: string): number {
  const v = t.getTime()
  if (Number.isNaN(v)) throw new TypeError(`${what}: invalid Date`)
  return v
}

// ---------------------------------------------------------------------------------------------------------------
// Queries

/** Whether the desk is open at `t` (open at an opening instant, closed at a closing instant). */
export function isOpen(s: BusinessSchedule, t: Date): boolean {
  const at = ms(t, 'isOpen')
  const day = localDay(s, at)
  for (const d of [day - 1, day]) for (const [a, b] of daySpans(s, d)) if (a <= at && at < b) return true
  return false
}

/** The first instant at or after `t` when the desk is open: `t` itself if open. */
export function nextOpening(s: BusinessSchedule, t: Date): Date {
  const at = ms(t, 'nextOpening')
  for (const [a] of spansFrom(s, at)) return new Date(Math.max(a, at))
  throw new Error('unreachable')
}

/**
 * The next instant after `t` at which the desk goes from open to closed: the end of the current opening period if
 * open at `t`, else the end of the next one. Touching intervals (e.g. "20:00-24:00" then "00:00-02:00") count as one
 * period. A schedule open around the clock for {@link MAX_IDLE_DAYS} days throws {@link NoBusinessTimeError}.
 */
export function nextClosing(s: BusinessSchedule, t: Date): Date {
  const at = ms(t, 'nextClosing')
  let first: number | undefined
  let end = 0
  for (const [a, b] of spansFrom(s, at)) {
    if (first === undefined) first = Math.max(a, at)
    else if (a > end) break
    end = b
    if (end - first > MAX_IDLE_DAYS * DAY_MS)
      throw new NoBusinessTimeError(
        `the schedule (${s.timezone}) does not close within ${MAX_IDLE_DAYS} days`,
      )
  }
  return new Date(end)
}

/**
 * `t` plus `minutes` of business time (fractions allowed, millisecond precision). Outside hours the clock starts at
 * the next opening; the result may be a closing instant. Throws RangeError for a negative or non-finite amount.
 */
export function addBusinessMinutes(s: BusinessSchedule, t: Date, minutes: number): Date {
  if (!Number.isFinite(minutes) || minutes < 0)
    throw new RangeError(`addBusinessMinutes: expected a non-negative number of minutes, got ${minutes}`)
  const at = ms(t, 'addBusinessMinutes')
  let left = Math.round(minutes * MINUTE_MS)
  for (const [a, b] of spansFrom(s, at)) {
    const start = Math.max(a, at)
    if (left <= b - start) return new Date(start + left)
    left -= b - start
  }
  throw new Error('unreachable')
}

/** `t` plus `hours` of business time; see {@link addBusinessMinutes}. */
export function addBusinessHours(s: BusinessSchedule, t: Date, hours: number): Date {
  return addBusinessMinutes(s, t, hours * 60)
}

/**
 * Business minutes between two instants: the working time in [a, b). Negative when `b` is before `a`
 * (`between(a, b) === -between(b, a)`); fractional when the instants are not on whole minutes.
 * Inverse of {@link addBusinessMinutes}: `between(t, add(t, n)) === n`.
 */
export function businessMinutesBetween(s: BusinessSchedule, a: Date, b: Date): number {
  const from = ms(a, 'businessMinutesBetween')
  const to = ms(b, 'businessMinutesBetween')
  if (to < from) return -businessMinutesBetween(s, b, a)
  let total = 0
  for (const [x, y] of spansFrom(s, from, to)) {
    if (x >= to) break
    total += Math.min(y, to) - Math.max(x, from)
  }
  return total / MINUTE_MS
}

/**
 * The working intervals within [from, to), as instants, clipped to the range, in order, with touching intervals
 * merged (an overnight "22:00-02:00" is one interval). Empty when `to <= from` or nothing is open in between; never
 * throws for an empty schedule.
 */
export function openIntervals(s: BusinessSchedule, from: Date, to: Date): OpenInterval[] {
  const lo = ms(from, 'openIntervals')
  const hi = ms(to, 'openIntervals')
  const out: [number, number][] = []
  if (hi <= lo) return []
  for (const [a, b] of spansFrom(s, lo, hi)) {
    if (a >= hi) break
    const start = Math.max(a, lo)
    const end = Math.min(b, hi)
    const last = out[out.length - 1]
    if (last && last[1] === start) last[1] = end
    else out.push([start, end])
  }
  return out.map(([a, b]) => ({ start: new Date(a), end: new Date(b) }))
}

/**
 * The configured hours of `days` consecutive local dates starting with the local date of `from`, for showing the
 * schedule to clients (holidays appear with kind `holiday` and no intervals).
 */
export function describeHours(s: BusinessSchedule, from: Date, days = 7): DayHours[] {
  const first = localDay(s, ms(from, 'describeHours'))
  const out: DayHours[] = []
  for (let day = first; day < first + days; day++) {
    const date = isoOf(day)
    const kind = s.holidays.has(date) ? 'holiday' : s.extra.has(date) ? 'extra' : 'regular'
    out.push({
      date,
      weekday: WEEKDAYS[weekdayOf(day)]!,
      kind,
      intervals: configuredIntervals(s, date, day).map((iv) => {
        const [start, end] = iv.text.split('-') as [string, string]
        return { start, end, overnight: iv.end > 1440 }
      }),
    })
  }
  return out
}
