import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { ConfigError, parseConfig } from '../../src/config/load'

/** Issue 14: a scheduled tariff's slots are checked against the desk's schedule at start (a config error naming the key). */

const base = readFileSync('test/support/desk.test.yaml', 'utf8')

/** The test desk with Mon-Fri 10-18 hours, a holiday, and one scheduled tariff with the given slots. */
function withSlots(slots: string[]): string {
  const schedule = base.replace(
    / {6}weekly:\n(?: {8}\w{3}: .*\n)+/,
    `      weekly:\n        mon: ["10:00-18:00"]\n        tue: ["10:00-18:00"]\n        wed: ["10:00-18:00"]\n        thu: ["10:00-18:00"]\n        fri: ["10:00-18:00"]\n      holidays: ["2027-01-05"]\n`,
  )
  return schedule.replace(
    '    tariffs:\n',
    `    tariffs:\n      - code: sched\n        title: { ru: С, en: S }\n        description: { ru: С, en: S }\n        priceStars: 10\n        windowHours: 2\n        appeals: 1\n        slaBusinessHours: 1\n        startMode: scheduled\n        slots: ${JSON.stringify(slots)}\n`,
  )
}

function errorOf(text: string): string {
  try {
    parseConfig('desk.yaml', text)
    return ''
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e
    return e.message
  }
}

describe('slots against the schedule', () => {
  it('accepts slots in working hours', () => {
    // Monday 2027-01-04 11:00 Moscow.
    expect(errorOf(withSlots(['2027-01-04T11:00:00+03:00']))).toBe('')
  })

  it('names the key of a slot on a holiday, at a weekend, outside hours, or without an offset', () => {
    const msg = errorOf(
      withSlots([
        '2027-01-04T11:00:00+03:00',
        '2027-01-05T11:00:00+03:00',
        '2027-01-09T11:00:00+03:00',
        '2027-01-04T19:00:00+03:00',
        '2027-01-04T11:00:00',
      ]),
    )
    expect(msg).not.toContain('slots[0]')
    expect(msg).toMatch(
      /desks\[0\]\.tariffs\[0\]\.slots\[1\]: "2027-01-05T11:00:00\+03:00" is outside the desk's working hours/,
    )
    expect(msg).toMatch(/desks\[0\]\.tariffs\[0\]\.slots\[2\]: .* is outside/)
    expect(msg).toMatch(/desks\[0\]\.tariffs\[0\]\.slots\[3\]: .* is outside/)
    expect(msg).toMatch(
      /desks\[0\]\.tariffs\[0\]\.slots\[4\]: "2027-01-04T11:00:00" is not an ISO instant with an offset/,
    )
  })

  it('the shipped config is valid', () => {
    for (const f of ['config/consult-desk.example.yaml'])
      expect(errorOf(readFileSync(f, 'utf8').replace(/\$\{[A-Z_]+\}/g, '1'))).toBe('')
  })
})
