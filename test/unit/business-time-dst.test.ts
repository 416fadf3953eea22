import { Settings } from 'luxon'
import { afterEach, describe, expect, it, vi } from 'vitest'
import {
  businessMinutesBetween,
  compileSchedule,
  isOpen,
  nextClosing,
  nextOpening,
  openIntervals,
  type ScheduleInput,
} from '../../src/time/business-time'

/**
 * Repeated and skipped wall-clock times, resolved the same whatever the server's clock says. The module's rule: a
 * repeated time (autumn overlap) is its later, standard-time occurrence; a skipped time (spring gap) is shifted
 * forward by the gap. luxon's own guess uses the zone's offset on the current date, so each case runs under a
 * northern summer and a northern winter clock (and the transition day itself); every expected instant is in UTC.
 */

const CLOCKS = [
  '2026-07-15T12:00:00Z',
  '2026-01-15T12:00:00Z',
  '2026-10-25T00:30:00Z',
  '2026-04-04T15:00:00Z',
]

function underEachClock(run: () => void) {
  for (const now of CLOCKS) {
    const ms = Date.parse(now)
    vi.useFakeTimers({ now: ms, toFake: ['Date'] })
    Settings.now = () => ms
    try {
      run()
    } catch (e) {
      ;(e as Error).message = `[clock ${now}] ${(e as Error).message}`
      throw e
    }
  }
}

afterEach(() => {
  vi.useRealTimers()
  Settings.now = () => Date.now()
})

function compile(timezone: string, weekly: ScheduleInput['weekly']) {
  return compileSchedule({ timezone, weekly })
}

const utc = (iso: string) => new Date(iso)
const spans = (s: ReturnType<typeof compile>, from: string, to: string) =>
  openIntervals(s, utc(from), utc(to)).map((i) => [i.start.toISOString(), i.end.toISOString()])

describe('an autumn overlap resolves to the later occurrence, whatever the clock', () => {
  it('Berlin, open Sat 20:00-02:00: the fall-back night (25 Oct 2026) has 420 business minutes', () => {
    underEachClock(() => {
      const s = compile('Europe/Berlin', { sat: ['20:00-02:00'] })
      // 20:00 CEST = 18:00Z; the second 02:00 (CET) = 01:00Z.
      expect(spans(s, '2026-10-24T00:00:00Z', '2026-10-26T00:00:00Z')).toEqual([
        ['2026-10-24T18:00:00.000Z', '2026-10-25T01:00:00.000Z'],
      ])
      expect(businessMinutesBetween(s, utc('2026-10-24T12:00:00Z'), utc('2026-10-25T12:00:00Z'))).toBe(420)
      expect(nextClosing(s, utc('2026-10-24T23:00:00Z')).toISOString()).toBe('2026-10-25T01:00:00.000Z')
      // In the repeated hour (the first 02:30, summer time) the desk is still open.
      expect(isOpen(s, utc('2026-10-25T00:30:00Z'))).toBe(true)
      expect(isOpen(s, utc('2026-10-25T01:00:00Z'))).toBe(false)
    })
  })

  it('Berlin, an opening in the repeated hour (Sun 02:30-04:00) opens at the second 02:30', () => {
    underEachClock(() => {
      const s = compile('Europe/Berlin', { sun: ['02:30-04:00'] })
      expect(nextOpening(s, utc('2026-10-24T22:00:00Z')).toISOString()).toBe('2026-10-25T01:30:00.000Z')
      expect(businessMinutesBetween(s, utc('2026-10-24T22:00:00Z'), utc('2026-10-25T06:00:00Z'))).toBe(90)
    })
  })

  it('Lord Howe (30-minute change, 5 Apr 2026 02:00 -> 01:30): Sat 20:00-01:45 gets 375 minutes', () => {
    underEachClock(() => {
      // Sat 20:00 at +11:00 = 09:00Z; the second 01:45 (+10:30) = 15:15Z.
      const s = compile('Australia/Lord_Howe', { sat: ['20:00-01:45'] })
      expect(spans(s, '2026-04-04T00:00:00Z', '2026-04-05T12:00:00Z')).toEqual([
        ['2026-04-04T09:00:00.000Z', '2026-04-04T15:15:00.000Z'],
      ])
      expect(businessMinutesBetween(s, utc('2026-04-04T00:00:00Z'), utc('2026-04-05T00:00:00Z'))).toBe(375)
      // An opening in the repeated half hour: Sun 01:40 is its second occurrence (+10:30) = 15:10Z; 03:00 = 16:30Z.
      const sunday = compile('Australia/Lord_Howe', { sun: ['01:40-03:00'] })
      expect(spans(sunday, '2026-04-04T00:00:00Z', '2026-04-05T12:00:00Z')).toEqual([
        ['2026-04-04T15:10:00.000Z', '2026-04-04T16:30:00.000Z'],
      ])
      expect(businessMinutesBetween(sunday, utc('2026-04-04T00:00:00Z'), utc('2026-04-05T00:00:00Z'))).toBe(
        80,
      )
    })
  })

  it('Chatham (+13:45 -> +12:45 at 03:45 on 5 Apr 2026): Sat 22:00-03:00 gets 360 minutes', () => {
    underEachClock(() => {
      const s = compile('Pacific/Chatham', { sat: ['22:00-03:00'] })
      // Sat 22:00 at +13:45 = 08:15Z; the second 03:00 (+12:45) = 14:15Z.
      expect(spans(s, '2026-04-04T00:00:00Z', '2026-04-05T00:00:00Z')).toEqual([
        ['2026-04-04T08:15:00.000Z', '2026-04-04T14:15:00.000Z'],
      ])
      expect(businessMinutesBetween(s, utc('2026-04-04T00:00:00Z'), utc('2026-04-05T00:00:00Z'))).toBe(360)
    })
  })
})

describe('a spring gap shifts a skipped time forward by the gap, whatever the clock', () => {
  it('Berlin (29 Mar 2026 02:00 -> 03:00): Sun 02:30-04:00 opens at 03:30 summer time, 30 minutes', () => {
    underEachClock(() => {
      const s = compile('Europe/Berlin', { sun: ['02:30-04:00'] })
      expect(spans(s, '2026-03-28T00:00:00Z', '2026-03-30T00:00:00Z')).toEqual([
        ['2026-03-29T01:30:00.000Z', '2026-03-29T02:00:00.000Z'],
      ])
    })
  })

  it('Lord Howe (4 Oct 2026 02:00 -> 02:30): Sun 02:10-03:00 opens at 02:40, 20 minutes', () => {
    underEachClock(() => {
      const s = compile('Australia/Lord_Howe', { sun: ['02:10-03:00'] })
      expect(spans(s, '2026-10-03T00:00:00Z', '2026-10-04T12:00:00Z')).toEqual([
        ['2026-10-03T15:40:00.000Z', '2026-10-03T16:00:00.000Z'],
      ])
    })
  })

  it('Chatham (27 Sep 2026 02:45 -> 03:45): Sat 22:00-03:00 closes at 04:00 daylight time, 300 minutes', () => {
    underEachClock(() => {
      const s = compile('Pacific/Chatham', { sat: ['22:00-03:00'] })
      // Sat 22:00 at +12:45 = 09:15Z; 03:00 does not exist: read at +12:45 it is 14:15Z (04:00 at +13:45).
      expect(spans(s, '2026-09-26T00:00:00Z', '2026-09-27T12:00:00Z')).toEqual([
        ['2026-09-26T09:15:00.000Z', '2026-09-26T14:15:00.000Z'],
      ])
      expect(businessMinutesBetween(s, utc('2026-09-26T00:00:00Z'), utc('2026-09-27T12:00:00Z'))).toBe(300)
    })
  })
})
