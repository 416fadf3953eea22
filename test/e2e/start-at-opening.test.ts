import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runScheduledStart } from '../../src/consultations/start.service'
import { termsHash } from '../../src/orders/orders.service'
import { OFFERED_ZONES } from '../../src/time/client-time'
import { formatInstant } from '../../src/time/format'
import { inboxDrained } from '../support/fixtures'
import {
  buy,
  jobsIn,
  openTwelveHoursAhead,
  orderState,
  type PayWorld,
  pay,
  preCheckout,
  startPayWorld,
  TEST_BOT_ID,
} from './payments-support'

/**
 * An immediate tariff bought outside hours: the client chooses before paying whether the window starts now (it runs
 * while the desk is closed) or when the desk opens (the whole window counts from the opening; the order waits paid
 * until then and the scheduled-start job activates it). The desk below works half an hour a week, about 12 hours
 * from now: closed whenever the test runs.
 */

const HOUR = 3_600_000
const ZONE = 'Europe/Moscow'
const { opening, configure } = openTwelveHoursAhead(30, 'hour')
const OPENING = opening.toJSDate()

let w: PayWorld
beforeAll(async () => {
  w = await startPayWorld(configure)
})
afterAll(() => w?.stop())

const hash = () => termsHash(w.t.desk.terms.version)
const openingData = () => `tf:buy:quick:${hash()}:${Math.floor(OPENING.getTime() / 1000)}`

describe('an immediate tariff outside hours', () => {
  it('the card offers both starts, the opening in the client’s zone; a plain “pay” asks to choose first', async () => {
    const u = w.tg.user({ language_code: 'ru' })
    const zone = 'Asia/Yekaterinburg'
    await w.tg.push(TEST_BOT_ID, w.tg.callback(u, `tz:set:${OFFERED_ZONES.indexOf(zone)}`))
    await inboxDrained(w.deps.db)

    await w.tg.push(TEST_BOT_ID, w.tg.callback(u, 'tf:show:quick'))
    const card = await w.tg.waitFor(
      ['editMessageText', 'sendMessage'],
      (p) => p.chat_id === u.id && /Быстрый разбор — 100 ⭐/.test(p.text),
    )
    const buttons = card.payload.reply_markup.inline_keyboard.flat() as {
      text: string
      callback_data: string
    }[]
    const data = buttons.map((b) => b.callback_data)
    expect(data).toContain(`tf:buy:quick:${hash()}:now`)
    expect(data).toContain(openingData())
    expect(data).not.toContain(`tf:buy:quick:${hash()}`)
    const later = buttons.find((b) => b.callback_data === openingData())!
    // In the zone she picked, her own: no zone named.
    expect(later.text).toContain(`(${formatInstant(OPENING, { id: zone, own: true }, 'ru')})`)
    expect(later.text).not.toContain('по Екатеринбургу')
    expect(card.payload.text).toContain('Выберите ниже')

    // A pay button of a card shown while the desk was open: no order, no invoice; the choice is shown instead.
    const since = w.tg.mark()
    await w.tg.push(TEST_BOT_ID, w.tg.callback(u, `tf:buy:quick:${hash()}`))
    await w.tg.waitFor('answerCallbackQuery', (p) => /Выберите, когда начнётся окно/.test(p.text ?? ''), {
      since,
    })
    const again = await w.tg.waitFor(
      'sendMessage',
      (p) => p.chat_id === u.id && JSON.stringify(p.reply_markup ?? {}).includes(openingData()),
      { since },
    )
    expect(JSON.stringify(again.payload.reply_markup)).toContain(`tf:buy:quick:${hash()}:now`)
    await inboxDrained(w.deps.db)
    expect(w.tg.callsTo('sendInvoice', { chat_id: u.id })).toHaveLength(0)
    const orders = await w.deps.db.selectFrom('orders').select('id').where('user_id', '=', u.id).execute()
    expect(orders).toHaveLength(0)
  })

  it('“start when the desk opens”: paid and waiting, the window counts from the opening', async () => {
    const u = w.tg.user({ language_code: 'en' })
    const since = w.tg.mark()
    const o = await buy(w, u, 'quick', OPENING)
    const at = formatInstant(OPENING, ZONE, 'en')
    expect(o.invoice.description).toContain(`window from the desk's opening, ${at}`)
    const told = await w.tg.waitForSent(u.id, /starts when the desk opens/, { since })
    expect(told.text).toContain(at)
    expect(told.text).toContain(formatInstant(new Date(OPENING.getTime() + 24 * HOUR), ZONE, 'en'))
    expect(w.tg.sentTo(u.id, { since }).some((m) => /The desk is closed now/.test(m.text ?? ''))).toBe(false)

    // The place is one of the opening's day.
    expect((await preCheckout(w, u, o)).ok).toBe(true)
    expect((await orderState(w.deps, o.orderId)).order.capacity_key).toBe(`day:quick:${opening.toISODate()}`)

    await pay(w, u, o)
    const confirm = await w.tg.waitForSent(u.id, /Your window starts when the desk opens/)
    expect(confirm.text).toContain('Payment received: 100 ⭐')
    expect(confirm.text).toContain(at)
    const paid = await orderState(w.deps, o.orderId)
    expect(paid.order.state).toBe('paid_waiting')
    expect(paid.order.slot_start!.getTime()).toBe(OPENING.getTime())
    expect(paid.consultation!.state).toBe('waiting')
    expect(
      await jobsIn(w.deps, 'orders.scheduled-start', {
        consultationId: paid.consultation!.id,
        startsAt: OPENING.toISOString(),
      }),
    ).toBe(1)

    // The job at the opening (run directly: the test does not wait 12 hours).
    await runScheduledStart(w.deps, {
      consultationId: paid.consultation!.id,
      startsAt: OPENING.toISOString(),
    })
    const active = await orderState(w.deps, o.orderId)
    expect(active.order.state).toBe('active')
    expect(active.consultation!.starts_at!.getTime()).toBe(OPENING.getTime())
    expect(active.consultation!.access_until!.getTime()).toBe(OPENING.getTime() + 24 * HOUR)
    await w.tg.waitForSent(u.id, /is active/)
  })

  it('a redelivered “start when the desk opens” makes one order and one invoice', async () => {
    const u = w.tg.user({ language_code: 'en' })
    const pushed = await w.tg.push(TEST_BOT_ID, w.tg.callback(u, openingData()))
    await w.tg.waitFor('sendInvoice', { chat_id: u.id })
    await w.tg.redeliver(TEST_BOT_ID, pushed)
    await inboxDrained(w.deps.db)
    expect(w.tg.callsTo('sendInvoice', { chat_id: u.id })).toHaveLength(1)
    const orders = await w.deps.db
      .selectFrom('orders')
      .select('slot_start')
      .where('user_id', '=', u.id)
      .execute()
    expect(orders.map((r) => r.slot_start?.getTime())).toEqual([OPENING.getTime()])
  })

  it('“start now” keeps the window from payment, with the warning that answers wait for the opening', async () => {
    const u = w.tg.user({ language_code: 'en' })
    const since = w.tg.mark()
    const o = await buy(w, u, 'quick', 'now')
    expect(o.invoice.description).toContain('window from payment')
    const warning = await w.tg.waitForSent(u.id, /The desk is closed now/, { since })
    expect(warning.text).toContain(formatInstant(OPENING, ZONE, 'en'))
    expect((await orderState(w.deps, o.orderId)).order.slot_start).toBeNull()
    expect((await preCheckout(w, u, o)).ok).toBe(true)
    await pay(w, u, o)
    const active = await w.tg.waitForSent(u.id, /is active/)
    expect(active.text).toMatch(/the expert's answers start when it opens/)
    const s = await orderState(w.deps, o.orderId)
    expect(s.order.state).toBe('active')
    expect(s.consultation!.starts_at!.getTime()).toBeLessThan(OPENING.getTime())
    expect(s.consultation!.access_until!.getTime()).toBe(s.consultation!.starts_at!.getTime() + 24 * HOUR)
  })
})
