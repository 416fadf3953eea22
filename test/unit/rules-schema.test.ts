import { describe, expect, it } from 'vitest'
import { deskLanguage, RULE_DEFAULTS, rulesSchema } from '../../src/config/rules.schema'
import { deskSchema } from '../../src/config/schema'
import { OFFERED_ZONES } from '../../src/time/client-time'

/** The desk's rules (issue 27): today's values as defaults, each field's bounds, zones and languages checked. */

const ok = (rules: unknown) => rulesSchema.safeParse(rules).success

describe('rules schema', () => {
  it("defaults are the old constants' values", () => {
    expect(RULE_DEFAULTS).toEqual({
      disputeAnswerHours: 8,
      ratingEditDays: 7,
      lowRating: 2,
      unpaidOrderHours: 24,
      stallSeconds: 120,
      deadLetterMinutes: 15,
      zones: [...OFFERED_ZONES],
      languages: ['ru', 'en'],
      retention: {
        processedUpdateHours: 48,
        inboxUpdateHours: 48,
        outboundMessageDays: 30,
        conversationStateDays: 30,
        refusalToldHours: 24,
        privateAlertDays: 30,
      },
    })
  })

  it.each([
    ['disputeAnswerHours', 1, 72],
    ['ratingEditDays', 1, 90],
    ['lowRating', 0, 4],
    ['unpaidOrderHours', 1, 168],
    ['stallSeconds', 30, 3600],
    ['deadLetterMinutes', 1, 1440],
  ])('%s takes whole numbers from %i to %i', (field, min, max) => {
    expect(ok({ [field]: min })).toBe(true)
    expect(ok({ [field]: max })).toBe(true)
    expect(ok({ [field]: min - 1 })).toBe(false)
    expect(ok({ [field]: max + 1 })).toBe(false)
    expect(ok({ [field]: min + 0.5 })).toBe(false)
  })

  it.each([
    ['processedUpdateHours', 24, 144],
    ['inboxUpdateHours', 24, 144],
    ['outboundMessageDays', 30, 365],
    ['conversationStateDays', 1, 365],
    ['refusalToldHours', 1, 720],
    ['privateAlertDays', 8, 365],
  ])('retention.%s keeps its minimum %i, at most %i', (field, min, max) => {
    expect(ok({ retention: { [field]: min } })).toBe(true)
    expect(ok({ retention: { [field]: max } })).toBe(true)
    expect(ok({ retention: { [field]: min - 1 } })).toBe(false)
    expect(ok({ retention: { [field]: max + 1 } })).toBe(false)
  })

  it('zones: IANA zones (luxon), one at least, 24 at most, none twice', () => {
    expect(ok({ zones: ['Europe/Moscow'] })).toBe(true)
    expect(ok({ zones: ['America/Chicago', 'UTC'] })).toBe(true)
    expect(ok({ zones: [] })).toBe(false)
    expect(ok({ zones: ['Mars/Olympus'] })).toBe(false)
    expect(ok({ zones: ['Europe/Moscow', 'Europe/Moscow'] })).toBe(false)
    expect(ok({ zones: Array.from({ length: 25 }, (_, i) => `Etc/GMT+${i % 12}`) })).toBe(false)
  })

  it('languages: a subset of the locales, one at least, none twice', () => {
    expect(ok({ languages: ['en'] })).toBe(true)
    expect(ok({ languages: ['ru'] })).toBe(true)
    expect(ok({ languages: [] })).toBe(false)
    expect(ok({ languages: ['de'] })).toBe(false)
    expect(ok({ languages: ['en', 'en'] })).toBe(false)
    expect(ok({ unknownRule: 1 })).toBe(false)
  })

  it("the desk's default language must be offered; others answer in it", () => {
    const desk = {
      slug: 'd',
      name: { ru: 'Д' },
      tokenEnv: 'T',
      staff: {},
      schedule: { timezone: 'Europe/Moscow', weekly: {} },
      terms: { version: '1', text: { ru: 'у' } },
      privacy: { ru: 'п' },
    }
    expect(deskSchema.safeParse(desk).success).toBe(true)
    const r = deskSchema.safeParse({ ...desk, rules: { languages: ['en'] } })
    expect(r.success).toBe(false)
    expect(r.error?.issues.map((i) => i.path.join('.'))).toEqual(['rules.languages'])
    const ruOnly = deskSchema.parse({ ...desk, rules: { languages: ['ru'] } })
    expect(deskLanguage(ruOnly, 'en-US')).toBe('ru')
    expect(deskLanguage(deskSchema.parse(desk), 'en-US')).toBe('en')
  })
})
