import { DateTime } from 'luxon'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buy, orderState, type PayWorld, pay, preCheckout, startPayWorld } from './payments-support'

/**
 * Daily places count working days only (issue 14): the desk below works on one weekday only, two days from now. An
 * immediate tariff bought today (no working hours) takes a place of that working day, and the card and the order
 * say when the first answer can come.
 */

const ZONE = 'Europe/Moscow'
const WEEKDAY_KEYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const
const workDay = DateTime.now().setZone(ZONE).plus({ days: 2 })

let w: PayWorld
beforeAll(async () => {
  w = await startPayWorld((c) => {
    const s = c.desks[0]!.schedule
    s.weekly = { [WEEKDAY_KEYS[workDay.weekday - 1]!]: ['10:00-18:00'] }
    s.holidays = []
    s.extraWorkingDays = {}
  })
})
afterAll(() => w?.stop())

describe('working days', () => {
  it('an immediate start on a day off takes a place of the next working day', async () => {
    const u = w.tg.user({ language_code: 'en' })
    const since = w.tg.mark()
    const o = await buy(w, u, 'quick', 'now')
    expect((await preCheckout(w, u, o)).ok).toBe(true)
    const { order } = await orderState(w.deps, o.orderId)
    expect(order.capacity_key).toBe(`day:quick:${workDay.toISODate()}`)
    // The client was told before the invoice when the answer clock starts (the desk's next opening).
    const warning = await w.tg.waitForSent(u.id, /The desk is closed now/, { since })
    expect(warning.text).toContain(workDay.toFormat('d'))
    // Paid: the activation says when the first answer can come.
    await pay(w, u, o)
    const active = await w.tg.waitForSent(u.id, /is active/)
    expect(active.text).toMatch(/the expert's answers start when it opens, .*10:00/)
  })
})
