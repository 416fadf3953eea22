import { describe, expect, it } from 'vitest'
import { createI18n } from '../../src/bot/i18n'
import { formatInstant, staffZone } from '../../src/time/format'

// The formatters take their words (zone names) from the locale files, which the i18n hands over when created.
createI18n()

/** 1 Dec 2026, 11:00 UTC: 14:00 in Moscow, 15:00 in Tbilisi. */
const at = new Date('2026-12-01T11:00:00Z')

describe('formatInstant: a zone is named unless it is the reader’s own', () => {
  it('a zone the reader did not pick (the desk’s, for a client who picked none) is said in words', () => {
    expect(formatInstant(at, 'Europe/Moscow', 'ru')).toBe('1 дек. 2026, 14:00 по Москве')
    expect(formatInstant(at, 'Europe/Moscow', 'en')).toBe('1 Dec 2026, 14:00 Moscow time')
    expect(formatInstant(at, { id: 'Europe/Moscow', own: false }, 'en')).toBe('1 Dec 2026, 14:00 Moscow time')
    // A zone without a name in the locale files: its offset.
    expect(formatInstant(at, 'Asia/Karachi', 'en')).toBe('1 Dec 2026, 16:00 UTC+5')
  })

  it('the reader’s own zone (a client’s pick) names no zone, in the time of that zone', () => {
    expect(formatInstant(at, { id: 'Asia/Tbilisi', own: true }, 'ru')).toBe('1 дек. 2026, 15:00')
    expect(formatInstant(at, { id: 'Europe/Moscow', own: true }, 'en')).toBe('1 Dec 2026, 14:00')
  })

  it('staff read the desk’s zone as their own: no zone named', () => {
    expect(formatInstant(at, staffZone({ schedule: { timezone: 'Europe/Moscow' } }), 'ru')).toBe(
      '1 дек. 2026, 14:00',
    )
  })

  it('`zone: false` leaves any zone out (a text that says it once)', () => {
    expect(formatInstant(at, 'Europe/Moscow', 'en', { zone: false })).toBe('1 Dec 2026, 14:00')
    expect(formatInstant(at, { id: 'Europe/Moscow', own: false }, 'ru', { zone: false })).toBe(
      '1 дек. 2026, 14:00',
    )
  })

  it('an id that is no zone is read as UTC and never shown', () => {
    expect(formatInstant(at, { id: 'Mars/Olympus', own: false }, 'en')).toBe('1 Dec 2026, 11:00 UTC')
  })
})
