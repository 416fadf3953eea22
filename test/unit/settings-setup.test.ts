import { describe, expect, it } from 'vitest'
import { firstRunDesk } from '../../src/config/defaults'
import { deskSchema } from '../../src/config/schema'
import { isSetUp, openForSale, setupGaps } from '../../src/settings/setup'

/** A desk being set up (issue 24): what the document allows unset, and what it takes to sell. */

const base = () => deskSchema.parse(firstRunDesk({ DESK_LANGUAGE: 'ru', TZ: 'Asia/Tbilisi' }))
const tariff = {
  code: 'q',
  title: { ru: 'Разбор' },
  description: { ru: 'Три вопроса.' },
  priceStars: 100,
  windowHours: 24,
  appeals: 3,
  slaBusinessHours: 4,
  startMode: 'immediate' as const,
}

describe('a desk being set up', () => {
  it('the first-run desk is valid with no group, no staff and no tariffs, in the language and zone asked', () => {
    const d = base()
    expect(d).toMatchObject({ defaultLanguage: 'ru', schedule: { timezone: 'Asia/Tbilisi' }, tariffs: [] })
    expect(setupGaps(d)).toEqual(['no-owner', 'no-staff-group', 'no-tariff'])
    expect(openForSale(d)).toBe(false)
    expect(deskSchema.parse(firstRunDesk({ DESK_LANGUAGE: 'xx', TZ: ':/etc/localtime' }))).toMatchObject({
      defaultLanguage: 'en',
      schedule: { timezone: 'UTC' },
    })
  })

  it('sells once it has an owner (or admins, as a YAML desk does), a staff group and a tariff', () => {
    const d = base()
    d.staff.owner = 5
    d.staff.admins = [5]
    expect(setupGaps(d)).toEqual(['no-staff-group', 'no-tariff'])
    d.staffChatId = -1001
    expect(openForSale(d)).toBe(true)
    expect(isSetUp(d)).toBe(false)
    d.tariffs = [deskSchema.shape.tariffs.parse([tariff])[0]!]
    expect(isSetUp(d)).toBe(true)
    const yaml = { ...d, staff: { ...d.staff, owner: undefined, admins: [7] } }
    expect(setupGaps(yaml)).toEqual([])
  })

  it('the owner must be one of the admins; staff groups need the home group', () => {
    const r = deskSchema.safeParse({ ...firstRunDesk({}), staff: { owner: 5, admins: [6] } })
    expect(r.success).toBe(false)
    expect(r.error!.issues.map((i) => [i.path.join('.'), i.message])).toEqual([
      ['staff.owner', 'not one of staff.admins'],
    ])
    const g = deskSchema.safeParse({ ...firstRunDesk({}), staffGroups: [{ chatId: -1002 }] })
    expect(g.error!.issues.map((i) => i.path.join('.'))).toEqual(['staffChatId'])
  })
})
