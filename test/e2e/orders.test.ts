import { sql } from 'kysely'
import { DateTime } from 'luxon'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { activateConsultation } from '../../src/consultations/activation'
import { InvalidTransitionError, lockOrder, moveOrder, ORDER_TRANSITIONS } from '../../src/orders/order-state'
import { sweepOrders } from '../../src/orders/orders.service'
import {
  buy,
  orderState,
  type PayWorld,
  pay,
  preCheckout,
  STAFF_CHAT_ID,
  startPayWorld,
  TEST_BOT_ID,
} from './payments-support'

/** Order states over time: the sweeper, paying a cancelled order, the Start period, activation idempotency. */

let w: PayWorld
beforeAll(async () => {
  w = await startPayWorld()
})
afterAll(() => w?.stop())

describe('the transition table', () => {
  it('refuses moves that are not in the table, under the row lock', async () => {
    const u = w.tg.user()
    const o = await buy(w, u, 'quick')
    await expect(
      w.deps.db.transaction().execute(async (trx) => {
        const order = (await lockOrder(trx, o.orderId))!
        await moveOrder(trx, order, 'refunded')
      }),
    ).rejects.toBeInstanceOf(InvalidTransitionError)
    expect(ORDER_TRANSITIONS.refunded).toEqual([])
    expect((await orderState(w.deps, o.orderId)).order.state).toBe('created')
  })
})

describe('sweeper', () => {
  it('cancels orders left unpaid for a day; a payment that still arrives for one is honoured', async () => {
    const u = w.tg.user()
    const o = await buy(w, u, 'quick')
    await w.deps.db
      .updateTable('orders')
      .set({ created_at: sql<Date>`now() - interval '25 hours'` })
      .where('id', '=', o.orderId)
      .execute()
    // The sweeper's own schedule (every minute) may get there first: whoever sweeps, the order ends cancelled.
    await sweepOrders(w.deps)
    expect((await orderState(w.deps, o.orderId)).order).toMatchObject({
      state: 'cancelled',
      cancel_reason: 'unpaid',
    })
    expect((await preCheckout(w, u, o)).error_message).toMatch(/This order was cancelled/)

    // Telegram took the Stars anyway (e.g. a pre-checkout accepted just before): never rejected, never dropped.
    await pay(w, u, o)
    await w.tg.waitForSent(u.id, /is active/)
    const s = await orderState(w.deps, o.orderId)
    expect(s.order.state).toBe('active')
    expect(s.payments).toHaveLength(1)
  })

  it('an on_request order whose Start period ended is flagged; the client is offered starts or a refund', async () => {
    const u = w.tg.user()
    const o = await buy(w, u, 'later')
    await preCheckout(w, u, o)
    await pay(w, u, o)
    await w.tg.waitForSent(u.id, /press “Start”/)
    await w.deps.db
      .updateTable('orders')
      .set({ start_by: sql<Date>`now() - interval '1 minute'` })
      .where('id', '=', o.orderId)
      .execute()
    const r = await sweepOrders(w.deps)
    expect(r.startPeriodsEnded).toBe(1)
    expect((await sweepOrders(w.deps)).startPeriodsEnded).toBe(0)
    expect((await orderState(w.deps, o.orderId)).order.needs_start_date).toBe(true)
    const msg = await w.tg.waitForSent(u.id, /The period to start/)
    await w.tg.waitForSent(STAFF_CHAT_ID, new RegExp(`Заказ ${o.orderId} `))

    // The old Start button no longer starts it.
    await w.tg.push(TEST_BOT_ID, w.tg.callback(u, `ord:start:${o.orderId}`))
    await w.tg.waitFor('answerCallbackQuery', (p) =>
      /choose a start date for this order first/.test(p.text ?? ''),
    )

    await w.tg.push(TEST_BOT_ID, w.tg.callback(u, `ord:opts:${o.orderId}`, msg))
    const opts = await w.tg.waitForSent(u.id, /choose a start:/)
    const first: string = (opts.reply_markup as any).inline_keyboard[0][0].callback_data
    expect(first).toMatch(new RegExp(`^ord:at:${o.orderId}:\\d+$`))
    // A "today" button names an instant that is past by the time it is pressed: it still means today, from now.
    const startOfToday = DateTime.now().setZone('Europe/Moscow').startOf('day').toSeconds()
    await w.tg.push(TEST_BOT_ID, w.tg.callback(u, `ord:at:${o.orderId}:${startOfToday + 1}`, opts))
    // The desk is open around the clock, so the first option is "now": the window starts at once.
    await w.tg.waitForSent(u.id, /is active/)
    expect((await orderState(w.deps, o.orderId)).order).toMatchObject({
      state: 'active',
      needs_start_date: false,
    })
  })
})

describe('activation', () => {
  it('is idempotent: a second activation returns the window and writes nothing', async () => {
    const u = w.tg.user()
    const o = await buy(w, u, 'later')
    await preCheckout(w, u, o)
    await pay(w, u, o)
    await w.tg.waitForSent(u.id, /press “Start”/)
    const c = (await orderState(w.deps, o.orderId)).consultation!
    const run = () =>
      w.deps.jobs.transaction(w.deps.db, (trx, outbox) =>
        activateConsultation(trx, outbox, w.deps, { consultationId: c.id, actorId: null, reason: 'admin' }),
      )
    const [a, b] = await Promise.all([run(), run()])
    expect([a.status, b.status].sort()).toEqual(['activated', 'already-active'])
    const after = (await orderState(w.deps, o.orderId)).consultation!
    const again = await run()
    expect(again.status).toBe('already-active')
    expect(again.status === 'already-active' && again.consultation.starts_at).toEqual(after.starts_at)
    const grants = await w.deps.db
      .selectFrom('ledger_grant')
      .select('request_id')
      .where('request_id', 'like', `consultation:${c.id}:%`)
      .execute()
    expect(grants).toHaveLength(2)
  })

  it('does not start a refunded consultation', async () => {
    const u = w.tg.user()
    const o = await buy(w, u, 'later')
    await preCheckout(w, u, o)
    const { charge } = await pay(w, u, o)
    await w.tg.waitForSent(u.id, /press “Start”/)
    await w.tg.push(
      TEST_BOT_ID,
      w.tg.refundedPayment(u, {
        invoice_payload: o.payload,
        total_amount: 150,
        telegram_payment_charge_id: charge,
      }),
    )
    await w.tg.waitForSent(u.id, /refunded to you/)
    await w.tg.push(TEST_BOT_ID, w.tg.callback(u, `ord:start:${o.orderId}`))
    await w.tg.waitFor('answerCallbackQuery', (p) => p.text === 'This order was refunded.')
    const s = await orderState(w.deps, o.orderId)
    expect(s.order.state).toBe('refunded')
    expect(s.consultation).toMatchObject({ state: 'revoked', starts_at: null })
  })
})
