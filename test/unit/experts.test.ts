import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { type DeskRuntime, parseConfig } from '../../src/config/load'
import { topicLink } from '../../src/experts/alerts'
import { isAvailable, isDayOff, staffName } from '../../src/experts/availability'
import { TEST_CONFIG } from '../support/app'

/** src/experts without a database: days off, availability, names, the topic link, and the config's checks. */

const yaml = readFileSync(TEST_CONFIG, 'utf8')

function desk(extra: string): DeskRuntime {
  const text = yaml.replace('    holdMinutes: 30\n', `    holdMinutes: 30\n${extra}`)
  return parseConfig('test.yaml', text).desks[0] as DeskRuntime
}

describe('experts: availability', () => {
  const d = desk(`    expertSettings:
      names: { "900002": Ed }
      daysOff: { "900002": [sat, sun, "2026-12-31"] }
`)
  // Europe/Moscow (UTC+3): Friday 23:30 local is Friday 20:30 UTC; Saturday 00:30 local is Friday 21:30 UTC.
  it('weekdays and dates off are read in the desk time zone', () => {
    expect(isDayOff(d, 900002, new Date('2026-12-04T20:30:00Z'))).toBe(false)
    expect(isDayOff(d, 900002, new Date('2026-12-04T21:30:00Z'))).toBe(true)
    expect(isDayOff(d, 900002, new Date('2026-12-31T10:00:00Z'))).toBe(true)
    expect(isDayOff(d, 900002, new Date('2026-12-30T10:00:00Z'))).toBe(false)
    expect(isDayOff(d, 900001, new Date('2026-12-05T10:00:00Z'))).toBe(false)
  })

  it('available = not away and not a day off', () => {
    const weekday = new Date('2026-12-02T10:00:00Z')
    expect(isAvailable(d, 900002, undefined, weekday)).toBe(true)
    expect(isAvailable(d, 900002, { away_since: new Date() }, weekday)).toBe(false)
    expect(isAvailable(d, 900002, { away_since: null }, new Date('2026-12-05T10:00:00Z'))).toBe(false)
  })

  it('names: config, then Telegram, then the id', () => {
    expect(staffName(d, 900002, { name: 'Edward T.' })).toBe('Ed')
    expect(staffName(d, 900001, { name: 'Ada L.' })).toBe('Ada L.')
    expect(staffName(d, 900001)).toBe('id 900001')
  })

  it('the topic link drops the -100 of a supergroup id', () => {
    expect(topicLink(-1009000000001, 77)).toBe('https://t.me/c/9000000001/77')
  })
})

describe('experts: config', () => {
  it('a tariff expert must be on the staff; day names and snippet names are checked', () => {
    expect(() => desk('').tariffs).not.toThrow()
    const bad = yaml.replace('        drafts: 5\n', '        drafts: 5\n        expert: 123\n')
    expect(() => parseConfig('t.yaml', bad)).toThrow(/tariffs\[0\]\.expert: not one of staff/)
    expect(() => desk(`    expertSettings: { daysOff: { "900002": [saturday] } }\n`)).toThrow(/daysOff/)
    expect(() => desk(`    expertSettings: { snippets: { "Bad Name": hi } }\n`)).toThrow(
      /expertSettings\.snippets\.Bad Name/,
    )
    const ok = desk(`    expertSettings: { snippets: { hi: { en: Hi, ru: Привет } } }\n`)
    expect(ok.expertSettings.snippets.hi).toEqual({ en: 'Hi', ru: 'Привет' })
  })
})
