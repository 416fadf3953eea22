import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { refundPayment } from '../../src/payments/refunds'
import { OFFERED_ZONES } from '../../src/time/client-time'
import {
  buy,
  orderState,
  type PayWorld,
  pay,
  preCheckout,
  startPayWorld,
  TEST_BOT_ID,
  tariff,
} from './payments-support'

/**
 * The words a client reads (issue 14): plurals through Fluent's rules, "question" rather than "appeal", the refund
 * policy and the compensation for a late answer on the card and in /terms (the refund policy per tariff, kept on
 * the order and applied by a refund), /help with every client command, the time-zone picker with city names.
 */

let w: PayWorld
beforeAll(async () => {
  w = await startPayWorld((c) => {
    c.desks[0]!.tariffs.push(
      tariff({ code: 'one', appeals: 1, breachPolicy: { kind: 'extend_window', hours: 6 } }),
      tariff({ code: 'five', appeals: 5, refundPolicy: 'stop', breachPolicy: { kind: 'extra_appeal' } }),
      tariff({ code: 'twentyone', appeals: 21 }),
    )
  })
})
afterAll(() => w?.stop())

async function card(lang: 'ru' | 'en', code: string): Promise<string> {
  const u = w.tg.user({ language_code: lang })
  const since = w.tg.mark()
  await w.tg.push(TEST_BOT_ID, w.tg.callback(u, `tf:show:${code}`))
  const m = await w.tg.waitFor(['editMessageText', 'sendMessage'], (p) => p.chat_id === u.id, { since })
  return m.payload.text as string
}

describe('the tariff card', () => {
  it('counts questions with plural rules in both languages, never "appeal" / «обращение»', async () => {
    expect(await card('en', 'one')).toContain('Included: 1 question (')
    expect(await card('en', 'five')).toContain('Included: 5 questions (')
    expect(await card('ru', 'one')).toContain('Входит: 1 вопрос (')
    expect(await card('ru', 'five')).toContain('Входит: 5 вопросов (')
    expect(await card('ru', 'twentyone')).toContain('Входит: 21 вопрос (')
    expect(await card('ru', 'quick')).toContain('Входит: 3 вопроса (')
    for (const code of ['one', 'five', 'quick']) {
      expect(await card('en', code)).not.toMatch(/appeal/i)
      expect(await card('ru', code)).not.toMatch(/обращени|стол/i)
    }
  })

  it('states the refund policy and the compensation for a late answer before payment', async () => {
    const one = await card('en', 'one')
    expect(one).toContain('questions already accepted are still answered')
    expect(one).toContain('A late answer: your window is extended by 6 h.')
    const five = await card('ru', 'five')
    expect(five).toContain('консультация сразу закрывается, включая вопросы без ответа')
    expect(five).toContain('Если ответ опоздает: вы получите ещё один вопрос.')
    expect(await card('ru', 'quick')).toContain('Если ответ опоздает: компенсации нет')
    // Before the terms (accepted by paying).
    expect(one.indexOf('A late answer')).toBeLessThan(one.indexOf('Terms (version'))
  })

  it('/terms lists each tariff with its refund policy and compensation', async () => {
    const u = w.tg.user({ language_code: 'en' })
    await w.tg.push(TEST_BOT_ID, w.tg.command(u, '/terms'))
    const text = (await w.tg.waitForSent(u.id, /Terms \(version/)).text as string
    expect(text).toContain('Refunds and late answers, by tariff:')
    expect(text).toMatch(/Tariff five: Refunds: .*ends at once.* A late answer: you get one extra question\./)
  })
})

describe('the invoice', () => {
  it('describes the questions with plural rules', async () => {
    const ru = w.tg.user({ language_code: 'ru' })
    expect((await buy(w, ru, 'five')).invoice.description).toMatch(/^Консультация: 5 вопросов, окно/)
    const en = w.tg.user({ language_code: 'en' })
    expect((await buy(w, en, 'one')).invoice.description).toMatch(/^Consultation: 1 question, 24 h window/)
  })
})

describe('refund policy per tariff', () => {
  it('the order keeps its tariff policy and a refund applies it ("stop" for five, "deliver" for quick)', async () => {
    for (const [code, policy, words] of [
      ['five', 'stop', /including questions not answered yet/],
      ['quick', 'deliver', /answers to questions already accepted will still be delivered/],
    ] as const) {
      const u = w.tg.user({ language_code: 'en' })
      const o = await buy(w, u, code)
      expect(await preCheckout(w, u, o)).toMatchObject({ ok: true })
      await pay(w, u, o)
      await w.tg.waitForSent(u.id, /is active/)
      const s = await orderState(w.deps, o.orderId)
      expect(s.order.refund_policy).toBe(policy)
      const r = await refundPayment(
        w.deps,
        w.t.desk,
        { paymentId: s.payments[0]!.id },
        { id: w.admin.id, source: 'admin' },
      )
      expect(r.status).toBe('refunded')
      expect((await orderState(w.deps, o.orderId)).consultation).toMatchObject({
        state: 'revoked',
        refund_policy: policy,
      })
      await w.tg.waitForSent(u.id, words)
    }
  })
})

describe('help and time zones', () => {
  it('/help lists /timezone and /cancel in both languages', async () => {
    for (const lang of ['en', 'ru'] as const) {
      const u = w.tg.user({ language_code: lang })
      await w.tg.push(TEST_BOT_ID, w.tg.command(u, '/help'))
      const text = (await w.tg.waitForSent(u.id, /\/tariffs/)).text as string
      for (const c of [
        '/start',
        '/tariffs',
        '/status',
        '/transcript',
        '/timezone',
        '/terms',
        '/privacy',
        '/paysupport',
        '/cancel',
      ])
        expect(text).toContain(c)
    }
  })

  it('the picker shows city names in the client language, and sets the zone', async () => {
    const u = w.tg.user({ language_code: 'ru' })
    await w.tg.push(TEST_BOT_ID, w.tg.command(u, '/timezone'))
    const picker = await w.tg.waitForSent(u.id, /Выберите свой часовой пояс/)
    // What the client reads: the buttons' texts (the data names the zone, unseen).
    const buttons = JSON.stringify(
      (picker.reply_markup as { inline_keyboard: { text: string }[][] }).inline_keyboard
        .flat()
        .map((b) => b.text),
    )
    expect(buttons).toContain('"Москва"')
    expect(buttons).toContain('"Нью-Йорк"')
    expect(buttons).not.toContain('Europe/Moscow')
    const e = w.tg.user({ language_code: 'en' })
    await w.tg.push(TEST_BOT_ID, w.tg.command(e, '/timezone'))
    expect(JSON.stringify((await w.tg.waitForSent(e.id, /Choose your time zone/)).reply_markup)).toContain(
      '"Yekaterinburg"',
    )
    const idx = OFFERED_ZONES.indexOf('Asia/Yekaterinburg')
    await w.tg.push(TEST_BOT_ID, w.tg.callback(e, `tz:set:${idx}`))
    await w.tg.waitFor(
      'answerCallbackQuery',
      (p) => /Yekaterinburg/.test(p.text ?? '') && !/Asia\//.test(p.text ?? ''),
    )
  })
})
