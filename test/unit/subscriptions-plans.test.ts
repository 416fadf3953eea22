import { describe, expect, it } from 'vitest'
import type { PlanConfig } from '../../src/config/schema'
import { parsePlanPayload, upgradeDelta, upgradePrice } from '../../src/subscriptions/plans'

const plan = (p: Partial<PlanConfig> & Pick<PlanConfig, 'code'>): PlanConfig => ({
  kind: 'subscription',
  title: { en: p.code },
  description: { en: p.code },
  priceStars: 500,
  questions: 10,
  drafts: 0,
  slaBusinessHours: 4,
  features: { attachments: true, prioritySla: false, transcriptExport: true },
  carryOver: 'none',
  refundPolicy: 'keep_used',
  upgradeGrant: 'difference',
  terms: { version: 'v1', text: { en: 't' } },
  ...p,
})

describe('plans: upgrade grants and payloads', () => {
  const from = plan({ code: 'a', questions: 10, priceStars: 500 })
  const period = { start: new Date('2026-12-01T00:00:00Z'), end: new Date('2026-12-31T00:00:00Z') }
  const at = (iso: string) => new Date(iso)

  it('difference: the allowance difference, whatever is left of the period', () => {
    const to = plan({ code: 'b', questions: 25, upgradeGrant: 'difference' })
    expect(upgradeDelta(from, to, 12, period, at('2026-12-30T00:00:00Z'))).toBe(15)
  })

  it('full: the period grant becomes the new allowance (a carry-over already in it counts)', () => {
    const to = plan({ code: 'b', questions: 25, upgradeGrant: 'full' })
    expect(upgradeDelta(from, to, 10, period, at('2026-12-10T00:00:00Z'))).toBe(15)
    expect(upgradeDelta(from, to, 12, period, at('2026-12-10T00:00:00Z'))).toBe(13)
    expect(upgradeDelta(from, to, 30, period, at('2026-12-10T00:00:00Z'))).toBe(0)
  })

  it('prorate: the difference times the share of the period left, rounded up', () => {
    const to = plan({ code: 'b', questions: 25, upgradeGrant: 'prorate' })
    expect(upgradeDelta(from, to, 10, period, period.start)).toBe(15)
    expect(upgradeDelta(from, to, 10, period, at('2026-12-16T00:00:00Z'))).toBe(8) // 15 * 15/30 = 7.5
    expect(upgradeDelta(from, to, 10, period, at('2026-12-30T00:00:00Z'))).toBe(1) // 15 * 1/30 = 0.5
    expect(upgradeDelta(from, to, 10, period, period.end)).toBe(0)
  })

  it('the price of an upgrade is the difference, at least 1 Star', () => {
    expect(upgradePrice(from, plan({ code: 'b', priceStars: 900 }))).toBe(400)
    expect(upgradePrice(from, plan({ code: 'b', priceStars: 500 }))).toBe(1)
  })

  it('payloads: s:<order> subscribes, u:<order> upgrades, anything else is not a plan', () => {
    expect(parsePlanPayload('s:12')).toEqual({ kind: 'subscribe', orderId: 12 })
    expect(parsePlanPayload('u:7')).toEqual({ kind: 'upgrade', orderId: 7 })
    for (const p of ['o:12', 's:0', 's:', 's:1x', 'x:1', 's:99999999999999999'])
      expect(parsePlanPayload(p)).toBeUndefined()
  })
})
