import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { closeEarly } from '../../src/consultations/desk.service'
import { runClosingSoon } from '../../src/lifecycle/window.service'
import { refundPayment } from '../../src/payments/refunds'
import { recordSuccessfulPayment } from '../../src/payments/successful-payment'
import {
  ADMIN_ID,
  appeals,
  clientSends,
  consultationWithTopic,
  type DeskWorld,
  EXPERT_ID,
  eventually,
  inboxDrained,
  itemIn,
  STAFF_CHAT_ID,
  staffSends,
  startDeskWorld,
  TEST_BOT_ID,
} from '../support/fixtures'
import { orderState, pay, preCheckout, tariff } from './payments-support'

/**
 * Top-ups inside a consultation (issue 14): offered with "no questions left", bought with the usual invoice,
 * pre-checkout and payment; the units are granted in the payment's transaction, once per charge however often or
 * concurrently Telegram delivers it; a second payment of the same top-up is an overpayment; refundable; refused at
 * pre-checkout once the consultation ended.
 */

let w: DeskWorld
beforeAll(async () => {
  w = await startDeskWorld({
    configure: (c) => {
      c.desks[0]!.tariffs.push(
        tariff({
          code: 'tq',
          appeals: 1,
          topUps: [
            { kind: 'questions', questions: 2, priceStars: 50 },
            { kind: 'hours', hours: 3, priceStars: 30 },
          ],
        }),
      )
    },
  })
})
afterAll(() => w?.stop())

const appealsAccount = (consultationId: number) =>
  w.deps.db
    .selectFrom('ledger_account')
    .selectAll()
    .where('scope', '=', 'consultation')
    .where('subject', '=', String(consultationId))
    .where('unit', '=', 'appeals')
    .executeTakeFirstOrThrow()

/** A client of tariff tq whose one question was answered: the next one is refused with the top-up offer. */
async function exhausted() {
  const { client, consultationId, route } = await consultationWithTopic(
    w,
    { language_code: 'en' },
    { tariff: 'tq' },
  )
  const q = await clientSends(w, client, 'First question')
  await itemIn(w, client.id, q.message_id, 'sent')
  await staffSends(w, route.message_thread_id, w.expert, 'Answer')
  await eventually(async () => (await appeals(w, consultationId))[0]?.answered_by === EXPERT_ID, 'the answer')
  await clientSends(w, client, 'Second question')
  const refused = await w.tg.waitForSent(client.id, /No questions left/)
  return { client, consultationId, route, refused }
}

/** Presses a top-up button; returns the invoice's payload and amount. */
async function buyTopUp(client: { id: number }, consultationId: number, index: number) {
  const since = w.tg.mark()
  await w.tg.push(TEST_BOT_ID, w.tg.callback(client as never, `tu:${consultationId}:${index}`))
  const call = await w.tg.waitFor('sendInvoice', { chat_id: client.id }, { since })
  const p = call.payload as {
    payload: string
    prices: { amount: number }[]
    description: string
    title: string
  }
  return { payload: p.payload, amount: p.prices[0]!.amount, description: p.description, title: p.title }
}

describe('top-up: more questions', () => {
  it('is offered when questions run out; paying grants them on the ledger with the payment, once', async () => {
    const { client, consultationId, refused } = await exhausted()
    expect(refused.text).toContain('You can top up this consultation')
    const markup = JSON.stringify(refused.reply_markup)
    expect(markup).toContain(`tu:${consultationId}:0`)
    expect(markup).toContain('2 more questions — 50 ⭐')
    expect(markup).toContain('3 more h — 30 ⭐')

    const inv = await buyTopUp(client, consultationId, 0)
    expect(inv.amount).toBe(50)
    expect(inv.description).toContain('2 more questions')
    expect((await preCheckout(w, client as never, inv)).ok).toBe(true)
    const orderId = Number(inv.payload.slice(2))
    expect((await orderState(w.deps, orderId)).order).toMatchObject({
      kind: 'topup',
      topup_consultation_id: consultationId,
      state: 'reserved',
      capacity_key: null,
    })

    // Delivered once, then redelivered 20 times concurrently: one payment, one grant, one message.
    const { pushed, charge } = await pay(w, client as never, inv)
    await Promise.all(Array.from({ length: 20 }, () => w.tg.redeliver(TEST_BOT_ID, pushed)))
    await inboxDrained(w.deps.db)
    await w.tg.waitForSent(client.id, /2 more questions were added; questions left: 2/)
    const s = await orderState(w.deps, orderId)
    expect(s.payments).toHaveLength(1)
    expect(s.order.state).toBe('closed')
    expect((await appealsAccount(consultationId)).granted).toBe(3)
    const grants = await w.deps.db
      .selectFrom('ledger_grant')
      .select('request_id')
      .where('request_id', '=', `topup:${orderId}`)
      .execute()
    expect(grants).toHaveLength(1)

    // Paid a second time (another charge): an overpayment for an admin to refund; nothing more granted.
    const again = await recordSuccessfulPayment(w.deps, w.t.desk, {
      userId: client.id,
      lang: 'en',
      payment: {
        currency: 'XTR',
        total_amount: 50,
        invoice_payload: inv.payload,
        telegram_payment_charge_id: `${charge}-2`,
        provider_payment_charge_id: '',
      },
    })
    expect(again.status).toBe('overpayment')
    expect((await appealsAccount(consultationId)).granted).toBe(3)

    // The new question is accepted now.
    await clientSends(w, client as never, 'Third question')
    await w.tg.waitForSent(client.id, /Question #2 accepted/)

    // Refundable like any payment: the top-up order is refunded, the consultation stays active.
    const refunded = await refundPayment(
      w.deps,
      w.t.desk,
      { paymentId: s.payments[0]!.id },
      { id: ADMIN_ID, source: 'admin' },
    )
    expect(refunded.status).toBe('refunded')
    const after = await orderState(w.deps, orderId)
    expect(after.order.state).toBe('refunded')
    const c = await w.deps.db
      .selectFrom('consultation')
      .select('state')
      .where('id', '=', consultationId)
      .executeTakeFirstOrThrow()
    expect(c.state).toBe('active')
  })

  it('the same charge from 50 concurrent calls, 5 rounds: one grant each time', async () => {
    for (let round = 0; round < 5; round++) {
      const { client, consultationId } = await exhausted()
      const inv = await buyTopUp(client, consultationId, 0)
      expect((await preCheckout(w, client as never, inv)).ok).toBe(true)
      const input = {
        userId: client.id,
        lang: 'en',
        payment: {
          currency: 'XTR',
          total_amount: inv.amount,
          invoice_payload: inv.payload,
          telegram_payment_charge_id: `tu-race-${round}-${client.id}`,
          provider_payment_charge_id: '',
        },
      }
      const results = await Promise.all(
        Array.from({ length: 50 }, () => recordSuccessfulPayment(w.deps, w.t.desk, input)),
      )
      expect(results.filter((r) => r.status === 'topped-up')).toHaveLength(1)
      expect(results.filter((r) => r.status === 'duplicate')).toHaveLength(49)
      expect((await appealsAccount(consultationId)).granted).toBe(3)
    }
  })
})

describe('top-up offered in "closes soon"', () => {
  it("the notice carries the tariff's top-up buttons", async () => {
    const { client, consultationId } = await consultationWithTopic(
      w,
      { language_code: 'en' },
      { tariff: 'tq' },
    )
    const c = await w.deps.db
      .selectFrom('consultation')
      .select('access_until')
      .where('id', '=', consultationId)
      .executeTakeFirstOrThrow()
    const r = await runClosingSoon(
      w.deps,
      { consultationId, accessUntil: c.access_until!.toISOString() },
      { now: new Date(c.access_until!.getTime() - 10 * 60_000) },
    )
    expect(r).toBe('sent')
    const notice = await w.tg.waitForSent(client.id, /closes soon/)
    expect(notice.text).toContain('You can top up this consultation')
    expect(JSON.stringify(notice.reply_markup)).toContain(`tu:${consultationId}:1`)
  })
})

describe('top-up: more hours', () => {
  it('moves access_until and the ledger period in the payment transaction', async () => {
    const { client, consultationId } = await exhausted()
    const before = await w.deps.db
      .selectFrom('consultation')
      .select('access_until')
      .where('id', '=', consultationId)
      .executeTakeFirstOrThrow()
    const inv = await buyTopUp(client, consultationId, 1)
    expect(inv.amount).toBe(30)
    expect((await preCheckout(w, client as never, inv)).ok).toBe(true)
    await pay(w, client as never, inv)
    await w.tg.waitForSent(client.id, /Your window is extended by 3 h/)
    const after = await w.deps.db
      .selectFrom('consultation')
      .select('access_until')
      .where('id', '=', consultationId)
      .executeTakeFirstOrThrow()
    expect(after.access_until!.getTime() - before.access_until!.getTime()).toBe(3 * 3600_000)
    expect((await appealsAccount(consultationId)).period_end.getTime()).toBe(after.access_until!.getTime())
  })
})

describe('top-up refusals', () => {
  it('pre-checkout refuses a top-up once its consultation has ended; a press after the end is refused', async () => {
    const { client, consultationId } = await exhausted()
    const inv = await buyTopUp(client, consultationId, 0)
    expect(await closeEarly(w.deps, w.t.desk, { consultationId, actorId: ADMIN_ID })).toEqual({
      status: 'closed',
    })
    const answer = await preCheckout(w, client as never, inv)
    expect(answer).toMatchObject({ ok: false })
    expect(answer.error_message).toMatch(/has ended; nothing was charged/)
    await w.tg.push(TEST_BOT_ID, w.tg.callback(client as never, `tu:${consultationId}:0`))
    await w.tg.waitFor('answerCallbackQuery', (p) => /no longer active/.test(p.text ?? ''))
    // Paid anyway (the pre-checkout was answered before the end): honoured, nothing granted, the admins told.
    const r = await recordSuccessfulPayment(w.deps, w.t.desk, {
      userId: client.id,
      lang: 'en',
      payment: {
        currency: 'XTR',
        total_amount: inv.amount,
        invoice_payload: inv.payload,
        telegram_payment_charge_id: `tu-late-${client.id}`,
        provider_payment_charge_id: '',
      },
    })
    expect(r.status).toBe('topup-late')
    expect((await appealsAccount(consultationId)).granted).toBe(1)
    await w.tg.waitForSent(STAFF_CHAT_ID, /пришла после окончания консультации #\d+/)
  })
})
