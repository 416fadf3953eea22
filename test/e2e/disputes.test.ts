import type { Message, User } from 'grammy/types'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TestApp } from '../support/app'
import type { BotApiStandIn, SentMessage } from '../support/bot-api'
import { type DeskWorld, restartWorld, startDeskWorld } from '../support/fixtures'
import { auditCount, buy, orderState, pay, preCheckout, STAFF_CHAT_ID, TEST_BOT_ID } from './payments-support'

/**
 * /paysupport: a short conversation (payment, reason) whose state lives in Postgres — the app is restarted in the
 * middle of it — opens a ticket with a topic in the staff group; the admins act from the topic (messages reach the
 * client, Refund / Decline with reason / Close), every action audited.
 */

let tg: BotApiStandIn
let t: TestApp
let w: DeskWorld
let admin: User
let expert: User

beforeAll(async () => {
  w = await startDeskWorld({
    throttled: true,
    admin: { first_name: 'Admin' },
    expert: { first_name: 'Expert', language_code: 'en' },
  })
  ;({ tg, t, admin, expert } = w)
})
afterAll(() => w?.stop())

async function paidClient() {
  const u = tg.user({ language_code: 'en', first_name: 'Carol', username: 'carol' })
  const o = await buy(w, u, 'quick')
  expect((await preCheckout(w, u, o)).ok).toBe(true)
  const { charge } = await pay(w, u, o)
  await tg.waitForSent(u.id, /is active/)
  const payment = (await orderState(w.deps, o.orderId)).payments[0]!
  return { u, o, charge, payment }
}

function buttonsOf(m: SentMessage): string[] {
  return ((m.reply_markup as any)?.inline_keyboard ?? [])
    .flat()
    .map((b: { callback_data?: string }) => b.callback_data)
}

describe('/paysupport to a ticket to a refund', () => {
  it('survives a restart mid-conversation, opens a ticket with a topic and card, relays staff messages, refunds', async () => {
    const { u, charge, payment, o } = await paidClient()

    await tg.push(TEST_BOT_ID, tg.command(u, '/paysupport'))
    const ask = await tg.waitForSent(u.id, /Which payment is it about/)
    expect(buttonsOf(ask)).toEqual([`ps:pay:${payment.id}`, 'ps:other', 'ps:cancel'])
    expect(ask.text).toBeDefined()
    expect(JSON.stringify(ask.reply_markup)).toMatch(/Quick review · 100 ⭐/)

    // Restart: nothing of the conversation is kept in memory.
    const db = t.db
    await t.app.stop()
    const stored = await db.db
      .selectFrom('conversation_state')
      .selectAll()
      .where('chat_id', '=', u.id)
      .execute()
    expect(stored).toHaveLength(1)
    w = await restartWorld(w, { throttled: true })
    t = w.t

    await tg.push(TEST_BOT_ID, tg.callback(u, `ps:pay:${payment.id}`, ask))
    const prompt = await tg.waitForSent(u.id, /describe the problem in one message/)
    // The client has an active consultation: the reason is a reply to the prompt (force_reply opens it), so it is not
    // taken for a question to the expert.
    await tg.push(
      TEST_BOT_ID,
      tg.privateMessage(u, {
        text: 'The expert never answered my question.',
        reply_to_message: prompt.message as NonNullable<Message['reply_to_message']>,
      }),
    )
    const opened = await tg.waitForSent(
      u.id,
      /Your ticket no\. (\d+) is open\. An administrator will answer here by .+\./,
    )
    const ticket = Number(/no\. (\d+)/.exec(opened.text!)![1])
    const d = await w.deps.db
      .selectFrom('dispute')
      .selectAll()
      .where('id', '=', ticket)
      .executeTakeFirstOrThrow()
    expect(d).toMatchObject({
      payment_id: payment.id,
      telegram_payment_charge_id: charge,
      state: 'open',
      order_id: o.orderId,
    })
    expect(d.reason).toBe('The expert never answered my question.')
    expect(
      await w.deps.db.selectFrom('conversation_state').selectAll().where('chat_id', '=', u.id).execute(),
    ).toHaveLength(0)

    await tg.waitFor('createForumTopic', (p) => p.chat_id === STAFF_CHAT_ID && p.name.includes(`#${ticket}`))
    const card = await tg.waitForSent(STAFF_CHAT_ID, new RegExp(`Обращение № ${ticket} \\(/paysupport\\)`))
    const thread = card.message.message_thread_id!
    expect(
      (
        await w.deps.db
          .selectFrom('dispute')
          .select('thread_id')
          .where('id', '=', ticket)
          .executeTakeFirstOrThrow()
      ).thread_id,
    ).toBe(thread)
    expect(card.text).toContain('Carol @carol')
    expect(card.text).toContain(`списание ${charge}`)
    expect(card.text).toContain('The expert never answered my question.')
    expect(card.text).toContain(`заказ ${o.orderId} · Quick review · 100 ⭐ · идёт`)
    expect(buttonsOf(card)).toEqual([`dp:refund:${ticket}`, `dp:decline:${ticket}`, `dp:close:${ticket}`])

    // Staff write in the topic: the message reaches the client; an internal note stays.
    await tg.push(
      TEST_BOT_ID,
      tg.groupTopicMessage(STAFF_CHAT_ID, thread, admin, '// checking the logs first'),
    )
    await tg.push(TEST_BOT_ID, tg.groupTopicMessage(STAFF_CHAT_ID, thread, admin, 'We are looking into it.'))
    const copy = await tg.waitFor('copyMessage', { chat_id: u.id, from_chat_id: STAFF_CHAT_ID })
    expect(tg.callsTo('copyMessage', { chat_id: u.id })).toHaveLength(1)
    expect(copy.ok).toBe(true)

    // Only admins act on the ticket.
    await tg.push(TEST_BOT_ID, tg.callback(expert, `dp:refund:${ticket}`, card, { chatId: STAFF_CHAT_ID }))
    await tg.waitFor('answerCallbackQuery', (p) => /Only the desk's administrators/.test(p.text ?? ''))

    await tg.push(TEST_BOT_ID, tg.callback(admin, `dp:refund:${ticket}`, card, { chatId: STAFF_CHAT_ID }))
    const confirm = await tg.waitForSent(
      STAFF_CHAT_ID,
      new RegExp(`Вернуть полностью платёж по обращению № ${ticket}`),
      {
        threadId: thread,
      },
    )
    await tg.push(
      TEST_BOT_ID,
      tg.callback(admin, `dp:refund-yes:${ticket}`, confirm, { chatId: STAFF_CHAT_ID }),
    )
    await tg.waitFor('refundStarPayment', { telegram_payment_charge_id: charge, user_id: u.id })
    await tg.waitForSent(u.id, /have been refunded to you/)
    await tg.waitFor('closeForumTopic', { chat_id: STAFF_CHAT_ID, message_thread_id: thread })
    const done = await w.deps.db
      .selectFrom('dispute')
      .selectAll()
      .where('id', '=', ticket)
      .executeTakeFirstOrThrow()
    expect(done).toMatchObject({ state: 'refunded', resolved_by: admin.id })
    expect((await orderState(w.deps, o.orderId)).order.state).toBe('refunded')
    for (const action of ['dispute.opened', 'dispute.staff_message'])
      expect(await auditCount(w.deps, action, ticket)).toBe(1)
    expect(await auditCount(w.deps, 'payment.refunded', payment.id)).toBe(1)
  })
})
