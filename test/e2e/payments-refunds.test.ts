import type { User } from 'grammy/types'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sweepOrders } from '../../src/orders/orders.service'
import { refundPayment } from '../../src/payments/refunds'
import { TgErrors } from '../support/bot-api'
import { inboxDrained } from '../support/fixtures'
import {
  auditCount,
  buy,
  consultationAccounts,
  jobsIn,
  orderState,
  type PayWorld,
  pay,
  preCheckout,
  STAFF_CHAT_ID,
  startPayWorld,
  TEST_BOT_ID,
  tariff,
} from './payments-support'

/**
 * Refunds (admin button with confirmation, Telegram's answers, concurrent presses, refunds made elsewhere) and
 * payments that arrive after their hold lapsed. Webhook mode: a push returns once the update is stored in the
 * inbox; the tests wait for the inbox to drain before they look at the effects.
 */

const SECOND_ADMIN = 900003
let w: PayWorld
let admin2: User
beforeAll(async () => {
  w = await startPayWorld(
    (c) => {
      const desk = c.desks[0]!
      desk.staff.admins.push(SECOND_ADMIN)
      desk.tariffs.push(tariff({ code: 'one', dailyCapacity: 1 }))
    },
    { mode: 'webhook' },
  )
  admin2 = w.tg.user({ id: SECOND_ADMIN, language_code: 'en' })
})
afterAll(() => w?.stop())

async function paidOrder(code = 'quick') {
  const u = w.tg.user({ language_code: 'en' })
  const o = await buy(w, u, code)
  expect((await preCheckout(w, u, o)).ok).toBe(true)
  const { charge } = await pay(w, u, o)
  const { payments } = await orderState(w.deps, o.orderId)
  return { u, o, charge, payment: payments[0]! }
}

describe('admin refund', () => {
  it('asks for confirmation, refunds in Telegram, then revokes the consultation under the written policy', async () => {
    const { u, o, charge, payment } = await paidOrder()
    await w.tg.push(TEST_BOT_ID, w.tg.command(w.admin, '/refund', charge))
    const confirm = await w.tg.waitForSent(w.admin.id, /Refund payment \d+ \(payment\): 100 ⭐/)
    expect(JSON.stringify(confirm.reply_markup)).toContain(`rf:yes:${payment.id}`)
    expect(w.tg.callsTo('refundStarPayment', { telegram_payment_charge_id: charge })).toHaveLength(0)

    await w.tg.push(TEST_BOT_ID, w.tg.callback(w.admin, `rf:yes:${payment.id}`, confirm))
    const call = await w.tg.waitFor('refundStarPayment', { telegram_payment_charge_id: charge })
    expect(call.payload.user_id).toBe(u.id)
    await w.tg.waitFor('editMessageText', (p) => /✅ Refunded: payment/.test(p.text))

    const { order, payments, consultation } = await orderState(w.deps, o.orderId)
    expect(order.state).toBe('refunded')
    expect(payments[0]).toMatchObject({ refunded_by: w.admin.id, refund_source: 'admin' })
    expect(payments[0]!.refunded_at).toBeInstanceOf(Date)
    expect(consultation).toMatchObject({ state: 'revoked', refund_policy: 'deliver' })
    const accounts = await consultationAccounts(w.deps, consultation!.id)
    expect(accounts.every((a) => a.active === false)).toBe(true)
    await w.tg.waitForSent(u.id, /answers to questions already accepted will still be delivered/)

    // The same button again: nothing more happens.
    await w.tg.push(TEST_BOT_ID, w.tg.callback(w.admin, `rf:yes:${payment.id}`, confirm))
    await w.tg.waitFor('editMessageText', (p) => /is already refunded; nothing was done/.test(p.text))
    expect(w.tg.callsTo('refundStarPayment', { telegram_payment_charge_id: charge })).toHaveLength(1)
    expect(await auditCount(w.deps, 'payment.refunded', payment.id)).toBe(1)
  })

  it('CHARGE_ALREADY_REFUNDED from Telegram counts as a refund', async () => {
    const { o, payment } = await paidOrder()
    w.tg.fail('refundStarPayment', TgErrors.chargeAlreadyRefunded)
    const r = await refundPayment(
      w.deps,
      w.t.desk,
      { paymentId: payment.id },
      { id: w.admin.id, source: 'admin' },
    )
    expect(r).toMatchObject({ status: 'refunded', alreadyAtTelegram: true })
    expect((await orderState(w.deps, o.orderId)).order.state).toBe('refunded')
  })

  it("another error is shown to the admin with Telegram's description and changes nothing", async () => {
    const { o, charge, payment } = await paidOrder()
    w.tg.fail('refundStarPayment', TgErrors.chargeNotFound)
    await w.tg.push(TEST_BOT_ID, w.tg.callback(w.admin, `rf:yes:${payment.id}`))
    const shown = await w.tg.waitFor(
      ['editMessageText', 'sendMessage'],
      (p) => p.chat_id === w.admin.id && /failed/.test(p.text),
    )
    expect(shown.payload.text).toBe(
      `❌ Refund of payment ${payment.id} (charge ${charge}) failed; nothing was changed. Telegram answered: Bad Request: CHARGE_NOT_FOUND`,
    )
    const s = await orderState(w.deps, o.orderId)
    expect(s.order.state).toBe('active')
    expect(s.payments[0]).toMatchObject({
      refunded_at: null,
      refund_started_at: null,
      refund_error: 'Bad Request: CHARGE_NOT_FOUND',
    })
    // The admin can try again.
    const again = await refundPayment(
      w.deps,
      w.t.desk,
      { paymentId: payment.id },
      { id: w.admin.id, source: 'admin' },
    )
    expect(again.status).toBe('refunded')
  })

  it('an overpayment refund leaves the paid order as it is', async () => {
    const { u, o } = await paidOrder()
    await pay(w, u, o)
    const extra = (await orderState(w.deps, o.orderId)).payments[1]!
    expect(extra.kind).toBe('overpayment')
    const r = await refundPayment(
      w.deps,
      w.t.desk,
      { paymentId: extra.id },
      { id: w.admin.id, source: 'admin' },
    )
    expect(r.status).toBe('refunded')
    const s = await orderState(w.deps, o.orderId)
    expect(s.order.state).toBe('active')
    expect(s.consultation!.state).toBe('active')
    await w.tg.waitForSent(u.id, '↩️ 100 ⭐ have been refunded to you.')
  })
})

describe('two refunds at once', () => {
  it('two admins pressing Refund at the same moment: one refund, one effect', async () => {
    const { charge, payment, o } = await paidOrder()
    const [a, b] = await Promise.all([
      w.tg.push(TEST_BOT_ID, w.tg.callback(w.admin, `rf:yes:${payment.id}`)),
      w.tg.push(TEST_BOT_ID, w.tg.callback(admin2, `rf:yes:${payment.id}`)),
    ])
    expect([a.status, b.status]).toEqual([200, 200])
    await inboxDrained(w.deps.db)
    expect(w.tg.callsTo('refundStarPayment', { telegram_payment_charge_id: charge })).toHaveLength(1)
    expect((await orderState(w.deps, o.orderId)).order.state).toBe('refunded')
    expect(await auditCount(w.deps, 'payment.refunded', payment.id)).toBe(1)
    expect(await jobsIn(w.deps, 'tg.notify', { dedupeKey: `payment:${payment.id}:refunded` })).toBe(1)
  })

  it('directly, 10 rounds of two concurrent refunds of one payment: exactly one takes effect', async () => {
    for (let round = 0; round < 10; round++) {
      const { payment, charge } = await paidOrder()
      const results = await Promise.all(
        [w.admin.id, SECOND_ADMIN].map((id) =>
          refundPayment(w.deps, w.t.desk, { paymentId: payment.id }, { id, source: 'admin' }),
        ),
      )
      expect(results.filter((r) => r.status === 'refunded')).toHaveLength(1)
      expect(
        results.filter((r) => r.status === 'in-progress' || r.status === 'already-refunded'),
      ).toHaveLength(1)
      expect(w.tg.callsTo('refundStarPayment', { telegram_payment_charge_id: charge })).toHaveLength(1)
      expect(await auditCount(w.deps, 'payment.refunded', payment.id)).toBe(1)
    }
  })
})

describe('refunded_payment (a refund made elsewhere)', () => {
  it('takes the same path, once, however often it arrives', async () => {
    const { u, o, charge, payment } = await paidOrder()
    for (let i = 0; i < 2; i++)
      await w.tg.push(
        TEST_BOT_ID,
        w.tg.refundedPayment(u, {
          invoice_payload: o.payload,
          total_amount: 100,
          telegram_payment_charge_id: charge,
        }),
      )
    await inboxDrained(w.deps.db)
    const s = await orderState(w.deps, o.orderId)
    expect(s.order.state).toBe('refunded')
    expect(s.payments[0]).toMatchObject({ refund_source: 'telegram', refunded_by: null })
    expect(s.consultation!.state).toBe('revoked')
    expect(await auditCount(w.deps, 'payment.refunded', payment.id)).toBe(1)
    expect(w.tg.callsTo('refundStarPayment', { telegram_payment_charge_id: charge })).toHaveLength(0)
    await w.tg.waitForSent(u.id, /have been refunded to you/)
    // Refunded elsewhere: news for the staff (an admin's own refund is answered where the admin pressed).
    await w.tg.waitForSent(STAFF_CHAT_ID, new RegExp(`Платёж ${payment.id} возвращён.+по сообщению Telegram`))
  })

  it('for a charge we never recorded, the admins are told', async () => {
    const u = w.tg.user()
    await w.tg.push(
      TEST_BOT_ID,
      w.tg.refundedPayment(u, {
        invoice_payload: 'o:1',
        total_amount: 5,
        telegram_payment_charge_id: 'ghost-charge',
      }),
    )
    await w.tg.waitForSent(STAFF_CHAT_ID, /ghost-charge/)
  })
})

describe('payment after the hold lapsed', () => {
  it('is saved, the client is offered the next free start or a refund, the admins are told', async () => {
    const late = w.tg.user({ language_code: 'en' })
    const other = w.tg.user({ language_code: 'en' })
    const a = await buy(w, late, 'one')
    const b = await buy(w, other, 'one')
    expect((await preCheckout(w, late, a)).ok).toBe(true)
    // The hold lapses and the sweeper frees the only place of the day; another client takes it.
    await w.deps.db
      .updateTable('orders')
      .set({ hold_expires_at: new Date(Date.now() - 1000) })
      .where('id', '=', a.orderId)
      .execute()
    await sweepOrders(w.deps)
    expect((await preCheckout(w, other, b)).ok).toBe(true)

    await pay(w, late, a)
    const msg = await w.tg.waitForSent(late.id, /The place held for you expired before the payment arrived/)
    const s = await orderState(w.deps, a.orderId)
    expect(s.order).toMatchObject({ state: 'paid_waiting', needs_start_date: true })
    expect(s.payments).toHaveLength(1)
    expect(s.consultation!.state).toBe('waiting')
    await w.tg.waitForSent(STAFF_CHAT_ID, new RegExp(`Поздняя оплата ${s.payments[0]!.id}`))
    const buttons: { callback_data?: string }[] = (msg.reply_markup as any)?.inline_keyboard?.flat() ?? []
    const startAt = buttons.find((x) => x.callback_data?.startsWith(`ord:at:${a.orderId}:`))
    expect(startAt).toBeDefined()
    expect(buttons.some((x) => x.callback_data === `ord:refund:${a.orderId}`)).toBe(true)

    // The client takes the next free start (tomorrow's opening): a place of that day, activation at that time.
    await w.tg.push(TEST_BOT_ID, w.tg.callback(late, startAt!.callback_data!, msg))
    await w.tg.waitForSent(late.id, /your window starts/)
    const agreed = await orderState(w.deps, a.orderId)
    expect(agreed.order.needs_start_date).toBe(false)
    expect(agreed.order.capacity_key).toMatch(/^day:one:\d{4}-\d{2}-\d{2}$/)
    expect(await jobsIn(w.deps, 'orders.scheduled-start', { consultationId: agreed.consultation!.id })).toBe(
      1,
    )
  })

  it('asking for a refund instead opens a /paysupport ticket for the admins', async () => {
    const late = w.tg.user({ language_code: 'en' })
    const a = await buy(w, late, 'one')
    // No hold at all this time (paid without a pre-checkout we accepted); the day's place is gone.
    await w.deps.db.updateTable('orders').set({ state: 'cancelled' }).where('id', '=', a.orderId).execute()
    await pay(w, late, a)
    const msg = await w.tg.waitForSent(late.id, /Your payment is safe/)
    await w.tg.push(TEST_BOT_ID, w.tg.callback(late, `ord:refund:${a.orderId}`, msg))
    await w.tg.waitForSent(late.id, /Your ticket no\. \d+ is open/)
    const d = await w.deps.db
      .selectFrom('dispute')
      .selectAll()
      .where('user_id', '=', late.id)
      .executeTakeFirstOrThrow()
    expect(d).toMatchObject({ order_id: a.orderId, state: 'open' })
  })
})
