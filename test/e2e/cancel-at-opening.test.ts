import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runScheduledStart } from '../../src/consultations/start.service'
import { dayAccount, freePlaces } from '../../src/orders/capacity'
import { cancelBeforeStart } from '../../src/payments/change-start'
import {
  auditCount,
  buy,
  openTwelveHoursAhead,
  orderState,
  type PayWorld,
  pay,
  preCheckout,
  startPayWorld,
  TEST_BOT_ID,
} from './payments-support'

/**
 * Issue 26: an immediate consultation bought outside hours to start at the desk's opening can be cancelled, with a
 * refund through the refund path, until it starts (the scheduled-start job at the opening); the place of that day
 * goes back. The cancel and the start job both take the order's lock: 20 rounds, never both.
 */

const { opening, configure } = openTwelveHoursAhead(30, 'hour')
const OPENING = opening.toJSDate()

let w: PayWorld
beforeAll(async () => {
  w = await startPayWorld(configure)
})
afterAll(() => w?.stop())

const freeThatDay = async () =>
  (await freePlaces(w.deps.db, TEST_BOT_ID, [dayAccount(w.t.desk, 'quick', 50, OPENING)]))[0]

async function paidAtOpening() {
  const u = w.tg.user({ language_code: 'en' })
  const o = await buy(w, u, 'quick', OPENING)
  expect((await preCheckout(w, u, o)).ok).toBe(true)
  const { charge } = await pay(w, u, o)
  await w.tg.waitForSent(u.id, /Payment received/)
  const s = await orderState(w.deps, o.orderId)
  expect(s.order).toMatchObject({ state: 'paid_waiting', start_mode: 'immediate' })
  return { u, o, charge, s }
}

describe('cancelling an immediate start that waits for the opening', () => {
  it('/status offers Cancel; 100 ⭐ are refunded at the stand-in and the day’s place is free again', async () => {
    const before = await freeThatDay()
    const { u, o, charge } = await paidAtOpening()
    expect(await freeThatDay()).toBe(before! - 1)
    await w.tg.push(TEST_BOT_ID, w.tg.command(u, '/status'))
    const status = await w.tg.waitForSent(u.id, /Your orders/)
    expect(JSON.stringify(status.reply_markup)).toContain(`ord:cx:${o.orderId}`)
    expect(JSON.stringify(status.reply_markup)).not.toContain(`ord:mv:${o.orderId}`)
    await w.tg.push(TEST_BOT_ID, w.tg.callback(u, `ord:cx:${o.orderId}`))
    await w.tg.waitForSent(u.id, /Cancel “Quick review” and get 100 ⭐ back\?/)
    await w.tg.push(TEST_BOT_ID, w.tg.callback(u, `ord:cxy:${o.orderId}`))
    await w.tg.waitForSent(u.id, /100 ⭐ for “Quick review” have been refunded to you/)
    const calls = w.tg.callsTo('refundStarPayment', { user_id: u.id })
    expect(calls).toHaveLength(1)
    expect(calls[0]!.payload).toMatchObject({ telegram_payment_charge_id: charge })
    const s = await orderState(w.deps, o.orderId)
    expect(s.order.state).toBe('refunded')
    expect(s.payments[0]).toMatchObject({ total_amount: 100, refund_source: 'client' })
    expect(s.consultation!.state).toBe('revoked')
    expect(await freeThatDay()).toBe(before)
    // The start job at the opening starts nothing.
    expect(
      await runScheduledStart(w.deps, {
        consultationId: s.consultation!.id,
        startsAt: OPENING.toISOString(),
      }),
    ).toBe('nothing')
  })

  it('20 rounds of a cancel just before the opening against the start job: never both', async () => {
    const outcomes: string[] = []
    for (let round = 0; round < 20; round++) {
      const { u, o, charge, s: paid } = await paidAtOpening()
      // The opening moved to 300 ms from now: the cancel's deadline and the start job's instant.
      const moved = await w.deps.db
        .updateTable('orders')
        .set({ slot_start: sql<Date>`now() + make_interval(secs => 0.3)` })
        .where('id', '=', o.orderId)
        .returning('slot_start')
        .executeTakeFirstOrThrow()
      const job = { consultationId: paid.consultation!.id, startsAt: moved.slot_start!.toISOString() }
      const [cancel] = await Promise.all([
        cancelBeforeStart(w.deps, w.t.desk, { orderId: o.orderId, userId: u.id }),
        runScheduledStart(w.deps, job),
      ])
      // A start that waited for the refund runs again (as its job would).
      await runScheduledStart(w.deps, job)
      const s = await orderState(w.deps, o.orderId)
      const activations = await auditCount(w.deps, 'consultation.activated', s.consultation!.id)
      const calls = w.tg.callsTo('refundStarPayment', { telegram_payment_charge_id: charge }).length
      if (cancel.ok) {
        outcomes.push('cancelled')
        expect(cancel.refund.status).toBe('refunded')
        expect(s.order.state).toBe('refunded')
        expect(s.consultation!.state).toBe('revoked')
        expect(activations).toBe(0)
        expect(calls).toBe(1)
      } else {
        outcomes.push(cancel.code)
        expect(['started', 'too-late']).toContain(cancel.code)
        expect(s.order.state).toBe('active')
        expect(s.payments[0]!.refunded_at).toBeNull()
        expect(activations).toBe(1)
        expect(calls).toBe(0)
      }
    }
    console.log(`cancel vs start at the opening, 20 rounds: ${JSON.stringify(outcomes)}`)
  }, 300_000)
})
