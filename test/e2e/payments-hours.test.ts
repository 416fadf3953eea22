import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
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
 * Business hours around payment: a desk that is closed now (open one minute a week, at a time the test does not
 * run at) warns before an immediate-start payment, and an on_request window cannot be started until it opens.
 */

// One minute a week, 12 hours away from now in the desk's zone: closed whenever the test runs.
const { opening, interval, configure } = openTwelveHoursAhead(1, 'minute')

let w: PayWorld
beforeAll(async () => {
  w = await startPayWorld(configure)
})
afterAll(() => w?.stop())

describe('outside business hours', () => {
  it('the tariff card and the invoice are preceded by a warning that the answer clock waits for opening', async () => {
    const u = w.tg.user({ language_code: 'en' })
    await w.tg.push(TEST_BOT_ID, w.tg.callback(u, 'tf:show:quick'))
    const card = await w.tg.waitFor(['editMessageText', 'sendMessage'], (p) =>
      /Quick review — 100 ⭐/.test(p.text),
    )
    const expected = opening.setLocale('en-GB').toFormat('d MMM yyyy, HH:mm')
    expect(card.payload.text).toContain(`the answer clock only runs from ${expected} Moscow time`)
    expect(card.payload.text).toContain(
      `Hours: ${opening.setLocale('en-GB').toFormat('ccc')} ${interval.replace('-', '–')}`,
    )

    const since = w.tg.mark()
    await buy(w, u, 'quick', 'now')
    const warning = w.tg.sentTo(u.id, { since }).find((m) => /The desk is closed now/.test(m.text ?? ''))
    expect(warning).toBeDefined()
  })

  it('Start on an on_request order is refused until the desk opens, with the opening time', async () => {
    const u = w.tg.user({ language_code: 'ru' })
    const o = await buy(w, u, 'later')
    await preCheckout(w, u, o)
    await pay(w, u, o)
    await w.tg.waitForSent(u.id, /Оплата получена/)
    await w.tg.push(TEST_BOT_ID, w.tg.callback(u, `ord:start:${o.orderId}`))
    const refusal = await w.tg.waitFor('answerCallbackQuery', (p) =>
      /Сейчас нерабочее время/.test(p.text ?? ''),
    )
    expect(refusal.payload.text).toContain(opening.setLocale('ru').toFormat('d MMM yyyy, HH:mm'))
    expect((await orderState(w.deps, o.orderId)).order.state).toBe('paid_waiting')
  })
})
