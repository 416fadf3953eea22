import type { User } from 'grammy/types'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PaymentDto, RefundResultDto } from '../../src/dashboard/dashboard.model'
import { refundWithTopUps } from '../../src/payments/refund-with-topups'
import { refundPayment } from '../../src/payments/refunds'
import { signInitData } from '../support/dashboard'
import {
  ADMIN_ID,
  appeals,
  clientSends,
  type DeskWorld,
  EXPERT_ID,
  eventually,
  inboxDrained,
  itemIn,
  STAFF_CHAT_ID,
  staffSends,
  startDeskWorld,
  TEST_BOT_ID,
  topicReady,
} from '../support/fixtures'
import { auditCount, buy, jobsIn, orderState, pay, preCheckout, tariff } from './payments-support'

/**
 * A refunded top-up takes back what it added as far as unused (issue 22): its questions down to what was used, its
 * hours off the window's end as far as not passed. An admin refunding a consultation sees its paid top-ups and
 * refunds them in the same step when they choose so; every charge is refunded once at the Star, also when two
 * admins, a double press, the dashboard and Telegram's refunded_payment all arrive together.
 *
 * "At the Star": every charge is registered as an incoming Stars transaction in the stand-in, whose
 * refundStarPayment then records the outgoing refund with the amount paid (and refuses a charge it does not know).
 * A little over the house's ~400 lines on purpose: every case builds on the same paid consultation with its top-ups
 * and reads the same Star, and a second file would start a second app.
 */

const SECOND_ADMIN = 900004
let w: DeskWorld
let admin2: User
beforeAll(async () => {
  w = await startDeskWorld({
    // Webhook mode: a push returns once the update is stored, so pay() can wait for the inbox to drain.
    mode: 'webhook',
    configure: (c) => {
      c.dashboard.publicUrl = 'https://desk.example.com'
      c.desks[0]!.staff.admins.push(SECOND_ADMIN)
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
  admin2 = w.tg.user({ id: SECOND_ADMIN, language_code: 'en' })
})
afterAll(() => w?.stop())

/** Paid charges, registered at the Star (the stand-in's Stars transactions). */
function atStar(user: User, charge: string, amount: number) {
  w.tg.addStarTransaction(TEST_BOT_ID, w.tg.starTransaction(user, { id: charge, amount }))
}

/** Refunds of a charge as the Star records them: [amount, ...], one entry per refund. */
function refundsAtStar(charge: string): number[] {
  return w.tg
    .starTransactionsOf(TEST_BOT_ID)
    .filter((t) => t.id === charge && t.receiver)
    .map((t) => t.amount)
}

/** The dashboard's API as an admin's page calls it (signed launch data). */
async function dashboard(path: string, body?: unknown, who = ADMIN_ID) {
  const initData = signInitData(`${TEST_BOT_ID}:${'T'.repeat(35)}`, {
    user: { id: who, language_code: 'en' },
  })
  const res = await fetch(`http://127.0.0.1:${w.t.app.httpPort}/dashboard/test/api/${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      authorization: `tma ${initData}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  })
  return { status: res.status, json: (await res.json()) as any }
}

const appealsAccount = (consultationId: number) =>
  w.deps.db
    .selectFrom('ledger_account')
    .selectAll()
    .where('scope', '=', 'consultation')
    .where('subject', '=', String(consultationId))
    .where('unit', '=', 'appeals')
    .executeTakeFirstOrThrow()

const consultation = (id: number) =>
  w.deps.db.selectFrom('consultation').selectAll().where('id', '=', id).executeTakeFirstOrThrow()

/** A client who paid tariff tq (1 question) through the invoice; the consultation is active. */
async function paidTq() {
  const client = w.tg.user({ language_code: 'en' })
  const o = await buy(w, client, 'tq')
  expect((await preCheckout(w, client, o)).ok).toBe(true)
  const { charge } = await pay(w, client, o)
  atStar(client, charge, o.amount)
  const s = await orderState(w.deps, o.orderId)
  expect(s.consultation!.state).toBe('active')
  return { client, consultationId: s.consultation!.id, main: s.payments[0]!, charge }
}

/** Buys top-up `index` of the consultation through its button, invoice, pre-checkout and payment. */
async function topUp(client: User, consultationId: number, index: number) {
  const since = w.tg.mark()
  await w.tg.push(TEST_BOT_ID, w.tg.callback(client, `tu:${consultationId}:${index}`))
  const call = await w.tg.waitFor('sendInvoice', { chat_id: client.id }, { since })
  const inv = call.payload as { payload: string; prices: { amount: number }[]; description: string }
  // The rule is stated before paying, on the invoice.
  expect(inv.description).toMatch(
    index === 0
      ? /If it is refunded, its questions not used yet are void\./
      : /If it is refunded, its hours not passed yet come off the end of the window\./,
  )
  const o = { payload: inv.payload, amount: inv.prices[0]!.amount }
  expect((await preCheckout(w, client, o)).ok).toBe(true)
  const { charge } = await pay(w, client, o)
  atStar(client, charge, o.amount)
  const s = await orderState(w.deps, Number(o.payload.slice(2)))
  expect(s.order.state).toBe('closed')
  return { payment: s.payments[0]!, charge, orderId: s.order.id }
}

describe('a refunded top-up of questions', () => {
  it('after one of its questions was used: the rest is void, the used one stays, the next question is refused', async () => {
    const { client, consultationId, charge: mainCharge } = await paidTq()
    const route = await topicReady(w, consultationId)
    const q1 = await clientSends(w, client, 'First question')
    await itemIn(w, client.id, q1.message_id, 'sent')
    await staffSends(w, route.message_thread_id, w.expert, 'Answer one')
    await eventually(async () => (await appeals(w, consultationId))[0]?.answered_by === EXPERT_ID, 'answer 1')

    const t = await topUp(client, consultationId, 0)
    expect((await appealsAccount(consultationId)).granted).toBe(3)
    const q2 = await clientSends(w, client, 'Second question')
    await w.tg.waitForSent(client.id, /Question #2 accepted/)
    await itemIn(w, client.id, q2.message_id, 'sent')
    await staffSends(w, route.message_thread_id, w.expert, 'Answer two')
    await eventually(async () => (await appeals(w, consultationId))[1]?.answered_by === EXPERT_ID, 'answer 2')

    // The admin asks to refund the top-up's payment: the confirmation says what it is.
    await w.tg.push(TEST_BOT_ID, w.tg.command(w.admin, '/refund', `#${t.payment.id}`))
    const confirm = await w.tg.waitForSent(
      w.admin.id,
      /This is a top-up of consultation #\d+ \(\+2 questions\)/,
    )
    expect(confirm.text).toContain(`Refund payment ${t.payment.id} (payment): 50 ⭐`)
    await w.tg.push(TEST_BOT_ID, w.tg.callback(w.admin, `rf:yes:${t.payment.id}`, confirm))
    await w.tg.waitFor('editMessageText', (p) => /✅ Refunded: payment/.test(p.text))

    // At the Star: the top-up's 50 back once, nothing of the consultation's own payment.
    expect(refundsAtStar(t.charge)).toEqual([50])
    expect(refundsAtStar(mainCharge)).toEqual([])
    // On the ledger: 1 (tariff) + 2 (top-up) granted, 2 used; the unused one is void, the used one stays.
    const a = await appealsAccount(consultationId)
    expect({ granted: a.granted, used: a.used, reserved: a.reserved }).toEqual({
      granted: 2,
      used: 2,
      reserved: 0,
    })
    expect((await orderState(w.deps, t.orderId)).order.state).toBe('refunded')
    expect((await consultation(consultationId)).state).toBe('active')
    await w.tg.waitForSent(
      client.id,
      /50 ⭐ for the top-up of 2 questions have been refunded to you\. The 1 question you had not used yet is void; the ones you used stay used\. Questions left: 0\./,
    )
    await w.tg.waitForSent(
      STAFF_CHAT_ID,
      /Дополнение возвращено .*отменено не использованных вопросов: 1 из 2/,
      {
        threadId: route.message_thread_id,
      },
    )

    // Asking again: refused with the numbers (no questions left of the 2 the consultation has now).
    await clientSends(w, client, 'Third question')
    const refused = await w.tg.waitForSent(client.id, /No questions left in this consultation: 0 of 2 left/)
    expect(refused.text).toContain('You can top up this consultation')
    expect(refused.text).toContain('a refunded top-up takes back what it added')
    expect(await auditCount(w.deps, 'payment.refunded', t.payment.id)).toBe(1)
  })

  it('the rule is in the terms of a tariff that sells top-ups', async () => {
    const client = w.tg.user({ language_code: 'en' })
    await w.tg.push(TEST_BOT_ID, w.tg.command(client, '/terms'))
    const terms = await w.tg.waitForSent(client.id, /Refunds and late answers, by tariff/)
    expect(terms.text).toMatch(
      /Tariff tq: .*Top-ups: more questions or hours can be bought inside the consultation; a refunded top-up takes back what it added and you have not used yet/,
    )
  })

  it('not used at all: all of it is void', async () => {
    const { client, consultationId } = await paidTq()
    const t = await topUp(client, consultationId, 0)
    const r = await refundPayment(
      w.deps,
      w.t.desk,
      { paymentId: t.payment.id },
      { id: ADMIN_ID, source: 'admin' },
    )
    expect(r.status).toBe('refunded')
    expect((await appealsAccount(consultationId)).granted).toBe(1)
    await w.tg.waitForSent(client.id, /the questions it added are void\. Questions left: 1\./)
  })
})

describe('a refunded top-up of hours', () => {
  it('nothing of it passed yet: the window ends where it did before the top-up', async () => {
    const { client, consultationId } = await paidTq()
    const before = (await consultation(consultationId)).access_until!
    const t = await topUp(client, consultationId, 1)
    expect((await consultation(consultationId)).access_until!.getTime()).toBe(before.getTime() + 3 * 3600_000)
    const r = await refundPayment(
      w.deps,
      w.t.desk,
      { paymentId: t.payment.id },
      { id: ADMIN_ID, source: 'admin' },
    )
    expect(r.status).toBe('refunded')
    const after = await consultation(consultationId)
    expect(after.access_until!.getTime()).toBe(before.getTime())
    expect((await appealsAccount(consultationId)).period_end.getTime()).toBe(before.getTime())
    expect(refundsAtStar(t.charge)).toEqual([30])
    await w.tg.waitForSent(
      client.id,
      /30 ⭐ for the top-up of 3 h have been refunded to you\. The part of those hours not passed yet comes off your window/,
    )
  })

  it('partly passed: only the part not passed comes off, never time already gone (the window closes now)', async () => {
    const { client, consultationId } = await paidTq()
    await topUp(client, consultationId, 1)
    const t = await topUp(client, consultationId, 1)
    // Move the window's end to one hour from now: of the last top-up's three hours, two have passed.
    const c = await consultation(consultationId)
    const end = new Date(Date.now() + 3600_000)
    await w.deps.db
      .updateTable('consultation')
      .set({ access_until: end })
      .where('id', '=', consultationId)
      .execute()
    await w.deps.db
      .updateTable('ledger_account')
      .set({ period_end: end })
      .where('scope', '=', 'consultation')
      .where('subject', '=', String(consultationId))
      .where('period_start', '=', c.starts_at!)
      .execute()
    const r = await refundPayment(
      w.deps,
      w.t.desk,
      { paymentId: t.payment.id },
      { id: ADMIN_ID, source: 'admin' },
    )
    expect(r.status).toBe('refunded')
    const after = await consultation(consultationId)
    // Cut back to the refund's instant (not three hours before the end, which is already past).
    expect(after.access_until!.getTime()).toBeLessThan(end.getTime())
    expect(after.access_until!.getTime()).toBeGreaterThan(end.getTime() - 3 * 3600_000)
    expect(after.access_until!.getTime()).toBeLessThanOrEqual(Date.now())
    // The window's close job for the new end closes it; the client is told.
    await eventually(
      async () => (await consultation(consultationId)).state === 'closed',
      'the window to close',
    )
    await w.tg.waitForSent(client.id, /30 ⭐ for the top-up of 3 h have been refunded to you/)
  })
})

/** A consultation with its two top-ups (50 ⭐ for 2 questions, 30 ⭐ for 3 hours), all registered at the Star. */
async function withTwoTopUps() {
  const m = await paidTq()
  const q = await topUp(m.client, m.consultationId, 0)
  const h = await topUp(m.client, m.consultationId, 1)
  return { ...m, q, h }
}

describe("refunding a consultation with its top-ups (the admin's choice)", () => {
  it('the confirmation lists the top-ups; "with its 2 top-ups" refunds all three once, at the Star', async () => {
    const { client, consultationId, main, charge, q, h } = await withTwoTopUps()
    await w.tg.push(TEST_BOT_ID, w.tg.command(w.admin, '/refund', charge))
    const confirm = await w.tg.waitForSent(w.admin.id, /has 2 paid top-ups not refunded/)
    expect(confirm.text).toContain(`Consultation #${consultationId} has 2 paid top-ups not refunded:`)
    expect(confirm.text).toContain(`• payment ${q.payment.id}: 50 ⭐ — +2 questions`)
    expect(confirm.text).toContain(`• payment ${h.payment.id}: 30 ⭐ — +3 h`)
    const buttons = (confirm.reply_markup as any).inline_keyboard.flat() as {
      text: string
      callback_data: string
    }[]
    expect(buttons.map((b) => [b.text, b.callback_data])).toEqual([
      ['↩️ Refund the consultation only (100 ⭐)', `rf:yes:${main.id}`],
      ['↩️ Refund it with its 2 top-ups (180 ⭐ in all)', `rf:all:${main.id}:${h.payment.id}`],
      ['Cancel', 'rf:no'],
    ])
    await w.tg.push(TEST_BOT_ID, w.tg.callback(w.admin, `rf:all:${main.id}:${h.payment.id}`, confirm))
    const done = await w.tg.waitFor(
      'editMessageText',
      (p) => (p.text.match(/✅ Refunded/g) ?? []).length === 3,
    )
    expect(done.payload.text).toContain(`payment ${q.payment.id}, 50 ⭐`)
    for (const [c, amount] of [
      [charge, 100],
      [q.charge, 50],
      [h.charge, 30],
    ] as const) {
      expect(refundsAtStar(c)).toEqual([amount])
      expect(w.tg.callsTo('refundStarPayment', { telegram_payment_charge_id: c })).toHaveLength(1)
    }
    expect((await consultation(consultationId)).state).toBe('revoked')
    for (const id of [q.orderId, h.orderId])
      expect((await orderState(w.deps, id)).order.state).toBe('refunded')
    await w.tg.waitForSent(client.id, /100 ⭐ for “Tariff tq” have been refunded to you/)
    await w.tg.waitForSent(
      client.id,
      /50 ⭐ for the top-up “\+2 questions · Tariff tq” have been refunded to you/,
    )
    await w.tg.waitForSent(client.id, /30 ⭐ for the top-up “\+3 h · Tariff tq” have been refunded to you/)
  })

  it('"the consultation only" leaves the top-ups paid', async () => {
    const { main, charge, q, h } = await withTwoTopUps()
    await w.tg.push(TEST_BOT_ID, w.tg.callback(w.admin, `rf:yes:${main.id}`))
    await w.tg.waitFor(['editMessageText', 'sendMessage'], (p) =>
      new RegExp(`Refunded: payment ${main.id}`).test(p.text),
    )
    expect(refundsAtStar(charge)).toEqual([100])
    expect(refundsAtStar(q.charge)).toEqual([])
    expect(refundsAtStar(h.charge)).toEqual([])
    // Asked again, the confirmation still lists them.
    await w.tg.push(TEST_BOT_ID, w.tg.callback(w.admin, `rf:ask:${q.payment.id}`))
    await w.tg.waitForSent(w.admin.id, new RegExp(`Refund payment ${q.payment.id} \\(payment\\): 50 ⭐`))
  })

  it("a top-up that is not this consultation's is refused and nothing is refunded", async () => {
    const a = await withTwoTopUps()
    const b = await withTwoTopUps()
    const r = await refundWithTopUps(
      w.deps,
      w.t.desk,
      a.main.id,
      { ids: [b.q.payment.id] },
      { id: ADMIN_ID, source: 'admin' },
    )
    expect(r).toEqual({ status: 'not-its-top-up', paymentId: b.q.payment.id })
    for (const c of [a.charge, b.q.charge]) expect(refundsAtStar(c)).toEqual([])
  })

  it('two admins, a double press, the dashboard and redelivered refunded_payment at once, 20 rounds: each charge once', async () => {
    for (let round = 0; round < 20; round++) {
      const { client, main, charge, q, h } = await withTwoTopUps()
      const all = [
        { payment: main, charge, amount: 100 },
        { payment: q.payment, charge: q.charge, amount: 50 },
        { payment: h.payment, charge: h.charge, amount: 30 },
      ]
      // Telegram tells the bot about each refund it made (refunded_payment), delivered twice.
      const echoes = all.map(async (x) => {
        await w.tg.waitFor('refundStarPayment', { telegram_payment_charge_id: x.charge })
        const u = w.tg.refundedPayment(client, {
          invoice_payload: x.payment.invoice_payload,
          total_amount: x.amount,
          telegram_payment_charge_id: x.charge,
        })
        const pushed = await w.tg.push(TEST_BOT_ID, u)
        await w.tg.redeliver(TEST_BOT_ID, pushed)
      })
      const data = `rf:all:${main.id}:${h.payment.id}`
      await Promise.all([
        w.tg.push(TEST_BOT_ID, w.tg.callback(w.admin, data)),
        w.tg.push(TEST_BOT_ID, w.tg.callback(w.admin, data)),
        w.tg.push(TEST_BOT_ID, w.tg.callback(admin2, data)),
        dashboard(`payments/${main.id}/refund`, {
          confirmCharge: charge,
          topUps: [q.payment.id, h.payment.id],
        }).then((r) => expect(r.status).toBe(200)),
        ...echoes,
      ])
      await inboxDrained(w.deps.db)
      for (const x of all) {
        expect(w.tg.callsTo('refundStarPayment', { telegram_payment_charge_id: x.charge })).toHaveLength(1)
        expect(refundsAtStar(x.charge)).toEqual([x.amount])
        expect(await auditCount(w.deps, 'payment.refunded', x.payment.id)).toBe(1)
        expect(await jobsIn(w.deps, 'tg.notify', { dedupeKey: `payment:${x.payment.id}:refunded` })).toBe(1)
      }
      const voids = await w.deps.db
        .selectFrom('ledger_journal')
        .select('id')
        .where('request_id', '=', `topup-refund:${q.payment.id}`)
        .execute()
      expect(voids).toHaveLength(1)
    }
  }, 300_000)
})

describe("the dashboard's refund of a consultation with its top-ups", () => {
  it('lists the top-ups with the payment, refunds them with it when asked, each once at the Star', async () => {
    const { consultationId, main, charge, q, h } = await withTwoTopUps()
    const list = (await dashboard('payments')).json as PaymentDto[]
    const row = list.find((p) => p.id === main.id)!
    expect(row.topUps.map((t) => [t.paymentId, t.amount, t.questions, t.hours])).toEqual([
      [q.payment.id, 50, 2, 0],
      [h.payment.id, 30, 0, 3],
    ])
    expect(list.find((p) => p.id === q.payment.id)).toMatchObject({
      orderKind: 'topup',
      consultationId,
      topUp: { questions: 2, hours: 0 },
      topUps: [],
    })

    // A top-up that is not this consultation's: refused, nothing refunded.
    const other = await withTwoTopUps()
    const wrong = await dashboard(`payments/${main.id}/refund`, {
      confirmCharge: charge,
      topUps: [q.payment.id, other.h.payment.id],
    })
    expect(wrong.status).toBe(409)
    for (const c of [charge, q.charge, other.h.charge]) expect(refundsAtStar(c)).toEqual([])

    const ok = await dashboard(`payments/${main.id}/refund`, {
      confirmCharge: charge,
      topUps: [q.payment.id, h.payment.id],
    })
    expect(ok.status).toBe(200)
    const r = ok.json as RefundResultDto
    expect(r.status).toBe('refunded')
    expect(r.topUps).toEqual([
      { paymentId: q.payment.id, status: 'refunded' },
      { paymentId: h.payment.id, status: 'refunded' },
    ])
    expect(r.payment.topUps).toEqual([])
    for (const [c, amount] of [
      [charge, 100],
      [q.charge, 50],
      [h.charge, 30],
    ] as const)
      expect(refundsAtStar(c)).toEqual([amount])
  })
})
