import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runScheduledStart } from '../../src/consultations/start.service'
import { termsHash } from '../../src/orders/orders.service'
import { OFFERED_ZONES } from '../../src/time/client-time'
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
 * The client journey for each start mode through the real app and the Bot API stand-in: tariffs and terms, the
 * Stars invoice, pre-checkout, successful_payment, the confirmation and the consultation window.
 */

const HOUR = 3_600_000
// A slot two days ahead on a whole hour (the test desk is open around the clock).
const SLOT = new Date(Math.ceil((Date.now() + 48 * HOUR) / HOUR) * HOUR)

let w: PayWorld
beforeAll(async () => {
  w = await startPayWorld((c) => {
    c.desks[0]!.tariffs.push(
      tariff({
        code: 'slot',
        startMode: 'scheduled',
        slots: [SLOT.toISOString()],
        slotCapacity: 2,
        priceStars: 120,
      }),
    )
  })
})
afterAll(() => w?.stop())

describe('tariffs and terms', () => {
  it('/start offers a Tariffs button; the list and a card show price, window, SLA, start and the terms', async () => {
    const u = w.tg.user({ language_code: 'en' })
    await w.tg.push(TEST_BOT_ID, w.tg.command(u, '/start'))
    const welcome = await w.tg.waitForSent(u.id, /Hello/)
    expect(JSON.stringify(welcome.reply_markup)).toContain('tf:list')

    await w.tg.push(TEST_BOT_ID, w.tg.callback(u, 'tf:list', welcome))
    await w.tg.waitFor('editMessageText', (p) => p.chat_id === u.id && /Choose a tariff/.test(p.text))

    await w.tg.push(TEST_BOT_ID, w.tg.callback(u, 'tf:show:quick'))
    const card = await w.tg.waitFor(
      'editMessageText',
      (p) => p.chat_id === u.id && /Quick review/.test(p.text),
    )
    const text = card.payload.text as string
    expect(text).toContain('100 ⭐')
    expect(text).toContain('Included: 3 questions')
    expect(text).toContain('Access window: 24 h')
    expect(text).toContain('When it starts: at payment.')
    expect(text).toContain('within 4 h of business time')
    expect(text).toContain('Terms (version t-1)')
    expect(text).toContain('Test terms.')
    expect(JSON.stringify(card.payload.reply_markup)).toContain('tf:buy:quick:')
  })

  it('answers /terms and /privacy from config in the client language', async () => {
    const u = w.tg.user({ language_code: 'ru' })
    await w.tg.push(TEST_BOT_ID, w.tg.command(u, '/terms'))
    await w.tg.push(TEST_BOT_ID, w.tg.command(u, '/privacy'))
    expect((await w.tg.waitForSent(u.id, /Условия \(версия t-1\)/)).text).toContain('Условия теста.')
    expect((await w.tg.waitForSent(u.id, /^Конфиденциальность\n/)).text).toContain('Приватность теста.')
  })
})

describe('immediate start', () => {
  it('invoices in Stars with the order as payload, accepts pre-checkout, activates a 24 h window on payment', async () => {
    const u = w.tg.user({ language_code: 'en' })
    const { orderId, payload, amount, invoice } = await buy(w, u, 'quick')
    expect(invoice).toMatchObject({ payload: `o:${orderId}`, currency: 'XTR', title: 'Quick review' })
    expect(invoice.prices).toEqual([{ label: 'Quick review', amount: 100 }])
    expect(invoice.provider_token ?? '').toBe('')

    const before = await orderState(w.deps, orderId)
    expect(before.order).toMatchObject({
      state: 'created',
      price_stars: 100,
      terms_version: 't-1',
      window_minutes: 1440,
    })

    expect(await preCheckout(w, u, { payload, amount })).toEqual(expect.objectContaining({ ok: true }))
    const held = await orderState(w.deps, orderId)
    expect(held.order.state).toBe('reserved')
    expect(held.consultation).toBeUndefined() // nothing is granted at pre-checkout

    const { charge } = await pay(w, u, { payload, amount })
    const confirmation = await w.tg.waitForSent(u.id, /is active/)
    const { order, payments, consultation } = await orderState(w.deps, orderId)
    expect(order.state).toBe('active')
    expect(payments).toHaveLength(1)
    expect(payments[0]).toMatchObject({
      telegram_payment_charge_id: charge,
      total_amount: 100,
      kind: 'payment',
    })
    expect(consultation).toMatchObject({ state: 'active' })
    expect(consultation!.access_until!.getTime() - consultation!.starts_at!.getTime()).toBe(24 * HOUR)
    expect(confirmation.text).toMatch(/Window: .+ — .+ Moscow time\./)
    expect(JSON.stringify(confirmation.reply_markup)).toContain('tz:menu')

    const accounts = await consultationAccounts(w.deps, consultation!.id)
    expect(accounts.map((a) => [a.unit, a.granted])).toEqual([
      ['appeals', 3],
      ['drafts', 5],
    ])
    expect(accounts[0]!.period_start.getTime()).toBe(consultation!.starts_at!.getTime())
    expect(accounts[0]!.period_end.getTime()).toBe(consultation!.access_until!.getTime())
    expect(await jobsIn(w.deps, 'consultation.activated', { consultationId: consultation!.id })).toBe(1)
  })

  it('/status shows the active consultation with its window; the time zone can be changed', async () => {
    const u = w.tg.user({ language_code: 'en' })
    const { payload, amount } = await buy(w, u, 'quick')
    await preCheckout(w, u, { payload, amount })
    await pay(w, u, { payload, amount })
    await w.tg.waitForSent(u.id, /is active/)
    await w.tg.push(TEST_BOT_ID, w.tg.command(u, '/status'))
    const before = (await w.tg.waitForSent(u.id, /Your orders/)).text
    expect(before).toMatch(/Your orders \(Moscow time\):\n\n.*✅ active: \d+ \w+ \d{4}, \d\d:\d\d — /)

    const idx = OFFERED_ZONES.indexOf('Asia/Yekaterinburg')
    await w.tg.push(TEST_BOT_ID, w.tg.callback(u, `tz:set:${idx}`))
    await w.tg.waitFor('answerCallbackQuery', (p) => /Yekaterinburg/.test(p.text ?? ''))
    const since = w.tg.mark()
    await w.tg.push(TEST_BOT_ID, w.tg.command(u, '/status'))
    // Her own zone: its times, and no zone named (Yekaterinburg is 2 h ahead of Moscow).
    const after = (await w.tg.waitForSent(u.id, /Your orders/, { since })).text
    expect(after).toMatch(/^Your orders:\n\n.*✅ active: \d+ \w+ \d{4}, \d\d:\d\d — /)
    const hour = (text?: string) => Number(/, (\d\d):\d\d — /.exec(text ?? '')![1])
    expect((hour(after) - hour(before) + 24) % 24).toBe(2)
  })

  it('inside hours there is no choice of start: a “start when the desk opens” from an old card is refused', async () => {
    const u = w.tg.user({ language_code: 'en' })
    const hash = termsHash(w.t.desk.terms.version)
    await w.tg.push(TEST_BOT_ID, w.tg.callback(u, 'tf:show:quick'))
    const card = await w.tg.waitFor(['editMessageText', 'sendMessage'], (p) => p.chat_id === u.id)
    const data = (card.payload.reply_markup.inline_keyboard.flat() as { callback_data: string }[]).map(
      (b) => b.callback_data,
    )
    expect(data).toEqual([`tf:buy:quick:${hash}`, 'tf:list'])
    expect(card.payload.text).not.toContain('The desk is closed now')

    // A card shown outside hours, pressed now that the desk is open: refused, the current card (one button) again.
    const since = w.tg.mark()
    const old = Math.floor((Date.now() + 3 * HOUR) / 1000)
    await w.tg.push(TEST_BOT_ID, w.tg.callback(u, `tf:buy:quick:${hash}:${old}`))
    await w.tg.waitFor('answerCallbackQuery', (p) => /opening time has changed/.test(p.text ?? ''), { since })
    const again = await w.tg.waitFor(
      'sendMessage',
      (p) => p.chat_id === u.id && /Quick review/.test(p.text),
      {
        since,
      },
    )
    expect(JSON.stringify(again.payload.reply_markup)).not.toContain(':now')
    expect(w.tg.callsTo('sendInvoice', { chat_id: u.id })).toHaveLength(0)

    // "Start now" from such a card is an ordinary immediate start: no warning, the window from payment.
    const o = await buy(w, u, 'quick', 'now')
    expect(o.invoice.description).toContain('window from payment')
    expect(w.tg.sentTo(u.id, { since }).some((m) => /The desk is closed now/.test(m.text ?? ''))).toBe(false)
    expect((await orderState(w.deps, o.orderId)).order.slot_start).toBeNull()
  })
})

describe('on_request start', () => {
  it('waits in paid_waiting after payment and starts the window when the client presses Start', async () => {
    const u = w.tg.user({ language_code: 'ru' })
    const { orderId, payload, amount } = await buy(w, u, 'later')
    expect(amount).toBe(150)
    expect((await preCheckout(w, u, { payload, amount })).ok).toBe(true)
    await pay(w, u, { payload, amount })
    const confirm = await w.tg.waitForSent(u.id, /Оплата получена: 150 ⭐/)
    expect(confirm.text).toContain('«Начать»')
    expect(JSON.stringify(confirm.reply_markup)).toContain(`ord:start:${orderId}`)
    const waiting = await orderState(w.deps, orderId)
    expect(waiting.order.state).toBe('paid_waiting')
    expect(waiting.consultation).toMatchObject({ state: 'waiting', starts_at: null })
    expect(waiting.order.start_by!.getTime() - waiting.order.paid_at!.getTime()).toBe(7 * 24 * HOUR)

    await w.tg.push(TEST_BOT_ID, w.tg.callback(u, `ord:start:${orderId}`, confirm))
    await w.tg.waitForSent(u.id, /Консультация «Старт по кнопке» активна/)
    const started = await orderState(w.deps, orderId)
    expect(started.order.state).toBe('active')
    expect(started.consultation!.state).toBe('active')
    expect(started.consultation!.access_until!.getTime() - started.consultation!.starts_at!.getTime()).toBe(
      24 * HOUR,
    )

    // Pressing Start again changes nothing.
    await w.tg.push(TEST_BOT_ID, w.tg.callback(u, `ord:start:${orderId}`, confirm))
    await w.tg.waitFor('answerCallbackQuery', (p) => /уже началась/.test(p.text ?? ''))
    expect(await auditCount(w.deps, 'consultation.activated', started.consultation!.id)).toBe(1)
  })
})

describe('scheduled start', () => {
  it('offers slots with free places, holds one at pre-checkout and activates at the slot', async () => {
    const u = w.tg.user({ language_code: 'en' })
    await w.tg.push(TEST_BOT_ID, w.tg.callback(u, 'tf:slots:slot'))
    const list = await w.tg.waitFor(
      'editMessageText',
      (p) => p.chat_id === u.id && /choose when your window starts/.test(p.text),
    )
    const button = JSON.stringify(list.payload.reply_markup)
    expect(button).toContain(`tf:buy:slot:`)
    expect(button).toContain(`:${Math.floor(SLOT.getTime() / 1000)}`)
    expect(button).toContain('2 left')

    const { orderId, payload, amount } = await buy(w, u, 'slot', SLOT)
    expect((await orderState(w.deps, orderId)).order.slot_start!.getTime()).toBe(SLOT.getTime())
    expect((await preCheckout(w, u, { payload, amount })).ok).toBe(true)
    await pay(w, u, { payload, amount })
    const confirm = await w.tg.waitForSent(u.id, /Your window: /)
    expect(confirm.text).toContain('Payment received: 120 ⭐')
    const paid = await orderState(w.deps, orderId)
    expect(paid.order.state).toBe('paid_waiting')
    expect(paid.consultation!.state).toBe('waiting')
    expect(await jobsIn(w.deps, 'orders.scheduled-start', { consultationId: paid.consultation!.id })).toBe(1)

    // The scheduled job at the slot (run directly: the test does not wait two days).
    await runScheduledStart(w.deps, { consultationId: paid.consultation!.id, startsAt: SLOT.toISOString() })
    await runScheduledStart(w.deps, { consultationId: paid.consultation!.id, startsAt: SLOT.toISOString() })
    const active = await orderState(w.deps, orderId)
    expect(active.order.state).toBe('active')
    expect(active.consultation!.starts_at!.getTime()).toBe(SLOT.getTime())
    expect(active.consultation!.access_until!.getTime()).toBe(SLOT.getTime() + 24 * HOUR)
    await w.tg.waitForSent(u.id, /is active/)
    expect(await auditCount(w.deps, 'consultation.activated', active.consultation!.id)).toBe(1)
  })
})

describe('staff alerts', () => {
  it('an overpayment is recorded, the client told, and it waits in the admins queue with a Refund button', async () => {
    const u = w.tg.user({ language_code: 'en' })
    const { orderId, payload, amount } = await buy(w, u, 'quick')
    await preCheckout(w, u, { payload, amount })
    await pay(w, u, { payload, amount })
    await w.tg.waitForSent(u.id, /is active/)
    const second = await pay(w, u, { payload, amount })
    await w.tg.waitForSent(u.id, /second payment of 100 ⭐ is extra/)
    const { order, payments } = await orderState(w.deps, orderId)
    expect(order.state).toBe('active')
    expect(payments.map((p) => p.kind)).toEqual(['payment', 'overpayment'])
    // Staff alerts speak the desk's language (ru in the test config).
    const alert = await w.tg.waitForSent(STAFF_CHAT_ID, new RegExp(`Переплата ${payments[1]!.id}`))
    expect(alert.text).toContain(second.charge)
    expect(JSON.stringify(alert.reply_markup)).toContain(`rf:ask:${payments[1]!.id}`)

    await w.tg.push(TEST_BOT_ID, w.tg.command(w.admin, '/refunds'))
    const queue = await w.tg.waitForSent(w.admin.id, /Waiting for an administrator/)
    expect(queue.text).toContain(`payment ${payments[1]!.id} · overpayment · 100 ⭐`)
  })
})
