import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { User } from 'grammy/types'
import { afterAll, beforeAll, expect, it, vi } from 'vitest'
import { type App, startApp } from '../../src/app'
import { loadConfig } from '../../src/config/load'
import { quietLogger } from '../../src/log'
import { changeDesk } from '../../src/settings/settings'
import { TEST_BOT_ID, TEST_TOKEN } from '../support/app'
import { type BotApiStandIn, startBotApi } from '../support/bot-api'
import { createTestDatabase, type TestDatabase } from '../support/db'
import { eventually, inboxDrained } from '../support/fixtures'

/**
 * Issue 24 end to end, from an empty database and nothing but a token, in one process that is never restarted and
 * with no file anywhere: the owner claims the desk with the printed link, binds the staff group by adding the bot
 * (refused first for missing rights, accepted once they are granted), invites an expert, a tariff is created (through
 * changeDesk: the Telegram tariff editor is another part of the issue), a client buys it in Stars (charged exactly
 * the price shown) and their question reaches the consultation's topic in that group.
 */

let tg: BotApiStandIn
let db: TestDatabase
let app: App
const empty = mkdtempSync(path.join(os.tmpdir(), 'cd-e2e-setup-'))
let printed = ''

beforeAll(async () => {
  tg = await startBotApi({ defaultWaitTimeoutMs: 15_000 })
  db = await createTestDatabase()
  const config = loadConfig(
    { BOT_TOKEN: TEST_TOKEN, DATABASE_URL: db.url, TELEGRAM_API_ROOT: tg.root, DESK_LANGUAGE: 'en' },
    empty,
  )
  config.http = { host: '127.0.0.1', port: 0 }
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: any) => {
    printed += String(chunk)
    return true
  })
  try {
    app = await startApp(config, { log: quietLogger() })
  } finally {
    out.mockRestore()
  }
})
afterAll(async () => {
  await app?.stop()
  await db?.drop()
  await tg?.close()
  rmSync(empty, { recursive: true, force: true })
})

const desk = () => app.deps.desk(TEST_BOT_ID)
const push = async (u: Parameters<BotApiStandIn['push']>[1]) => {
  await tg.push(TEST_BOT_ID, u)
  await inboxDrained(db.db)
}
async function says(u: User, command: string, args?: string): Promise<string> {
  const since = tg.mark()
  await push(tg.command(u, command, args))
  return (await tg.waitFor('sendMessage', { chat_id: u.id }, { since })).payload.text as string
}

it('claim, bind a group, invite an expert, add a tariff, sell it, a question reaches the topic', async () => {
  // 1. The owner link, printed at start.
  const code = /\?start=(own_[A-Za-z0-9_-]+)/.exec(printed)?.[1]
  expect(code).toBeDefined()
  const olga = tg.user({ first_name: 'Olga', language_code: 'en' })
  expect(await says(olga, '/start', code)).toMatch(/you are the owner of this desk now/)
  await eventually(async () => desk().staff.owner === olga.id, 'the owner')

  // A client before the desk is set up: nothing to buy.
  const anna = tg.user({ first_name: 'Anna', language_code: 'en' })
  await push(tg.command(anna, '/tariffs'))
  expect(tg.callsTo('sendInvoice')).toHaveLength(0)

  // 2. The staff group: added without rights first (refused, in words), then granted, confirmed.
  const group = tg.forum({ title: 'Olga team' })
  let since = tg.mark()
  await push(tg.setBotMember(TEST_BOT_ID, group.id, olga, 'member'))
  const missing = await tg.waitForSent(olga.id, /cannot be the staff group yet/, { since })
  expect(missing.text).toContain('Make me an admin of the group')
  expect(desk().staffChatId).toBeUndefined()
  since = tg.mark()
  await push(
    tg.setBotMember(TEST_BOT_ID, group.id, olga, {
      rights: { can_manage_topics: true, can_pin_messages: true, can_delete_messages: true },
    }),
  )
  const ask = await tg.waitForSent(olga.id, /Use «Olga team» as the staff group\?/, { since })
  since = tg.mark()
  await push(tg.callback(olga, `sg:use:${group.id}`, ask))
  await tg.waitForSent(olga.id, /«Olga team» is the staff group now/, { since })
  await eventually(async () => desk().staffChatId === group.id, 'the staff group bound')

  // 3. An expert by invite.
  const link = await says(olga, '/invite', 'expert')
  const invite = /start=(inv_[A-Za-z0-9_-]+)/.exec(link)![1]!
  const ed = tg.user({ first_name: 'Ed', language_code: 'en' })
  expect(await says(ed, '/start', invite)).toMatch(/you are an expert now/)
  await eventually(async () => desk().staff.experts.includes(ed.id), 'Ed an expert')

  // 4. A tariff (and round-the-clock hours, so the test does not depend on the hour it runs at).
  const allDay = ['00:00-24:00']
  await changeDesk(db.db, TEST_BOT_ID, { userId: olga.id, source: 'telegram' }, 'any', (d) => {
    d.schedule.weekly = {
      mon: allDay,
      tue: allDay,
      wed: allDay,
      thu: allDay,
      fri: allDay,
      sat: allDay,
      sun: allDay,
    }
    d.tariffs.push({
      code: 'quick',
      title: { en: 'Quick review', ru: 'Быстрый разбор' },
      description: { en: 'Three questions in a day.', ru: 'Три вопроса за сутки.' },
      priceStars: 120,
      windowHours: 24,
      appeals: 3,
      slaBusinessHours: 4,
      startMode: 'immediate',
      dailyCapacity: 10,
      drafts: 0,
    } as never)
  })
  await eventually(async () => desk().tariffs.length === 1, 'the tariff')

  // 5. Sold: the card, the invoice for exactly the price, pre-checkout, payment; the consultation is active.
  since = tg.mark()
  await push(tg.command(anna, '/tariffs'))
  const list = await tg.waitFor('sendMessage', { chat_id: anna.id }, { since })
  const show = (list.payload.reply_markup?.inline_keyboard ?? []).flat()[0]?.callback_data as string
  expect(show).toBe('tf:show:quick')
  since = tg.mark()
  await push(tg.callback(anna, show))
  const card = await tg.waitFor(['editMessageText', 'sendMessage'], { chat_id: anna.id }, { since })
  expect(card.payload.text).toContain('120')
  const buy = (card.payload.reply_markup?.inline_keyboard ?? [])
    .flat()
    .map((b: { callback_data?: string }) => b.callback_data)
    .find((d: string | undefined) => d?.startsWith('tf:buy:quick:'))
  since = tg.mark()
  await push(tg.callback(anna, buy!))
  const invoice = await tg.waitFor('sendInvoice', { chat_id: anna.id }, { since })
  const p = invoice.payload as { payload: string; currency: string; prices: { amount: number }[] }
  expect(p.currency).toBe('XTR')
  expect(p.prices.reduce((s, x) => s + x.amount, 0)).toBe(120)
  const q = tg.preCheckout(anna, { invoice_payload: p.payload, total_amount: 120 })
  await tg.push(TEST_BOT_ID, q)
  await tg.waitFor('answerPreCheckoutQuery', { pre_checkout_query_id: q.pre_checkout_query!.id, ok: true })
  await push(tg.successfulPayment(anna, { invoice_payload: p.payload, total_amount: 120 }))
  const consultation = await eventually(
    async () =>
      (await db.db
        .selectFrom('consultation')
        .select(['id', 'state', 'staff_chat_id'])
        .where('user_id', '=', anna.id)
        .executeTakeFirst()) ?? undefined,
    'the consultation',
  )
  await eventually(
    async () =>
      (
        await db.db
          .selectFrom('consultation')
          .select('state')
          .where('id', '=', consultation.id)
          .executeTakeFirstOrThrow()
      ).state === 'active',
    'the consultation active',
  )
  const paid = await db.db
    .selectFrom('payment')
    .select('total_amount')
    .where('user_id', '=', anna.id)
    .executeTakeFirstOrThrow()
  expect(Number(paid.total_amount)).toBe(120)

  // 6. A question reaches its topic in the group bound from Telegram.
  const route = await eventually(
    async () =>
      (await db.db
        .selectFrom('desk_route')
        .select(['support_chat_id', 'message_thread_id', 'card_message_id'])
        .where('consultation_id', '=', consultation.id)
        .executeTakeFirst()) ?? undefined,
    'the topic',
  )
  expect(route.support_chat_id).toBe(group.id)
  const question = tg.privateMessage(anna, { text: 'How do I index this table?' })
  await push(question)
  await tg.waitFor('copyMessage', {
    chat_id: group.id,
    from_chat_id: anna.id,
    message_id: question.message.message_id,
    message_thread_id: route.message_thread_id,
  })
})
