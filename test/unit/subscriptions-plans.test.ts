import { describe, expect, it } from 'vitest'
import {
  changeStartsAt,
  parsePlanPayload,
  periodEnd,
  reminderAt,
  SUBSCRIPTION_PERIOD_SECONDS,
} from '../../src/subscriptions/plans'

describe('plans: the change rule, periods and payloads', () => {
  const at = (iso: string) => new Date(iso)

  it('a change of plan starts when the paid time ends; paid after it (in the grace), at the payment', () => {
    const paidUntil = at('2026-12-31T10:00:00Z')
    expect(changeStartsAt(paidUntil, at('2026-12-10T00:00:00Z'))).toEqual(paidUntil)
    expect(changeStartsAt(paidUntil, paidUntil)).toEqual(paidUntil)
    expect(changeStartsAt(paidUntil, at('2027-01-01T00:00:00Z'))).toEqual(at('2027-01-01T00:00:00Z'))
  })

  it('every charge buys exactly 30 days (2592000 s) from its period start', () => {
    expect(periodEnd(at('2026-12-01T00:00:00Z'))).toEqual(at('2026-12-31T00:00:00Z'))
    expect(periodEnd(at('2026-12-01T00:00:00Z')).getTime() - at('2026-12-01T00:00:00Z').getTime()).toBe(
      SUBSCRIPTION_PERIOD_SECONDS * 1000,
    )
  })

  it('the renewal reminder is due a day before the next charge', () => {
    expect(reminderAt(at('2026-12-31T10:00:00Z'))).toEqual(at('2026-12-30T10:00:00Z'))
  })

  it('payloads: s:<order> is a plan link (a purchase or a change); anything else is not a plan', () => {
    expect(parsePlanPayload('s:12')).toEqual({ kind: 'subscribe', orderId: 12 })
    for (const p of ['o:12', 's:0', 's:', 's:1x', 'x:1', 'u:7', 's:99999999999999999'])
      expect(parsePlanPayload(p)).toBeUndefined()
  })
})
