import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { reconcileDesk } from '../../src/payments/reconciliation'
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

/** The daily reconciliation of the payments table against getStarTransactions (the stand-in's list). */

let w: PayWorld
beforeAll(async () => {
  w = await startPayWorld()
})
afterAll(() => w?.stop())

async function paid() {
  const u = w.tg.user()
  const o = await buy(w, u, 'quick')
  await preCheckout(w, u, o)
  const { charge } = await pay(w, u, o)
  await w.tg.waitForSent(u.id, /is active/)
  return { u, charge, payment: (await orderState(w.deps, o.orderId)).payments[0]! }
}

describe('reconciliation', () => {
  it('reports each kind of mismatch and nothing for payments that agree', async () => {
    const ok = await paid()
    const differs = await paid()
    const onlyHere = await paid()
    const refundedHere = await paid()
    const stranger = w.tg.user()
    const now = Math.floor(Date.now() / 1000)
    w.tg.setStarTransactions(TEST_BOT_ID, [
      w.tg.starTransaction(ok.u, { id: ok.charge, amount: 100 }),
      w.tg.starTransaction(differs.u, { id: differs.charge, amount: 90 }),
      w.tg.starTransaction(refundedHere.u, { id: refundedHere.charge, amount: 100 }),
      w.tg.starTransaction(stranger, { id: 'only-at-telegram', amount: 100 }),
      // A refund made at Telegram that our table does not know about.
      {
        id: ok.charge,
        amount: 100,
        date: now,
        receiver: { type: 'user', transaction_type: 'invoice_payment', user: ok.u },
      },
    ])
    await w.deps.db
      .updateTable('payment')
      .set({ refunded_at: sql`now()`, refund_source: 'admin' })
      .where('id', '=', refundedHere.payment.id)
      .execute()

    // Payments younger than the grace period are not compared yet: look from a little later.
    const report = await reconcileDesk(w.deps, w.t.desk, new Date(Date.now() + 20 * 60_000))
    const kinds = report.mismatches.map((m) => [m.kind, m.charge]).sort()
    expect(kinds).toEqual(
      [
        ['amount-differs', differs.charge],
        ['missing-at-telegram', onlyHere.charge],
        ['missing-in-db', 'only-at-telegram'],
        ['refund-missing-at-telegram', refundedHere.charge],
        ['refund-missing-in-db', ok.charge],
      ].sort(),
    )
    expect(report.mismatches.find((m) => m.kind === 'amount-differs')).toMatchObject({
      telegramAmount: 90,
      dbAmount: 100,
    })
    expect(report.telegramPayments).toBe(4)
    expect(report.dbPayments).toBe(4)
  })

  it('/reconcile runs it now and reports to the staff group; non-admins may not', async () => {
    await w.tg.push(TEST_BOT_ID, w.tg.command(w.admin, '/reconcile'))
    await w.tg.waitForSent(w.admin.id, /Reconciliation with Telegram started/)
    await w.tg.waitForSent(STAFF_CHAT_ID, /Сверка/)
    const u = w.tg.user()
    await w.tg.push(TEST_BOT_ID, w.tg.command(u, '/reconcile'))
    await w.tg.waitForSent(u.id, "Only the desk's administrators can do this.")
  })
})
