// Longer than ~400 lines: the stand-in's own contract, one test per behaviour of Telegram it imitates, so the
// desk's tests can trust it; it shares one server and its bot-id counter across the file.

import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { autoRetry } from '@grammyjs/auto-retry'
import { run } from '@grammyjs/runner'
import { Bot, GrammyError, InputFile, webhookCallback } from 'grammy'
import type { Message } from 'grammy/types'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { type BotApiStandIn, media, type RecordedFile, startBotApi, TgErrors } from '../support/bot-api'

let tg: BotApiStandIn
let botCounter = 0

/** Every test gets its own bot id, so update queues and webhooks never leak between tests. */
function newBot(): { bot: Bot; token: string; id: number } {
  const id = 5_000_000_000 + ++botCounter
  const token = `${id}:AAE-stand-in_${botCounter}`
  return { bot: new Bot(token, { client: { apiRoot: tg.root } }), token, id }
}

async function apiFetch(root: string, path: string, body?: unknown) {
  const res = await fetch(`${root}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body ?? {}),
  })
  return { status: res.status, json: (await res.json()) as any }
}

beforeAll(async () => {
  tg = await startBotApi()
})
afterAll(async () => {
  await tg.close()
})
afterEach(() => {
  tg.clearRules()
})

describe('Bot API stand-in', () => {
  it('answers getMe for any <digits>:<secret> token and rejects other tokens', async () => {
    const { bot, id } = newBot()
    await bot.init()
    expect(bot.botInfo).toMatchObject({
      id,
      is_bot: true,
      username: `bot${id}`,
      can_join_groups: true,
      supports_inline_queries: false,
    })
    expect(tg.callsTo('getMe', undefined, { botId: id })).toHaveLength(1)

    const bad = await apiFetch(tg.root, '/botnot-a-token/getMe')
    expect(bad).toEqual({ status: 401, json: { ok: false, error_code: 401, description: 'Unauthorized' } })
    const unknown = await apiFetch(tg.root, `/bot${id}:x/noSuchMethod`)
    expect(unknown).toEqual({
      status: 404,
      json: { ok: false, error_code: 404, description: 'Not Found: method not found' },
    })
  })

  it('polling round trip with @grammyjs/runner: text answered, allowed_updates recorded, filtered types dropped', async () => {
    const { bot, id } = newBot()
    bot.on('message:text', (ctx) => ctx.reply(`echo: ${ctx.msg.text}`))
    bot.on('pre_checkout_query', (ctx) => ctx.answerPreCheckoutQuery(true))
    const runner = run(bot, {
      runner: { fetch: { allowed_updates: ['message', 'callback_query', 'pre_checkout_query'] } },
    })
    try {
      const alice = tg.user({ language_code: 'ru' })
      const pushed = await tg.push(id, tg.privateText(alice, 'hello'))
      expect(pushed.mode).toBe('polling')
      const call = await tg.waitFor('sendMessage', { chat_id: alice.id })
      const sent = call.result as Message
      expect(sent).toMatchObject({
        text: 'echo: hello',
        chat: { id: alice.id, type: 'private' },
        from: { id, is_bot: true },
      })
      expect(sent.message_id).toBeGreaterThan(pushed.update.message!.message_id)
      expect(tg.texts(alice.id)).toEqual(['echo: hello'])
      expect(tg.lastAllowedUpdates(id)).toContain('pre_checkout_query')

      await tg.push(id, tg.preCheckout(alice, { total_amount: 50, invoice_payload: 'order:1' }))
      const answer = await tg.waitFor('answerPreCheckoutQuery', { ok: true })
      expect(answer.ok).toBe(true)

      // message_reaction is not in the list: Telegram never delivers it.
      await tg.push(id, tg.reaction(alice, sent, '👍'))
      await vi.waitFor(() => expect(tg.droppedUpdates(id)).toHaveLength(1))
    } finally {
      await runner.stop()
    }
  })

  it('polling with bot.start(): replies, then bot.stop() confirms the offset', async () => {
    const { bot, id } = newBot()
    bot.command('start', (ctx) => ctx.reply(`start ${ctx.match}`))
    const started = bot.start({ allowed_updates: ['message'] })
    const bob = tg.user()
    const pushed = await tg.push(id, tg.command(bob, '/start', 'ref_7'))
    await tg.waitForSent(bob.id, 'start ref_7')
    await bot.stop()
    await started
    expect(tg.callsTo('deleteWebhook', undefined, { botId: id })).toHaveLength(1)
    expect(tg.pendingUpdates(id)).toEqual([])
    const last = tg.callsTo('getUpdates', undefined, { botId: id }).at(-1)!
    expect(last.payload.offset).toBe(pushed.update.update_id + 1)
  })

  it('an update delivered after a later one was confirmed is dropped by the offset, and kept as late', async () => {
    // What a webhook left set by an earlier test did to a polling run: the first message went to the dead webhook,
    // a later one was queued, fetched and confirmed, and the first, delivered again, fell below the offset.
    const { token, id } = newBot()
    await apiFetch(tg.root, `/bot${token}/setWebhook`, { url: 'http://127.0.0.1:9/gone' })
    const ann = tg.user()
    const first = await tg.push(id, tg.privateText(ann, 'first'))
    expect(first.mode).toBe('webhook')
    expect(first.status).not.toBe(200)
    await apiFetch(tg.root, `/bot${token}/deleteWebhook`)
    const second = await tg.push(id, tg.privateText(ann, 'second'))
    const got = await apiFetch(tg.root, `/bot${token}/getUpdates`, { timeout: 0 })
    expect(got.json.result.map((u: { update_id: number }) => u.update_id)).toEqual([second.update.update_id])
    await apiFetch(tg.root, `/bot${token}/getUpdates`, { offset: second.update.update_id + 1, timeout: 0 })
    await tg.redeliver(id, first)
    const after = await apiFetch(tg.root, `/bot${token}/getUpdates`, {
      offset: second.update.update_id + 1,
      timeout: 0,
    })
    expect(after.json.result).toEqual([])
    expect(tg.lateUpdates(id).map((u) => u.update_id)).toEqual([first.update.update_id])
  })

  it('two concurrent getUpdates: 409 Conflict, and close() ends a held long poll promptly', async () => {
    const own = await startBotApi()
    try {
      const first = apiFetch(own.root, '/bot42:x/getUpdates', { timeout: 30 })
      await own.waitFor('getUpdates')
      const second = await apiFetch(own.root, '/bot42:x/getUpdates', { timeout: 0 })
      expect(second.json).toEqual({ ok: true, result: [] })
      expect((await first).json).toMatchObject({
        ok: false,
        error_code: 409,
        description: /^Conflict: terminated/,
      })

      // Held for an hour unless close() ends it: if it did not, this test would run into vitest's timeout.
      const held = apiFetch(own.root, '/bot42:x/getUpdates', { timeout: 3600 })
      await own.waitForCount('getUpdates', 3)
      await own.close()
      expect((await held).json).toEqual({ ok: true, result: [] })
    } finally {
      await own.close()
    }

    const strict = await startBotApi({ pollConflict: 'reject-newer' })
    try {
      const first = apiFetch(strict.root, '/bot43:x/getUpdates', { timeout: 1 })
      await strict.waitFor('getUpdates')
      const second = await apiFetch(strict.root, '/bot43:x/getUpdates', { timeout: 0 })
      expect(second.status).toBe(409)
      expect((await first).json).toEqual({ ok: true, result: [] })
    } finally {
      await strict.close()
    }
  })

  it('webhook round trip through webhookCallback: right secret handled, wrong or missing secret 401', async () => {
    const { bot, id } = newBot()
    const seen: number[] = []
    bot.on('message:text', async (ctx) => {
      seen.push(ctx.update.update_id)
      await ctx.reply(`echo: ${ctx.msg.text}`)
    })
    const secret = 'wh_Secret-1'
    const server = createServer(webhookCallback(bot, 'http', { secretToken: secret }))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`
    try {
      await bot.api.setWebhook(url, {
        secret_token: secret,
        allowed_updates: ['message', 'pre_checkout_query'],
      })
      expect(tg.webhook(id)).toMatchObject({ url, secret_token: secret })
      expect(tg.lastAllowedUpdates(id)).toEqual(['message', 'pre_checkout_query'])

      const carol = tg.user()
      const ok = await tg.push(id, tg.privateText(carol, 'via webhook'))
      expect(ok).toMatchObject({ mode: 'webhook', status: 200, dropped: false })
      await tg.waitFor('sendMessage', { chat_id: carol.id, text: 'echo: via webhook' })

      const again = await tg.redeliver(id, ok)
      expect(again.status).toBe(200)
      expect(seen).toEqual([ok.update.update_id, ok.update.update_id])

      const dave = tg.user()
      const forged = { update_id: 1, ...tg.privateText(dave, 'forged') }
      expect((await tg.postUpdate(url, forged, { secret: 'wrong' })).status).toBe(401)
      expect((await tg.postUpdate(url, forged)).status).toBe(401)
      expect(tg.callsTo('sendMessage', { chat_id: dave.id })).toEqual([])

      const polling = await apiFetch(tg.root, `/bot${id}:x/getUpdates`)
      expect(polling.json).toMatchObject({ ok: false, error_code: 409 })
    } finally {
      await bot.api.deleteWebhook()
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it('429 with retry_after, then success through @grammyjs/auto-retry', async () => {
    const { bot } = newBot()
    bot.api.config.use(autoRetry())
    const erin = tg.user()
    const rule = tg.fail429('sendMessage', 1, { when: (p) => p.chat_id === erin.id })
    const t0 = Date.now()
    const msg = await bot.api.sendMessage(erin.id, 'after the wait')
    expect(Date.now() - t0).toBeGreaterThanOrEqual(900)
    expect(rule.hits).toBe(1)
    const calls = tg.callsTo('sendMessage', { chat_id: erin.id })
    expect(calls.map((c) => c.ok)).toEqual([false, true])
    expect(calls[0]!.error).toEqual({
      error_code: 429,
      description: 'Too Many Requests: retry after 1',
      parameters: { retry_after: 1 },
    })
    expect(msg.text).toBe('after the wait')
  })

  it('forum topics: increasing thread ids, TOPIC_CLOSED until reopened, "message thread not found" once deleted', async () => {
    const { bot } = newBot()
    const staff = tg.forum({ title: 'Experts' })
    const t1 = await bot.api.createForumTopic(staff.id, 'Client 1')
    const t2 = await bot.api.createForumTopic(staff.id, 'Client 2', { icon_color: 16766590 })
    expect(t1).toMatchObject({ name: 'Client 1', icon_color: 7322096 })
    expect(t2.message_thread_id).toBeGreaterThan(t1.message_thread_id)

    const inTopic = await bot.api.sendMessage(staff.id, 'new order', {
      message_thread_id: t1.message_thread_id,
    })
    expect(inTopic).toMatchObject({ message_thread_id: t1.message_thread_id, is_topic_message: true })

    tg.closeTopic(staff.id, t1.message_thread_id)
    await expect(
      bot.api.sendMessage(staff.id, 'x', { message_thread_id: t1.message_thread_id }),
    ).rejects.toMatchObject({ error_code: 400, description: 'Bad Request: TOPIC_CLOSED' })
    await bot.api.reopenForumTopic(staff.id, t1.message_thread_id)
    await bot.api.sendMessage(staff.id, 'reopened', { message_thread_id: t1.message_thread_id })

    tg.deleteTopic(staff.id, t1.message_thread_id)
    const error = await bot.api
      .sendMessage(staff.id, 'lost', { message_thread_id: t1.message_thread_id })
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(GrammyError)
    expect(error).toMatchObject({ error_code: 400, description: 'Bad Request: message thread not found' })
    const client = tg.user()
    const incoming = tg.privateText(client, 'question')
    await expect(
      bot.api.copyMessage(staff.id, client.id, incoming.message.message_id, {
        message_thread_id: t1.message_thread_id,
      }),
    ).rejects.toMatchObject({ description: TgErrors.threadNotFound.description })

    await bot.api.deleteForumTopic(staff.id, t2.message_thread_id)
    await expect(bot.api.editForumTopic(staff.id, t2.message_thread_id, { name: 'x' })).rejects.toMatchObject(
      {
        description: 'Bad Request: TOPIC_ID_INVALID',
      },
    )
    // Deleting a topic deletes its messages.
    expect(tg.texts(staff.id, { threadId: t1.message_thread_id })).toEqual([])
    expect(tg.texts(staff.id, { threadId: t1.message_thread_id, includeDeleted: true })).toEqual([
      'new order',
      'reopened',
    ])
  })

  it('multipart sendDocument with an InputFile from a Buffer', async () => {
    const { bot } = newBot()
    const frank = tg.user()
    const csv = Buffer.from('id,amount\n1,50\n')
    const msg = await bot.api.sendDocument(frank.id, new InputFile(csv, 'report.csv'), {
      caption: '<b>Report</b> for May',
      parse_mode: 'HTML',
      reply_markup: { inline_keyboard: [[{ text: 'OK', callback_data: 'ok' }]] },
    })
    const call = await tg.waitFor('sendDocument', { chat_id: frank.id })
    expect(call.payload.document).toEqual({
      filename: 'report.csv',
      size: csv.length,
      contentType: 'application/octet-stream',
    })
    expect((call.payload.document as RecordedFile).data?.equals(csv)).toBe(true)
    expect(call.payload.reply_markup).toEqual({ inline_keyboard: [[{ text: 'OK', callback_data: 'ok' }]] })
    expect(msg.document).toMatchObject({ file_name: 'report.csv', file_size: csv.length })
    expect(msg.caption).toBe('Report for May')
    expect(msg.caption_entities).toEqual([{ type: 'bold', offset: 0, length: 6 }])
    expect(msg.reply_markup).toEqual({ inline_keyboard: [[{ text: 'OK', callback_data: 'ok' }]] })

    const file = await bot.api.getFile(msg.document!.file_id)
    const res = await fetch(`${tg.root}/file/bot${bot.token}/${file.file_path}`)
    expect(Buffer.from(await res.arrayBuffer()).equals(csv)).toBe(true)
  })

  it('copies a client message into a topic; copyMessages keeps albums and demands increasing ids', async () => {
    const { bot } = newBot()
    const staff = tg.forum()
    const thread = tg.createTopic(staff.id, 'Grace')
    const grace = tg.user({ first_name: 'Grace' })
    const question = tg.privateText(grace, 'How do I file taxes?')
    const photo = tg.privateMessage(grace, { photo: media.photo(), caption: 'my form' })
    const album = tg.album(grace, 3, { caption: 'scans' })

    const copy = await bot.api.copyMessage(staff.id, grace.id, question.message.message_id, {
      message_thread_id: thread,
    })
    await bot.api.copyMessage(staff.id, grace.id, photo.message.message_id, { message_thread_id: thread })
    const ids = album.map((u) => u.message.message_id)
    const copies = await bot.api.copyMessages(staff.id, grace.id, ids, { message_thread_id: thread })
    expect(copies).toHaveLength(3)
    expect(copy.message_id).toBeLessThan(copies[0]!.message_id)

    const seen = tg.sentTo(staff.id, { threadId: thread })
    expect(seen.map((m) => m.text)).toEqual([
      'How do I file taxes?',
      'my form',
      'scans',
      undefined,
      undefined,
    ])
    expect(new Set(seen.slice(2).map((m) => m.message.media_group_id)).size).toBe(1)
    expect(seen[0]).toMatchObject({
      method: 'copyMessage',
      source: { chat_id: grace.id, message_id: question.message.message_id },
    })

    await expect(bot.api.copyMessages(staff.id, grace.id, [ids[2]!, ids[0]!])).rejects.toMatchObject({
      error_code: 400,
    })
    const paid = tg.successfulPayment(grace, { total_amount: 100, invoice_payload: 'o:1' })
    await expect(bot.api.copyMessage(staff.id, grace.id, paid.message.message_id)).rejects.toMatchObject({
      description: "Bad Request: message can't be copied",
    })
  })

  it('blocked users get 403; failures can be targeted, counted and delayed', async () => {
    const { bot } = newBot()
    const henry = tg.user()
    tg.block(henry.id)
    await expect(bot.api.sendMessage(henry.id, 'hi')).rejects.toMatchObject({
      error_code: 403,
      description: 'Forbidden: bot was blocked by the user',
    })
    tg.unblock(henry.id)

    tg.fail('sendMessage', TgErrors.badGateway, { times: 2, when: (p) => p.text === 'flaky' })
    await expect(bot.api.sendMessage(henry.id, 'flaky')).rejects.toMatchObject({ error_code: 502 })
    await expect(bot.api.sendMessage(henry.id, 'steady')).resolves.toMatchObject({ text: 'steady' })
    await expect(bot.api.sendMessage(henry.id, 'flaky')).rejects.toMatchObject({ error_code: 502 })
    await expect(bot.api.sendMessage(henry.id, 'flaky')).resolves.toMatchObject({ text: 'flaky' })

    tg.delay('sendChatAction', 300)
    const t0 = Date.now()
    await bot.api.sendChatAction(henry.id, 'typing')
    expect(Date.now() - t0).toBeGreaterThanOrEqual(280)
  })

  it('edits: new text echoed, "message is not modified" for the same content, parse errors like Telegram', async () => {
    const { bot } = newBot()
    const ivan = tg.user()
    const m = await bot.api.sendMessage(ivan.id, 'Choose', {
      reply_markup: { inline_keyboard: [[{ text: 'A', callback_data: 'pick:a' }]] },
    })
    const edited = await bot.api.editMessageText(ivan.id, m.message_id, 'Chosen: A')
    expect(edited).toMatchObject({ text: 'Chosen: A', message_id: m.message_id })
    expect(edited).not.toHaveProperty('reply_markup')
    await expect(bot.api.editMessageText(ivan.id, m.message_id, 'Chosen: A')).rejects.toMatchObject({
      description: TgErrors.notModified.description,
    })
    expect(tg.sentTo(ivan.id)[0]).toMatchObject({ text: 'Chosen: A', edited: true })

    await expect(
      bot.api.sendMessage(ivan.id, 'Total: 5.00', { parse_mode: 'MarkdownV2' }),
    ).rejects.toMatchObject({
      error_code: 400,
      description: /can't parse entities: Character '\.' is reserved/,
    })
    await expect(bot.api.sendMessage(ivan.id, 'a <b>b', { parse_mode: 'HTML' })).rejects.toMatchObject({
      description: /can't parse entities/,
    })
    const ok = await bot.api.sendMessage(ivan.id, '*Total:* 5\\.00', { parse_mode: 'MarkdownV2' })
    expect(ok).toMatchObject({ text: 'Total: 5.00', entities: [{ type: 'bold', offset: 0, length: 6 }] })
  })

  it('update builders produce Telegram-shaped updates with non-colliding message ids', async () => {
    const { bot, id } = newBot()
    const staff = tg.forum()
    const thread = tg.createTopic(staff.id, 'Case 9')
    const expert = tg.user({ first_name: 'Expert' })
    const judy = tg.user({ language_code: 'ru', username: 'judy' })

    const start = tg.command(judy, '/start', 'promo')
    expect(start.message).toMatchObject({
      text: '/start promo',
      entities: [{ type: 'bot_command', offset: 0, length: 6 }],
      chat: { id: judy.id, type: 'private', username: 'judy' },
      from: { id: judy.id, language_code: 'ru' },
    })
    const sent = await bot.api.sendMessage(judy.id, 'hi', {
      reply_markup: { inline_keyboard: [[{ text: 'Buy', callback_data: 'buy:1' }]] },
    })
    const next = tg.privateText(judy, 'after', { replyTo: sent })
    expect(next.message.message_id).toBe(sent.message_id + 1)
    expect(next.message.reply_to_message?.message_id).toBe(sent.message_id)

    const topicMsg = tg.groupTopicMessage(staff.id, thread, expert, 'Answer')
    expect(topicMsg.message).toMatchObject({
      chat: { id: staff.id, type: 'supergroup', is_forum: true },
      message_thread_id: thread,
      is_topic_message: true,
      reply_to_message: { message_id: thread, forum_topic_created: { name: 'Case 9' } },
    })
    const anon = tg.groupTopicMessage(staff.id, thread, expert, 'Anon', { senderChat: true })
    expect(anon.message).toMatchObject({
      from: { username: 'GroupAnonymousBot' },
      sender_chat: { id: staff.id },
    })

    const album = tg.album(judy, 2)
    expect(album[0]!.message.media_group_id).toBe(album[1]!.message.media_group_id)
    expect(album[1]!.message.message_id).toBe(album[0]!.message.message_id + 1)

    expect(tg.edited(next, 'after!').edited_message).toMatchObject({
      text: 'after!',
      message_id: next.message.message_id,
    })
    const cb = tg.callback(judy, 'buy:1')
    expect(cb.callback_query).toMatchObject({ data: 'buy:1', message: { message_id: sent.message_id } })

    const paid = tg.successfulPayment(judy, { total_amount: 250, invoice_payload: 'order:9' })
    const charge = paid.message.successful_payment!.telegram_payment_charge_id
    expect(paid.message.successful_payment).toMatchObject({
      currency: 'XTR',
      total_amount: 250,
      invoice_payload: 'order:9',
    })
    expect(charge).toMatch(/^stx/)
    const refunded = tg.refundedPayment(judy, {
      total_amount: 250,
      invoice_payload: 'order:9',
      telegram_payment_charge_id: charge,
    })
    expect(refunded.message.refunded_payment?.telegram_payment_charge_id).toBe(charge)

    const a = await tg.push(id, start)
    const b = await tg.push(id, cb)
    expect(b.update.update_id).toBe(a.update.update_id + 1)
  })

  it('Stars: transactions listed, refund recorded once, pre-checkout answered once', async () => {
    const { bot, id } = newBot()
    const kate = tg.user()
    const tx = tg.starTransaction(kate, { amount: 100, invoice_payload: 'order:1' })
    tg.setStarTransactions(id, [tx])
    expect((await bot.api.getStarTransactions()).transactions).toEqual([tx])
    await bot.api.refundStarPayment(kate.id, tx.id)
    await expect(bot.api.refundStarPayment(kate.id, tx.id)).rejects.toMatchObject({
      description: 'Bad Request: CHARGE_ALREADY_REFUNDED',
    })
    expect((await bot.api.getStarTransactions()).transactions).toHaveLength(2)

    const q = await tg.push(id, tg.preCheckout(kate, { total_amount: 100, invoice_payload: 'order:2' }))
    const qid = q.update.pre_checkout_query!.id
    await bot.api.answerPreCheckoutQuery(qid, true)
    await expect(bot.api.answerPreCheckoutQuery(qid, true)).rejects.toMatchObject({ error_code: 400 })

    await expect(
      bot.api.sendInvoice(kate.id, 'Consultation', '30 minutes', 'order:3', 'XTR', [
        { label: 'a', amount: 1 },
        { label: 'b', amount: 2 },
      ]),
    ).rejects.toMatchObject({ description: 'Bad Request: STARS_INVOICE_INVALID' })
    const invoice = await bot.api.sendInvoice(kate.id, 'Consultation', '30 minutes', 'order:3', 'XTR', [
      { label: '30 min', amount: 150 },
    ])
    expect(invoice.invoice).toMatchObject({ currency: 'XTR', total_amount: 150, title: 'Consultation' })
  })

  it('waits for future sends, overrides results, groups media, forwards, and executes webhook replies', async () => {
    const { bot, id, token } = newBot()
    const mia = tg.user()
    const later = tg.waitForSent(mia.id, /^late/)
    const nextSend = tg.nextCall('sendMessage', { chat_id: mia.id })
    setTimeout(() => void bot.api.sendMessage(mia.id, 'late reply'), 20)
    expect((await later).text).toBe('late reply')
    expect((await nextSend).payload.text).toBe('late reply')

    tg.respond('getChatMember', { status: 'left', user: mia })
    await expect(bot.api.getChatMember(-1001, mia.id)).resolves.toMatchObject({ status: 'left' })

    const group = await bot.api.sendMediaGroup(mia.id, [
      { type: 'photo', media: 'AgACfile1', caption: 'one' },
      { type: 'photo', media: 'AgACfile2' },
    ])
    expect(group).toHaveLength(2)
    expect((group[0] as Message).media_group_id).toBe((group[1] as Message).media_group_id)

    const original = tg.privateText(mia, 'forward me')
    const fwd = await bot.api.forwardMessage(mia.id, mia.id, original.message.message_id)
    expect(fwd).toMatchObject({
      text: 'forward me',
      forward_origin: { type: 'user', sender_user: { id: mia.id } },
    })

    const replying = new Bot(token, {
      client: { apiRoot: tg.root, canUseWebhookReply: (m) => m === 'sendChatAction' },
    })
    replying.on('message', (ctx) => ctx.replyWithChatAction('typing'))
    const server = createServer(webhookCallback(replying, 'http'))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      await replying.api.setWebhook(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`)
      await tg.push(id, tg.privateText(mia, 'typing please'))
      const action = await tg.waitFor('sendChatAction', { chat_id: mia.id })
      expect(action.viaWebhookReply).toBe(true)
    } finally {
      await replying.api.deleteWebhook()
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it('waitFor rejects with the recent calls listed', async () => {
    const { bot } = newBot()
    const leo = tg.user()
    await bot.api.sendMessage(leo.id, 'something else')
    const since = tg.mark()
    const error = await tg
      .waitFor('sendPhoto', { chat_id: leo.id }, { timeoutMs: 50, since })
      .catch((e: Error) => e)
    expect(error).toBeInstanceOf(Error)
    expect((error as Error).message).toMatch(/waitFor\(sendPhoto\) timed out after 50 ms/)
    expect((error as Error).message).toMatch(/sendMessage .*something else/)
    expect((await tg.waitForCount('sendMessage', 1, { chat_id: leo.id }))[0]!.payload.text).toBe(
      'something else',
    )
  })
})
