// Longer than ~400 lines: the business-time model is one contract (intervals, midnight, holidays, DST, the inverse
// of add and between); the cases sit next to each other so a reader sees the whole model tested.

import { DateTime } from 'luxon'
import { describe, expect, it } from 'vitest'
import {
  addBusinessHours,
  addBusinessMinutes,
  type BusinessSchedule,
  businessMinutesBetween,
  compileSchedule,
  describeHours,
  isOpen,
  NoBusinessTimeError,
  nextClosing,
  nextOpening,
  openIntervals,
  ScheduleConfigError,
  type ScheduleInput,
} from '../../src/time/business-time'

const BERLIN = 'Europe/Berlin'
const MOSCOW = 'Europe/Moscow'
const WEEKDAYS_10_18 = {
  mon: ['10:00-18:00'],
  tue: ['10:00-18:00'],
  wed: ['10:00-18:00'],
  thu: ['10:00-18:00'],
  fri: ['10:00-18:00'],
}

function schedule(weekly: ScheduleInput['weekly'], rest: Partial<ScheduleInput> = {}): BusinessSchedule {
  return compileSchedule({ timezone: BERLIN, weekly, ...rest })
}

/** A local wall time in the schedule's zone as an instant. */
function at(s: BusinessSchedule, local: string): Date {
  const d = DateTime.fromISO(local, { zone: s.timezone })
  if (!d.isValid) throw new Error(`bad test time ${local}`)
  return d.toJSDate()
}

/** An instant shown as local time with offset and weekday, e.g. "2025-06-16T13:00+02:00 Mon". */
function show(s: BusinessSchedule, d: Date): string {
  return DateTime.fromJSDate(d, { zone: s.timezone }).toFormat("yyyy-MM-dd'T'HH:mmZZ ccc", { locale: 'en' })
}

const HOUR = 3_600_000

describe('weekdays 10:00-18:00', () => {
  const s = schedule(WEEKDAYS_10_18)

  it('Friday 17:00 + 4 business hours = Monday 13:00', () => {
    expect(show(s, addBusinessHours(s, at(s, '2025-06-13T17:00'), 4))).toBe('2025-06-16T13:00+02:00 Mon')
    expect(businessMinutesBetween(s, at(s, '2025-06-13T17:00'), at(s, '2025-06-16T13:00'))).toBe(240)
  })

  it('an arrival on Saturday starts the clock at Monday 10:00', () => {
    const sat = at(s, '2025-06-14T12:34')
    expect(show(s, nextOpening(s, sat))).toBe('2025-06-16T10:00+02:00 Mon')
    expect(show(s, addBusinessMinutes(s, sat, 0))).toBe('2025-06-16T10:00+02:00 Mon')
    expect(show(s, addBusinessHours(s, sat, 3))).toBe('2025-06-16T13:00+02:00 Mon')
    expect(show(s, addBusinessHours(s, sat, 8))).toBe('2025-06-16T18:00+02:00 Mon')
    expect(show(s, addBusinessHours(s, sat, 9))).toBe('2025-06-17T11:00+02:00 Tue')
    expect(show(s, addBusinessHours(s, sat, 40.5))).toBe('2025-06-23T10:30+02:00 Mon')
    expect(businessMinutesBetween(s, sat, at(s, '2025-06-16T09:00'))).toBe(0)
  })

  it('an arrival before opening or after closing on a weekday', () => {
    expect(show(s, addBusinessHours(s, at(s, '2025-06-17T07:15'), 1))).toBe('2025-06-17T11:00+02:00 Tue')
    expect(show(s, addBusinessHours(s, at(s, '2025-06-17T19:00'), 1))).toBe('2025-06-18T11:00+02:00 Wed')
  })

  it('reaching exactly the closing instant stays on that day', () => {
    expect(show(s, addBusinessHours(s, at(s, '2025-06-13T17:00'), 1))).toBe('2025-06-13T18:00+02:00 Fri')
  })

  it('is open at 10:00 and closed at 18:00', () => {
    expect(isOpen(s, at(s, '2025-06-16T10:00'))).toBe(true)
    expect(isOpen(s, at(s, '2025-06-16T09:59:59.999'))).toBe(false)
    expect(isOpen(s, at(s, '2025-06-16T17:59:59.999'))).toBe(true)
    expect(isOpen(s, at(s, '2025-06-16T18:00'))).toBe(false)
    expect(isOpen(s, at(s, '2025-06-14T12:00'))).toBe(false)
    expect(show(s, nextOpening(s, at(s, '2025-06-16T18:00')))).toBe('2025-06-17T10:00+02:00 Tue')
    const open = at(s, '2025-06-16T12:00')
    expect(nextOpening(s, open)).toEqual(open)
    expect(show(s, nextClosing(s, open))).toBe('2025-06-16T18:00+02:00 Mon')
    expect(show(s, nextClosing(s, at(s, '2025-06-14T12:00')))).toBe('2025-06-16T18:00+02:00 Mon')
  })

  it('lists the open intervals of a range, clipped to it', () => {
    const list = openIntervals(s, at(s, '2025-06-13T12:00'), at(s, '2025-06-17T11:00'))
    expect(list.map((i) => `${show(s, i.start)} - ${show(s, i.end)}`)).toEqual([
      '2025-06-13T12:00+02:00 Fri - 2025-06-13T18:00+02:00 Fri',
      '2025-06-16T10:00+02:00 Mon - 2025-06-16T18:00+02:00 Mon',
      '2025-06-17T10:00+02:00 Tue - 2025-06-17T11:00+02:00 Tue',
    ])
    expect(openIntervals(s, at(s, '2025-06-17T11:00'), at(s, '2025-06-13T12:00'))).toEqual([])
  })

  it('counts backwards as negative', () => {
    const a = at(s, '2025-06-13T17:00')
    const b = at(s, '2025-06-16T13:00')
    expect(businessMinutesBetween(s, b, a)).toBe(-240)
  })

  it('rejects a negative amount', () => {
    expect(() => addBusinessMinutes(s, at(s, '2025-06-13T17:00'), -1)).toThrow(RangeError)
  })
})

describe('holidays', () => {
  it('a holiday Monday is skipped', () => {
    const s = schedule(WEEKDAYS_10_18, { holidays: ['2025-06-09'] }) // Whit Monday
    expect(isOpen(s, at(s, '2025-06-09T12:00'))).toBe(false)
    expect(show(s, addBusinessHours(s, at(s, '2025-06-06T17:00'), 4))).toBe('2025-06-10T13:00+02:00 Tue')
    expect(show(s, nextOpening(s, at(s, '2025-06-07T12:00')))).toBe('2025-06-10T10:00+02:00 Tue')
    expect(businessMinutesBetween(s, at(s, '2025-06-06T00:00'), at(s, '2025-06-11T00:00'))).toBe(2 * 8 * 60) // Fri + Tue
  })

  it("closes the holiday's whole date: cuts the previous night's interval and cancels its own", () => {
    const s = schedule(
      { thu: ['22:00-02:00'], fri: ['22:00-02:00'] },
      { holidays: ['2025-06-13'] }, // the Friday
    )
    // Thursday's night shift stops at the holiday's midnight.
    expect(isOpen(s, at(s, '2025-06-12T23:59'))).toBe(true)
    expect(isOpen(s, at(s, '2025-06-13T00:30'))).toBe(false)
    // Friday's own night shift (into Saturday) does not happen at all.
    expect(isOpen(s, at(s, '2025-06-13T23:00'))).toBe(false)
    expect(isOpen(s, at(s, '2025-06-14T01:00'))).toBe(false)
    expect(show(s, nextOpening(s, at(s, '2025-06-13T00:30')))).toBe('2025-06-19T22:00+02:00 Thu')
    expect(businessMinutesBetween(s, at(s, '2025-06-12T00:00'), at(s, '2025-06-15T00:00'))).toBe(120)
  })
})

describe('split hours 10:00-13:00, 14:00-18:00', () => {
  const split = ['10:00-13:00', '14:00-18:00']
  const s = schedule({ mon: split, tue: split, wed: split, thu: split, fri: split })

  it('skips the lunch break', () => {
    expect(show(s, addBusinessHours(s, at(s, '2025-06-16T12:00'), 2))).toBe('2025-06-16T15:00+02:00 Mon')
    expect(show(s, addBusinessHours(s, at(s, '2025-06-16T12:00'), 1))).toBe('2025-06-16T13:00+02:00 Mon')
    expect(show(s, addBusinessHours(s, at(s, '2025-06-16T13:30'), 1))).toBe('2025-06-16T15:00+02:00 Mon')
    // Friday 17-18, then Monday 10-13 ends exactly at the lunch break.
    expect(show(s, addBusinessHours(s, at(s, '2025-06-13T17:00'), 4))).toBe('2025-06-16T13:00+02:00 Mon')
    expect(show(s, addBusinessHours(s, at(s, '2025-06-13T17:00'), 5))).toBe('2025-06-16T15:00+02:00 Mon')
  })

  it('is closed over lunch', () => {
    expect(isOpen(s, at(s, '2025-06-16T13:00'))).toBe(false)
    expect(isOpen(s, at(s, '2025-06-16T14:00'))).toBe(true)
    expect(show(s, nextOpening(s, at(s, '2025-06-16T13:30')))).toBe('2025-06-16T14:00+02:00 Mon')
    expect(show(s, nextClosing(s, at(s, '2025-06-16T11:00')))).toBe('2025-06-16T13:00+02:00 Mon')
    expect(businessMinutesBetween(s, at(s, '2025-06-16T09:00'), at(s, '2025-06-16T19:00'))).toBe(7 * 60)
  })
})

describe('an interval spanning midnight', () => {
  const s = schedule({ fri: ['22:00-02:00'] })

  it("belongs to the day it starts on and runs into the next day's morning", () => {
    const fri = at(s, '2025-06-13T23:00')
    expect(isOpen(s, fri)).toBe(true)
    expect(isOpen(s, at(s, '2025-06-14T01:59'))).toBe(true)
    expect(isOpen(s, at(s, '2025-06-14T02:00'))).toBe(false)
    expect(isOpen(s, at(s, '2025-06-13T01:00'))).toBe(false) // Thursday night is not open
    expect(show(s, addBusinessHours(s, fri, 2))).toBe('2025-06-14T01:00+02:00 Sat')
    expect(show(s, addBusinessHours(s, fri, 3))).toBe('2025-06-14T02:00+02:00 Sat')
    expect(show(s, addBusinessHours(s, fri, 4))).toBe('2025-06-20T23:00+02:00 Fri')
    expect(show(s, nextOpening(s, at(s, '2025-06-14T03:00')))).toBe('2025-06-20T22:00+02:00 Fri')
    expect(show(s, nextClosing(s, fri))).toBe('2025-06-14T02:00+02:00 Sat')
  })

  it('is one open interval', () => {
    const list = openIntervals(s, at(s, '2025-06-13T00:00'), at(s, '2025-06-15T00:00'))
    expect(list.map((i) => `${show(s, i.start)} - ${show(s, i.end)}`)).toEqual([
      '2025-06-13T22:00+02:00 Fri - 2025-06-14T02:00+02:00 Sat',
    ])
  })

  it('touches and overlaps with the next day are merged', () => {
    const t = schedule({ thu: ['20:00-24:00'], fri: ['00:00-03:00', '02:00-04:00'] })
    expect(show(t, nextClosing(t, at(t, '2025-06-12T21:00')))).toBe('2025-06-13T04:00+02:00 Fri')
    expect(businessMinutesBetween(t, at(t, '2025-06-12T00:00'), at(t, '2025-06-14T00:00'))).toBe(8 * 60)
    expect(openIntervals(t, at(t, '2025-06-12T00:00'), at(t, '2025-06-14T00:00'))).toHaveLength(1)
    const u = schedule({ thu: ['22:00-03:00'], fri: ['01:00-05:00'] })
    expect(businessMinutesBetween(u, at(u, '2025-06-12T00:00'), at(u, '2025-06-14T00:00'))).toBe(7 * 60)
    expect(show(u, addBusinessHours(u, at(u, '2025-06-12T22:00'), 6))).toBe('2025-06-13T04:00+02:00 Fri')
  })
})

describe('extra working days', () => {
  it('opens a Saturday with its own hours', () => {
    const s = compileSchedule({
      timezone: MOSCOW,
      weekly: WEEKDAYS_10_18,
      extraWorkingDays: { '2025-11-01': ['10:00-14:00'] },
      holidays: ['2025-11-03', '2025-11-04'],
    })
    expect(isOpen(s, at(s, '2025-11-01T11:00'))).toBe(true)
    expect(isOpen(s, at(s, '2025-11-01T15:00'))).toBe(false)
    expect(show(s, addBusinessHours(s, at(s, '2025-10-31T17:00'), 4))).toBe('2025-11-01T13:00+03:00 Sat')
    expect(show(s, addBusinessHours(s, at(s, '2025-10-31T17:00'), 6))).toBe('2025-11-05T11:00+03:00 Wed')
    expect(describeHours(s, at(s, '2025-11-01T00:00'), 4)).toEqual([
      {
        date: '2025-11-01',
        weekday: 'sat',
        kind: 'extra',
        intervals: [{ start: '10:00', end: '14:00', overnight: false }],
      },
      { date: '2025-11-02', weekday: 'sun', kind: 'regular', intervals: [] },
      { date: '2025-11-03', weekday: 'mon', kind: 'holiday', intervals: [] },
      { date: '2025-11-04', weekday: 'tue', kind: 'holiday', intervals: [] },
    ])
  })

  it("replaces the weekday's hours on a weekday", () => {
    const s = schedule(WEEKDAYS_10_18, { extraWorkingDays: { '2025-06-16': ['12:00-14:00'] } })
    expect(isOpen(s, at(s, '2025-06-16T10:30'))).toBe(false)
    expect(businessMinutesBetween(s, at(s, '2025-06-16T00:00'), at(s, '2025-06-17T00:00'))).toBe(120)
  })
})

describe('DST in Europe/Berlin', () => {
  // 2025-03-30 (Sunday): 02:00 -> 03:00, a 23-hour day. 2025-10-26 (Sunday): 03:00 -> 02:00, a 25-hour day.
  const s = schedule({ ...WEEKDAYS_10_18, sun: ['00:00-24:00'] })

  it('a round-the-clock Sunday has 23 business hours in spring and 25 in autumn', () => {
    expect(businessMinutesBetween(s, at(s, '2025-03-30T00:00'), at(s, '2025-03-31T00:00'))).toBe(23 * 60)
    expect(businessMinutesBetween(s, at(s, '2025-10-26T00:00'), at(s, '2025-10-27T00:00'))).toBe(25 * 60)
    expect(businessMinutesBetween(s, at(s, '2025-06-15T00:00'), at(s, '2025-06-16T00:00'))).toBe(24 * 60)
  })

  it('adding across the spring change', () => {
    const fri = at(s, '2025-03-28T17:00')
    // 1 h Friday + 23 h Sunday = the end of Sunday, then Monday from 10:00 (now UTC+2).
    expect(show(s, addBusinessHours(s, fri, 24))).toBe('2025-03-31T00:00+02:00 Mon')
    expect(show(s, addBusinessHours(s, fri, 26))).toBe('2025-03-31T12:00+02:00 Mon')
    expect(show(s, addBusinessHours(s, at(s, '2025-03-30T01:30'), 1))).toBe('2025-03-30T03:30+02:00 Sun')
  })

  it('adding across the autumn change', () => {
    const fri = at(s, '2025-10-24T17:00')
    expect(show(s, addBusinessHours(s, fri, 26))).toBe('2025-10-27T00:00+01:00 Mon')
    expect(show(s, addBusinessHours(s, fri, 28))).toBe('2025-10-27T12:00+01:00 Mon')
    // 01:30 CEST + 1 h is 02:30 CEST, + 2 h is 02:30 CET (the repeated hour counts twice).
    const start = at(s, '2025-10-26T01:30')
    expect(addBusinessHours(s, start, 2).getTime() - addBusinessHours(s, start, 1).getTime()).toBe(HOUR)
    expect(show(s, addBusinessHours(s, start, 2))).toBe('2025-10-26T02:30+01:00 Sun')
  })

  it('10:00-18:00 stays local wall-clock hours on both sides of a change', () => {
    const spring = openIntervals(s, at(s, '2025-03-28T00:00'), at(s, '2025-04-01T00:00'))
    expect(spring.map((i) => `${show(s, i.start)} - ${show(s, i.end)}`)).toEqual([
      '2025-03-28T10:00+01:00 Fri - 2025-03-28T18:00+01:00 Fri',
      '2025-03-30T00:00+01:00 Sun - 2025-03-31T00:00+02:00 Mon',
      '2025-03-31T10:00+02:00 Mon - 2025-03-31T18:00+02:00 Mon',
    ])
    const weekdaysOnly = schedule(WEEKDAYS_10_18)
    expect(businessMinutesBetween(weekdaysOnly, at(s, '2025-10-20T00:00'), at(s, '2025-11-03T00:00'))).toBe(
      10 * 8 * 60,
    )
    expect(show(s, addBusinessHours(weekdaysOnly, at(s, '2025-10-24T17:00'), 4))).toBe(
      '2025-10-27T13:00+01:00 Mon',
    )
  })

  it('hours that touch the gap follow the wall clock; a time in the gap is shifted forward', () => {
    const night = schedule({ sun: ['01:00-04:00'] })
    expect(businessMinutesBetween(night, at(s, '2025-03-30T00:00'), at(s, '2025-03-31T00:00'))).toBe(120)
    expect(businessMinutesBetween(night, at(s, '2025-10-26T00:00'), at(s, '2025-10-27T00:00'))).toBe(240)
    const inGap = schedule({ sun: ['02:30-05:00'] })
    expect(show(inGap, nextOpening(inGap, at(s, '2025-03-29T12:00')))).toBe('2025-03-30T03:30+02:00 Sun')
  })
})

describe('Europe/Moscow (no DST)', () => {
  const s = compileSchedule({ timezone: MOSCOW, weekly: WEEKDAYS_10_18 })

  it('Friday 17:00 + 4 business hours = Monday 13:00, offsets stay +03:00', () => {
    expect(show(s, addBusinessHours(s, at(s, '2025-03-28T17:00'), 4))).toBe('2025-03-31T13:00+03:00 Mon')
    expect(show(s, addBusinessHours(s, at(s, '2025-10-24T17:00'), 4))).toBe('2025-10-27T13:00+03:00 Mon')
    expect(isOpen(s, new Date('2025-06-16T07:00:00Z'))).toBe(true) // 10:00 MSK
    expect(isOpen(s, new Date('2025-06-16T06:59:59Z'))).toBe(false)
    expect(isOpen(s, new Date('2025-06-16T15:00:00Z'))).toBe(false) // 18:00 MSK
  })

  it('every full week has 40 business hours all year', () => {
    let monday = at(s, '2025-01-06T00:00')
    for (let w = 0; w < 52; w++) {
      const next = new Date(monday.getTime() + 7 * 24 * HOUR)
      expect(businessMinutesBetween(s, monday, next)).toBe(40 * 60)
      monday = next
    }
  })
})

/** A small deterministic PRNG (mulberry32), so failures reproduce. */
function rng(seed: number): () => number {
  let a = seed
  return () => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

describe('consistency (property-style)', () => {
  const busy = schedule(
    {
      mon: ['10:00-13:00', '14:00-18:00'],
      tue: ['10:00-18:00'],
      wed: ['09:00-12:00', '12:00-17:00'],
      thu: ['10:00-18:00', '22:00-02:00'],
      fri: ['10:00-18:00'],
      sun: ['00:00-24:00'],
    },
    {
      holidays: ['2025-01-01', '2025-04-18', '2025-04-21', '2025-12-25', '2025-12-26', '2025-05-02'],
      extraWorkingDays: { '2025-05-03': ['11:00-15:00'], '2025-12-27': ['20:00-03:00'] },
    },
  )
  const yearStart = Date.parse('2025-01-01T00:00:00Z')
  const year = 365 * 24 * HOUR

  it('businessMinutesBetween(t, addBusinessMinutes(t, n)) === n for random instants and amounts', () => {
    const random = rng(42)
    for (let i = 0; i < 3000; i++) {
      const t = new Date(yearStart + Math.floor(random() * year))
      const n = i % 10 === 0 ? Math.round(random() * 60 * 24 * 30) : Math.round(random() * 5000) / 4
      const end = addBusinessMinutes(busy, t, n)
      expect(end.getTime()).toBeGreaterThanOrEqual(t.getTime())
      expect(businessMinutesBetween(busy, t, end)).toBe(n)
      if (n > 0) expect(isOpen(busy, new Date(end.getTime() - 1))).toBe(true)
    }
  })

  it('addBusinessMinutes is additive: add(add(t, a), b) === add(t, a + b) when a ends inside hours', () => {
    const random = rng(7)
    for (let i = 0; i < 1000; i++) {
      const t = new Date(yearStart + Math.floor(random() * year))
      const a = Math.round(random() * 3000)
      const b = 1 + Math.round(random() * 3000)
      expect(addBusinessMinutes(busy, addBusinessMinutes(busy, t, a), b)).toEqual(
        addBusinessMinutes(busy, t, a + b),
      )
    }
  })

  it('agrees with a minute-by-minute count of isOpen, including DST weekends', () => {
    const random = rng(99)
    const starts = [
      at(busy, '2025-03-27T21:00'),
      at(busy, '2025-10-23T21:00'),
      at(busy, '2025-12-24T00:00'),
      at(busy, '2025-04-30T00:00'),
    ]
    for (let i = 0; i < 8; i++)
      starts.push(new Date(yearStart + Math.floor((random() * year) / 60_000) * 60_000))
    for (const t of starts) {
      const minutes = 4 * 24 * 60
      let open = 0
      for (let m = 0; m < minutes; m++) if (isOpen(busy, new Date(t.getTime() + m * 60_000))) open++
      const end = new Date(t.getTime() + minutes * 60_000)
      expect(businessMinutesBetween(busy, t, end)).toBe(open)
      const total = openIntervals(busy, t, end).reduce(
        (sum, iv) => sum + iv.end.getTime() - iv.start.getTime(),
        0,
      )
      expect(total / 60_000).toBe(open)
    }
  })

  it('nextOpening is open and nothing before it is', () => {
    const random = rng(5)
    for (let i = 0; i < 500; i++) {
      const t = new Date(yearStart + Math.floor(random() * year))
      const o = nextOpening(busy, t)
      expect(isOpen(busy, o)).toBe(true)
      expect(businessMinutesBetween(busy, t, o)).toBe(0)
      const c = nextClosing(busy, t)
      expect(isOpen(busy, c)).toBe(false)
      expect(isOpen(busy, new Date(c.getTime() - 1))).toBe(true)
      expect(c.getTime()).toBeGreaterThan(o.getTime())
    }
  })
})

describe('degenerate and invalid schedules', () => {
  it('a schedule that is never open throws instead of looping', () => {
    const s = schedule({})
    const t = at(s, '2025-06-13T12:00')
    expect(isOpen(s, t)).toBe(false)
    expect(() => nextOpening(s, t)).toThrow(NoBusinessTimeError)
    expect(() => addBusinessHours(s, t, 1)).toThrow(/no working time in the 400 days/)
    expect(openIntervals(s, t, at(s, '2027-06-13T12:00'))).toEqual([])
    expect(businessMinutesBetween(s, t, at(s, '2027-06-13T12:00'))).toBe(0)
  })

  it('a schedule whose last working day has passed throws too', () => {
    const s = schedule({}, { extraWorkingDays: { '2025-06-14': ['10:00-12:00'] } })
    expect(show(s, addBusinessHours(s, at(s, '2025-06-01T00:00'), 2))).toBe('2025-06-14T12:00+02:00 Sat')
    expect(() => addBusinessHours(s, at(s, '2025-06-01T00:00'), 3)).toThrow(NoBusinessTimeError)
  })

  it('round the clock: never closes, but adding works', () => {
    const all = ['00:00-24:00']
    const s = schedule({ mon: all, tue: all, wed: all, thu: all, fri: all, sat: all, sun: all })
    const t = at(s, '2025-03-29T12:00')
    expect(addBusinessHours(s, t, 48).getTime() - t.getTime()).toBe(48 * HOUR)
    expect(() => nextClosing(s, t)).toThrow(NoBusinessTimeError)
  })

  it('rejects invalid config with a clear message', () => {
    expect(() => compileSchedule({ timezone: 'Mars/Olympus', weekly: {} })).toThrow(ScheduleConfigError)
    expect(() => schedule({ mon: ['10:00-24:30'] })).toThrow(/schedule\.weekly\.mon\[0\]/)
    expect(() => schedule({ mon: ['24:00-02:00'] })).toThrow(ScheduleConfigError)
    expect(() => schedule({ mon: ['10:00-10:00'] })).toThrow(/empty interval/)
    expect(() => schedule({}, { holidays: ['2025-02-30'] })).toThrow(/holidays\[0\]/)
    expect(() =>
      schedule({}, { holidays: ['2025-06-14'], extraWorkingDays: { '2025-06-14': ['10:00-12:00'] } }),
    ).toThrow(/also listed in schedule\.holidays/)
  })

  it('rejects an invalid Date', () => {
    expect(() => isOpen(schedule(WEEKDAYS_10_18), new Date(Number.NaN))).toThrow(TypeError)
  })
})
