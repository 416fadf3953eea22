import type { User } from 'grammy/types'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { BotApiStandIn } from '../support/bot-api'
import { auditCount, type PayWorld, STAFF_CHAT_ID, startPayWorld, TEST_BOT_ID } from './payments-support'

/**
 * The dispute desk's other outcomes: Decline with a reason, Close, /cancel, and a second /paysupport adding to the
 * open ticket. Clients here have no payment ("not in the list"), which keeps the staff group under its 20 messages
 * a minute (the Api's throttler would otherwise hold messages back for up to a minute).
 */

let tg: BotApiStandIn
let w: PayWorld
let admin: User

beforeAll(async () => {
  w = await startPayWorld()
  ;({ tg, admin } = w)
})
afterAll(() => w?.stop())

async function openTicket(u: User, reason: string) {
  const since = tg.mark()
  await tg.push(TEST_BOT_ID, tg.command(u, '/paysupport'))
  const ask = await tg.waitForSent(u.id, /We see no payments from you/, { since })
  await tg.push(TEST_BOT_ID, tg.callback(u, 'ps:other', ask))
  await tg.waitForSent(u.id, /describe the problem in one message/, { since })
  await tg.push(TEST_BOT_ID, tg.privateText(u, reason))
  const opened = await tg.waitForSent(
    u.id,
    /Your ticket no\. (\d+) is open|Added to your ticket no\. (\d+)/,
    { since },
  )
  const ticket = Number(/no\. (\d+)/.exec(opened.text!)![1])
  const card = await tg.waitForSent(STAFF_CHAT_ID, new RegExp(`Обращение № ${ticket} \\(/paysupport\\)`))
  const d = await w.deps.db
    .selectFrom('dispute')
    .selectAll()
    .where('id', '=', ticket)
    .executeTakeFirstOrThrow()
  // The topic job stores the thread before it posts the card.
  expect(card.message.message_thread_id).toBe(d.thread_id)
  return { ticket, opened, card, dispute: d }
}

describe('declining and closing', () => {
  it('Decline asks the admin for the reason; the next message in the topic goes to the client as the reason', async () => {
    const u = tg.user({ language_code: 'en' })
    const { ticket, card, dispute } = await openTicket(u, 'I paid twice, I think.')
    expect(dispute).toMatchObject({ payment_id: null, telegram_payment_charge_id: null, state: 'open' })
    expect(card.text).toContain('Платёж: клиент не выбрал')
    await tg.push(TEST_BOT_ID, tg.callback(admin, `dp:decline:${ticket}`, card, { chatId: STAFF_CHAT_ID }))
    await tg.waitFor('answerCallbackQuery', (p) => /write the reason for declining/.test(p.text ?? ''))
    await tg.push(
      TEST_BOT_ID,
      tg.groupTopicMessage(STAFF_CHAT_ID, dispute.thread_id!, admin, 'Only one payment arrived.'),
    )
    await tg.waitForSent(
      u.id,
      `🧾 Ticket no. ${ticket}: the request was declined. Reason: Only one payment arrived.`,
    )
    await tg.waitFor('closeForumTopic', { message_thread_id: dispute.thread_id })
    await tg.waitForSent(STAFF_CHAT_ID, /Only one payment arrived\./, { threadId: dispute.thread_id! })
    expect(tg.callsTo('copyMessage', { chat_id: u.id })).toHaveLength(0)
    const d = await w.deps.db
      .selectFrom('dispute')
      .selectAll()
      .where('id', '=', ticket)
      .executeTakeFirstOrThrow()
    expect(d).toMatchObject({
      state: 'declined',
      resolution: 'Only one payment arrived.',
      resolved_by: admin.id,
    })
    expect(await auditCount(w.deps, 'dispute.declined', ticket)).toBe(1)
  })

  it('Close closes the ticket and tells the client; pressing it again changes nothing', async () => {
    const u = tg.user({ language_code: 'en' })
    const { ticket, card } = await openTicket(u, 'Where is my receipt?')
    await tg.push(TEST_BOT_ID, tg.callback(admin, `dp:close:${ticket}`, card, { chatId: STAFF_CHAT_ID }))
    await tg.push(TEST_BOT_ID, tg.callback(admin, `dp:close:${ticket}`, card, { chatId: STAFF_CHAT_ID }))
    await tg.waitFor(
      'answerCallbackQuery',
      (p) => p.text === `Ticket no. ${ticket} is no longer open (closed); nothing was changed.`,
    )
    await tg.waitForSent(
      u.id,
      `🧾 Ticket no. ${ticket} is closed. If something is still wrong, write to /paysupport again.`,
    )
    expect(await auditCount(w.deps, 'dispute.closed', ticket)).toBe(1)
  })

  it('/cancel ends the conversation without a ticket; a second /paysupport adds to the open ticket', async () => {
    const u = tg.user({ language_code: 'en' })
    await tg.push(TEST_BOT_ID, tg.command(u, '/paysupport'))
    const ask = await tg.waitForSent(u.id, /We see no payments from you/)
    await tg.push(TEST_BOT_ID, tg.callback(u, 'ps:other', ask))
    await tg.waitForSent(u.id, /describe the problem/)
    await tg.push(TEST_BOT_ID, tg.command(u, '/cancel'))
    await tg.waitForSent(u.id, /Cancelled\./)
    expect(
      await w.deps.db.selectFrom('dispute').select('id').where('user_id', '=', u.id).execute(),
    ).toHaveLength(0)

    const { ticket, dispute } = await openTicket(u, 'First message about it.')
    const again = await openTicket(u, 'And a second detail.')
    expect(again.ticket).toBe(ticket)
    expect(again.opened.text).toMatch(new RegExp(`Added to your ticket no\\. ${ticket}`))
    await tg.waitForSent(STAFF_CHAT_ID, 'Клиент дополняет: And a second detail.', {
      threadId: dispute.thread_id!,
    })
    expect(
      await w.deps.db.selectFrom('dispute').select('id').where('user_id', '=', u.id).execute(),
    ).toHaveLength(1)
  })
})
