import type { User } from 'grammy/types'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SentMessage } from '../support/bot-api'
import { type DeskWorld, startDeskWorld, TEST_BOT_ID } from '../support/fixtures'
import { BASIC, withPlans } from './subscriptions-support'

/**
 * A fresh client finds the support plans from /start (issue 22): the summary names them with their price per 30
 * days, the list of tariffs has a button per plan, its card has Subscribe, and Subscribe gives the subscription link
 * (createInvoiceLink with subscription_period, as the stand-in records it). Only buttons the bot itself sent are
 * pressed. /help and the command menu name /plan, /mydata and /forget.
 */

let w: DeskWorld
beforeAll(async () => {
  w = await startDeskWorld({ configure: withPlans([BASIC]) })
})
afterAll(() => w?.stop())

/** The message's buttons as they are now (an edit replaces them). */
function buttons(m: SentMessage): { text: string; callback_data?: string; url?: string }[] {
  return ((m.message as any).reply_markup ?? m.reply_markup)?.inline_keyboard?.flat() ?? []
}

/** The callback data of the first button of `m` whose data starts with `prefix`. */
function button(m: SentMessage, prefix: string): string {
  const rows = [buttons(m)]
  const data = rows.flat().find((b) => b.callback_data?.startsWith(prefix))?.callback_data
  expect(data, `a ${prefix} button in ${JSON.stringify(rows)}`).toBeDefined()
  return data!
}

/** Presses the button; the answer may be an edit of the same message (the stand-in shows it as edited). */
async function press(client: User, m: SentMessage, prefix: string, expected: RegExp): Promise<SentMessage> {
  await w.tg.push(TEST_BOT_ID, w.tg.callback(client, button(m, prefix), m))
  return w.tg.waitForSent(client.id, expected)
}

describe.each([
  {
    lang: 'en',
    summary: /Support plans[\s\S]*Plan basic — 500 ⭐ per 30 days/,
    list: /one-off consultation or a support plan/,
    card: /Plan basic — 500 ⭐ per 30 days[\s\S]*Terms \(version basic-v1\)/,
    link: /open the link below to subscribe \(500 ⭐ every 30 days/,
  },
  {
    lang: 'ru',
    summary: /Планы поддержки[\s\S]*План basic — 500 ⭐ за 30 дней/,
    list: /разовую консультацию или план поддержки/,
    card: /План basic — 500 ⭐ за 30 дней[\s\S]*Условия \(версия basic-v1\)/,
    link: /500 ⭐ каждые 30 дней/,
  },
])('a fresh client ($lang) pressing through /start', ({ lang, summary, list, card, link }) => {
  it('reaches the plan’s subscription link (30 days, XTR, the plan’s price)', async () => {
    const client = w.tg.user({ language_code: lang })
    await w.tg.push(TEST_BOT_ID, w.tg.command(client, '/start'))
    const welcome = await w.tg.waitForSent(client.id, summary)
    const shown = await press(client, welcome, 'tf:list', list)
    // The list keeps the one-off tariffs and adds the plan with its price per 30 days.
    const labels = buttons(shown).map((b) => b.text)
    expect(labels.some((t) => /500 ⭐ \/ 30/.test(t))).toBe(true)
    expect(labels.length).toBe(w.t.desk.tariffs.length + 1)
    const plan = await press(client, shown, 'sub:show:basic', card)
    const since = w.tg.mark()
    const sent = await press(client, plan, 'sub:buy:basic:', link)
    const call = w.tg.callsTo('createInvoiceLink', {}, { since })
    expect(call).toHaveLength(1)
    expect(call[0]!.payload).toMatchObject({
      currency: 'XTR',
      subscription_period: 2592000,
      prices: [{ amount: 500 }],
    })
    const url = buttons(sent)[0]?.url
    expect(url).toBe(call[0]!.result)
  })
})

describe('/help and the command menu', () => {
  it('/help names /plan, /mydata and /forget', async () => {
    const client = w.tg.user({ language_code: 'en' })
    await w.tg.push(TEST_BOT_ID, w.tg.command(client, '/help'))
    const help = await w.tg.waitForSent(client.id, /\/paysupport/)
    expect(help.text).toMatch(/\/plan — support plans/)
    expect(help.text).toContain('/mydata')
    expect(help.text).toContain('/forget')
  })

  it('the menu lists /plan and /mydata in both languages', () => {
    const menus = w.tg.callsTo('setMyCommands').map((c) => c.payload as any)
    for (const lang of ['en', 'ru']) {
      const menu = menus.find((m) => m.language_code === lang)
      const commands = (menu?.commands ?? []).map((c: { command: string }) => c.command)
      expect(commands).toEqual(expect.arrayContaining(['plan', 'mydata', 'tariffs']))
    }
  })
})
