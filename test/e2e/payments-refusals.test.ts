import type { User } from 'grammy/types'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { termsHash } from '../../src/orders/orders.service'
import {
  buy,
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
 * Bad input: each gets a specific refusal in the user's language (or precise details for an admin) and changes
 * nothing.
 */

let w: PayWorld
beforeAll(async () => {
  w = await startPayWorld((c) => {
    const desk = c.desks[0]!
    desk.tariffs.push(tariff({ code: 'one', dailyCapacity: 1 }), tariff({ code: 'gone' }))
    desk.tariffs.push(
      tariff({
        code: 'slot',
        startMode: 'scheduled',
        slots: [new Date(Date.now() + 72 * 3_600_000).toISOString()],
      }),
    )
  })
})
afterAll(() => w?.stop())

async function heldNothing(orderId: number, state: string) {
  const { order, payments, consultation } = await orderState(w.deps, orderId)
  expect(order.state).toBe(state)
  expect(order.hold_request_id).toBeNull()
  expect(payments).toHaveLength(0)
  expect(consultation).toBeUndefined()
  const holds = await w.deps.db
    .selectFrom('ledger_reservation')
    .select('request_id')
    .where('request_id', 'like', `hold:${orderId}:%`)
    .where('state', '<>', 'refused')
    .execute()
  expect(holds).toHaveLength(0)
}

describe('pre-checkout refusals', () => {
  let alice: User
  let order: Awaited<ReturnType<typeof buy>>
  beforeAll(async () => {
    alice = w.tg.user({ language_code: 'en' })
    order = await buy(w, alice, 'quick')
  })

  it('an unknown order or a payload that is not ours', async () => {
    for (const payload of ['o:999999', 'hello', 'o:0', `o:${order.orderId}x`]) {
      const a = await preCheckout(w, alice, { payload, amount: 100 })
      expect(a).toEqual(
        expect.objectContaining({
          ok: false,
          error_message: expect.stringMatching(/cannot find this order/),
        }),
      )
    }
    await heldNothing(order.orderId, 'created')
  })

  it('a client banned after the invoice was sent, and a banned client choosing a tariff', async () => {
    const carol = w.tg.user({ language_code: 'en' })
    const hers = await buy(w, carol, 'quick')
    await w.deps.db
      .updateTable('client')
      .set({ banned_at: new Date(), banned_by: w.admin.id })
      .where('user_id', '=', carol.id)
      .execute()
    const a = await preCheckout(w, carol, { payload: hers.payload, amount: hers.amount })
    expect(a).toEqual(
      expect.objectContaining({ ok: false, error_message: expect.stringMatching(/not available/) }),
    )
    await heldNothing(hers.orderId, 'created')

    const since = w.tg.mark()
    await w.tg.push(TEST_BOT_ID, w.tg.callback(carol, `tf:buy:quick:${termsHash(w.t.desk.terms.version)}`))
    const alert = await w.tg.waitFor('answerCallbackQuery', { show_alert: true }, { since })
    expect((alert.payload as { text: string }).text).toMatch(/not available for this account/)
    expect(w.tg.callsTo('sendInvoice', { chat_id: carol.id }, { since })).toHaveLength(0)
  })

  it("another client's order", async () => {
    const bob = w.tg.user({ language_code: 'ru' })
    const a = await preCheckout(w, bob, { payload: order.payload, amount: order.amount })
    expect(a.ok).toBe(false)
    expect(a.error_message).toMatch(/выставлен другому аккаунту/)
    await heldNothing(order.orderId, 'created')
  })

  it('a wrong currency or amount', async () => {
    const c = await preCheckout(w, alice, { payload: order.payload, amount: 100, currency: 'USD' })
    expect(c.error_message).toMatch(/only payable in Telegram Stars/)
    const a = await preCheckout(w, alice, { payload: order.payload, amount: 99 })
    expect(a.error_message).toBe(
      "The amount (99 ⭐) does not match the order's price (100 ⭐). Please open a new invoice with /tariffs.",
    )
    await heldNothing(order.orderId, 'created')
  })

  it('a cancelled order', async () => {
    const o = await buy(w, alice, 'quick')
    await w.deps.db.updateTable('orders').set({ state: 'cancelled' }).where('id', '=', o.orderId).execute()
    const a = await preCheckout(w, alice, { payload: o.payload, amount: o.amount })
    expect(a.error_message).toMatch(/This order was cancelled/)
    await heldNothing(o.orderId, 'cancelled')
  })

  it('an invoice older than a day', async () => {
    const o = await buy(w, alice, 'quick')
    await w.deps.db
      .updateTable('orders')
      .set({ created_at: new Date(Date.now() - 25 * 3_600_000) })
      .where('id', '=', o.orderId)
      .execute()
    expect((await preCheckout(w, alice, o)).error_message).toMatch(/invoice has expired/)
    await heldNothing(o.orderId, 'created')
  })

  it('an order already paid', async () => {
    const o = await buy(w, alice, 'quick')
    expect((await preCheckout(w, alice, o)).ok).toBe(true)
    await pay(w, alice, o)
    await w.tg.waitForSent(alice.id, /is active/)
    const a = await preCheckout(w, alice, o)
    expect(a.error_message).toMatch(/already paid; nothing more was charged/)
  })

  it('a tariff removed from config after the invoice was sent', async () => {
    const o = await buy(w, alice, 'gone')
    const desk = w.t.desk
    const i = desk.tariffs.findIndex((t) => t.code === 'gone')
    const [removed] = desk.tariffs.splice(i, 1)
    try {
      const a = await preCheckout(w, alice, o)
      expect(a.error_message).toBe(
        '“Tariff gone” is no longer sold; nothing was charged. See /tariffs for what is on offer.',
      )
      await heldNothing(o.orderId, 'created')
      // An old "pay" button of that tariff refuses too, and shows what is on offer now.
      await w.tg.push(TEST_BOT_ID, w.tg.callback(alice, `tf:buy:gone:${termsHash(desk.terms.version)}`))
      await w.tg.waitFor('answerCallbackQuery', (p) => /no longer sold/.test(p.text ?? ''))
    } finally {
      desk.tariffs.splice(i, 0, removed!)
    }
  })

  it('a slot that has begun', async () => {
    const slot = new Date(w.t.desk.tariffs.find((t) => t.code === 'slot')!.slots[0]!)
    const o = await buy(w, alice, 'slot', slot)
    await w.deps.db
      .updateTable('orders')
      .set({ slot_start: new Date(Date.now() - 60_000) })
      .where('id', '=', o.orderId)
      .execute()
    expect((await preCheckout(w, alice, o)).error_message).toMatch(/start time has already begun/)
    await heldNothing(o.orderId, 'created')
  })

  it('no place left for the start day', async () => {
    const first = w.tg.user()
    const second = w.tg.user()
    const a = await buy(w, first, 'one')
    const b = await buy(w, second, 'one')
    expect((await preCheckout(w, first, a)).ok).toBe(true)
    const refused = await preCheckout(w, second, b)
    expect(refused.error_message).toMatch(
      /All places for this start are taken right now; nothing was charged/,
    )
    await heldNothing(b.orderId, 'created')
  })
})

describe('stale buttons and foreign orders', () => {
  it('a pay button with terms that have changed since shows the current terms instead', async () => {
    const u = w.tg.user()
    await w.tg.push(TEST_BOT_ID, w.tg.callback(u, 'tf:buy:quick:AAAAAAAA'))
    await w.tg.waitFor('answerCallbackQuery', (p) => /terms have changed/.test(p.text ?? ''))
    const card = await w.tg.waitForSent(u.id, /Terms \(version t-1\)/)
    expect(JSON.stringify(card.reply_markup)).toContain(`tf:buy:quick:${termsHash('t-1')}`)
    const orders = await w.deps.db.selectFrom('orders').select('id').where('user_id', '=', u.id).execute()
    expect(orders).toHaveLength(0)
  })

  it("Start on someone else's order, or on an order that does not wait for a start", async () => {
    const owner = w.tg.user()
    const other = w.tg.user()
    const o = await buy(w, owner, 'later')
    await w.tg.push(TEST_BOT_ID, w.tg.callback(other, `ord:start:${o.orderId}`))
    await w.tg.waitFor('answerCallbackQuery', (p) => p.text === 'We cannot find this order.')
    await w.tg.push(TEST_BOT_ID, w.tg.callback(owner, `ord:start:${o.orderId}`))
    await w.tg.waitFor('answerCallbackQuery', (p) => p.text === 'This order is not waiting for a start.')
    expect((await orderState(w.deps, o.orderId)).order.state).toBe('created')
  })

  it('a /paysupport button of a question no longer open', async () => {
    const u = w.tg.user()
    await w.tg.push(TEST_BOT_ID, w.tg.callback(u, 'ps:pay:1'))
    await w.tg.waitFor('answerCallbackQuery', (p) => p.text === 'This button is outdated.')
  })
})

describe('payments that match no order', () => {
  it('are recorded as unmatched, the client is told, the admins get it with a Refund button', async () => {
    const u = w.tg.user()
    const { charge } = await pay(w, u, { payload: 'o:987654', amount: 100 })
    await w.tg.waitForSent(u.id, /could not match the payment to an order/)
    const p = await w.deps.db
      .selectFrom('payment')
      .selectAll()
      .where('telegram_payment_charge_id', '=', charge)
      .executeTakeFirstOrThrow()
    expect(p).toMatchObject({
      kind: 'unmatched',
      order_id: null,
      total_amount: 100,
      invoice_payload: 'o:987654',
    })
    const alert = await w.tg.waitForSent(STAFF_CHAT_ID, new RegExp(`списание ${charge}`))
    expect(JSON.stringify(alert.reply_markup)).toContain(`rf:ask:${p.id}`)
  })
})

describe('admin refusals', () => {
  it('a non-admin pressing Refund gets a refusal and nothing changes', async () => {
    const u = w.tg.user()
    const o = await buy(w, u, 'quick')
    await preCheckout(w, u, o)
    const { charge } = await pay(w, u, o)
    await w.tg.waitForSent(u.id, /is active/)
    const p = (await orderState(w.deps, o.orderId)).payments[0]!
    const since = w.tg.mark()
    await w.tg.push(TEST_BOT_ID, w.tg.callback(u, `rf:yes:${p.id}`))
    await w.tg.waitFor('answerCallbackQuery', (x) => /Only the desk's administrators/.test(x.text ?? ''), {
      since,
    })
    expect(w.tg.callsTo('refundStarPayment', { telegram_payment_charge_id: charge })).toHaveLength(0)
    expect((await orderState(w.deps, o.orderId)).order.state).toBe('active')
  })

  it('a refund of an unknown charge is refused with the charge named', async () => {
    await w.tg.push(TEST_BOT_ID, w.tg.command(w.admin, '/refund', 'no-such-charge'))
    await w.tg.waitForSent(
      w.admin.id,
      'No payment with charge id “no-such-charge” on this desk; nothing was done.',
    )
    expect(w.tg.callsTo('refundStarPayment')).toHaveLength(0)
  })

  it('a non-admin typing an admin command is told so', async () => {
    const u = w.tg.user()
    await w.tg.push(TEST_BOT_ID, w.tg.command(u, '/refunds'))
    await w.tg.waitForSent(u.id, "Only the desk's administrators can do this.")
  })
})
