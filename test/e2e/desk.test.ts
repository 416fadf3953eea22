import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  appeals,
  clientSends,
  consultationWithTopic,
  type DeskWorld,
  itemIn,
  items,
  lanesIdle,
  newClient,
  payThroughTelegram,
  STAFF_CHAT_ID,
  staffSends,
  startDeskWorld,
  TEST_BOT_ID,
  topicReady,
} from '../support/fixtures'

/**
 * The desk end to end: the real app (src/app.ts) on its own database, Telegram played by the Bot API stand-in over
 * HTTP. Waits are on recorded calls or on database rows, never on sleeps.
 */

describe('desk: the production path (throttled Api)', () => {
  let w: DeskWorld
  beforeAll(async () => {
    w = await startDeskWorld({ throttled: true })
  })
  afterAll(() => w?.stop())

  it('pay, one topic with the card pinned, the first question copied into it; the expert answer copied back', async () => {
    const client = await newClient(w, { first_name: 'Anna', username: 'anna_dev', language_code: 'en' })
    const { consultationId } = await payThroughTelegram(w, client)
    const route = await topicReady(w, consultationId)
    const thread = route.message_thread_id

    const created = w.tg.callsTo('createForumTopic', { chat_id: STAFF_CHAT_ID }, { ok: true })
    expect(created).toHaveLength(1)
    // The owner (src/experts) closes the name: the only expert of the test desk, named by id until seen.
    expect(created[0]!.payload.name).toMatch(/^🟢 Anna · Quick review · #\d+ · 👤 id 900002$/)
    const card = w.tg.sentTo(STAFF_CHAT_ID, { threadId: thread })[0]!
    expect(card.text).toContain('Anna (@anna_dev)')
    expect(card.text).toContain(`id ${client.id}`)
    expect(card.text).toContain('3 из 3') // the desk's language (ru) for staff texts
    expect(card.text).toContain('Ведёт: id 900002')
    await w.tg.waitFor('pinChatMessage', { chat_id: STAFF_CHAT_ID, message_id: card.message_id })

    const q = await clientSends(w, client, {
      text: 'How do I *sign* the webhook?',
      entities: [{ type: 'bold', offset: 10, length: 6 }],
    })
    const copy = await w.tg.waitFor(
      'copyMessage',
      { chat_id: STAFF_CHAT_ID, from_chat_id: client.id, message_id: q.message_id },
      { ok: true },
    )
    expect(copy.payload).toMatchObject({ from_chat_id: client.id, message_thread_id: thread })
    const inTopic = w.tg.message(STAFF_CHAT_ID, copy.result.message_id)!
    expect(inTopic.text).toBe('How do I *sign* the webhook?')
    expect(inTopic.entities).toEqual([{ type: 'bold', offset: 10, length: 6 }])
    await w.tg.waitForSent(client.id, /Question #1 accepted/)
    await w.tg.waitFor('setMessageReaction', { chat_id: client.id, message_id: q.message_id })

    const answer = await staffSends(w, thread, w.expert, 'Use HMAC-SHA256 over the raw body.')
    const back = await w.tg.waitFor(
      'copyMessage',
      { chat_id: client.id, from_chat_id: STAFF_CHAT_ID, message_id: answer.message.message_id },
      { ok: true },
    )
    expect(w.tg.message(client.id, back.result.message_id)?.text).toBe('Use HMAC-SHA256 over the raw body.')
    const [a] = await appeals(w, consultationId)
    expect(a).toMatchObject({ number: 1, state: 'answered', answered_by: w.expert.id, in_time: true })
    expect(a!.first_response_at!.getTime()).toBeGreaterThanOrEqual(a!.accepted_at.getTime())
    expect(w.tg.callsTo('createForumTopic', { chat_id: STAFF_CHAT_ID })).toHaveLength(1)
  })
})

describe('desk: mirroring', () => {
  let w: DeskWorld
  beforeAll(async () => {
    w = await startDeskWorld()
  })
  afterAll(() => w?.stop())

  async function started(lang = 'en') {
    const { client, consultationId, route } = await consultationWithTopic(w, { language_code: lang })
    return { client, consultationId, thread: route.message_thread_id }
  }

  it('relays staff only: a non-staff member and internal notes stay in the topic; an anonymous admin is relayed', async () => {
    const { client, consultationId, thread } = await started()
    const question = await clientSends(w, client, 'Question')
    await itemIn(w, client.id, question.message_id, 'sent')
    const outsider = w.tg.user({ first_name: 'Guest' })
    await staffSends(w, thread, outsider, 'I am not staff')
    await staffSends(w, thread, w.expert, '// internal: check their logs first')
    const { media } = await import('../support/bot-api')
    await staffSends(w, thread, w.expert, { caption: '//also internal', photo: media.photo() })
    const anon = await staffSends(w, thread, w.admin, 'From the desk', { senderChat: true })
    const relayed = await w.tg.waitFor(
      'copyMessage',
      { chat_id: client.id, from_chat_id: STAFF_CHAT_ID, message_id: anon.message.message_id },
      { ok: true },
    )
    expect(relayed.ok).toBe(true)
    await lanesIdle(w, consultationId)
    const toClient = w.tg.callsTo('copyMessage', { chat_id: client.id })
    expect(toClient).toHaveLength(1)
    const [a] = await appeals(w, consultationId)
    expect(a).toMatchObject({ state: 'answered', answered_by: STAFF_CHAT_ID })
  })

  it('copies every copyable type with copyMessage, text with its entities and never a parse_mode', async () => {
    const { client, consultationId } = await started()
    const { media } = await import('../support/bot-api')
    const sent = [
      await clientSends(w, client, {
        text: 'a_b *c* [x](y)',
        entities: [{ type: 'italic', offset: 0, length: 3 }],
      }),
      await clientSends(w, client, { photo: media.photo(), caption: 'photo' }),
      await clientSends(w, client, { document: media.document() }),
      await clientSends(w, client, { voice: media.voice() }),
      await clientSends(w, client, { video_note: media.videoNote() }),
      await clientSends(w, client, { sticker: media.sticker() }),
      await clientSends(w, client, { location: media.location() }),
      await clientSends(w, client, { contact: media.contact() }),
      await clientSends(w, client, { poll: media.poll() as never }),
    ]
    for (const m of sent) await itemIn(w, client.id, m.message_id, 'sent')
    const copies = w.tg.callsTo('copyMessage', { chat_id: STAFF_CHAT_ID, from_chat_id: client.id })
    expect(copies.map((c) => c.payload.message_id)).toEqual(sent.map((m) => m.message_id))
    expect(copies.every((c) => c.payload.parse_mode === undefined)).toBe(true)
    // All of them are one appeal: nothing was answered in between.
    expect(await appeals(w, consultationId)).toHaveLength(1)
  })

  it('keeps an album together: one copyMessages call with the parts in order', async () => {
    const { client, consultationId, thread } = await started()
    const parts = w.tg.album(client, 3, { caption: 'three screenshots' })
    for (const p of parts) await w.tg.push(TEST_BOT_ID, p)
    const call = await w.tg.waitFor('copyMessages', { chat_id: STAFF_CHAT_ID }, { ok: true })
    expect(call.payload).toMatchObject({
      from_chat_id: client.id,
      message_thread_id: thread,
      message_ids: parts.map((p) => p.message.message_id),
    })
    const copies = w.tg.sentTo(STAFF_CHAT_ID, { threadId: thread }).filter((m) => m.method === 'copyMessages')
    expect(copies).toHaveLength(3)
    expect(new Set(copies.map((m) => m.message.media_group_id)).size).toBe(1)
    await lanesIdle(w, consultationId)
    expect(w.tg.callsTo('copyMessage', { chat_id: STAFF_CHAT_ID, from_chat_id: client.id })).toHaveLength(0)
    const rows = await items(w, consultationId)
    expect(rows.filter((r) => r.state === 'sent' && r.mirror_message_id !== null)).toHaveLength(3)
  })

  it('mirrors real edits both ways and keeps replies pointing at the right message', async () => {
    const { client, consultationId, thread } = await started()
    const q = await clientSends(w, client, 'Frist version')
    const inTopic = await itemIn(w, client.id, q.message_id, 'sent')

    // A real change edits the copy; a redundant edit (same text) calls nothing.
    await w.tg.push(TEST_BOT_ID, w.tg.edited(q, 'First version'))
    const edit = await w.tg.waitFor('editMessageText', {
      chat_id: STAFF_CHAT_ID,
      message_id: inTopic.mirror_message_id,
    })
    expect(edit.payload.text).toBe('First version')
    await w.tg.push(TEST_BOT_ID, w.tg.edited(q, 'First version'))

    // The expert replies to the client's copy: the client's copy of the answer replies to their own message.
    const answer = await staffSends(w, thread, w.expert, 'Got it', {
      replyTo: w.tg.message(STAFF_CHAT_ID, inTopic.mirror_message_id!)!,
    })
    const back = await w.tg.waitFor('copyMessage', {
      chat_id: client.id,
      from_chat_id: STAFF_CHAT_ID,
      message_id: answer.message.message_id,
    })
    expect(back.payload.reply_parameters).toMatchObject({ message_id: q.message_id })
    const out = await itemIn(w, STAFF_CHAT_ID, answer.message.message_id, 'sent')

    // The expert fixes a typo: the client's copy is edited.
    await w.tg.push(TEST_BOT_ID, w.tg.edited(answer, 'Got it, thanks'))
    const fix = await w.tg.waitFor('editMessageText', {
      chat_id: client.id,
      message_id: out.mirror_message_id,
    })
    expect(fix.payload.text).toBe('Got it, thanks')

    // The client replies to the answer: the copy in the topic replies to the expert's message.
    const follow = w.tg.privateText(client, 'One more thing', { replyTo: out.mirror_message_id! })
    await w.tg.push(TEST_BOT_ID, follow)
    const copy = await w.tg.waitFor('copyMessage', {
      chat_id: STAFF_CHAT_ID,
      from_chat_id: client.id,
      message_id: follow.message.message_id,
    })
    expect(copy.payload.reply_parameters).toMatchObject({ message_id: answer.message.message_id })
    await lanesIdle(w, consultationId)
    expect(
      w.tg.callsTo('editMessageText', { chat_id: STAFF_CHAT_ID, message_id: inTopic.mirror_message_id }),
    ).toHaveLength(1)
  })

  it('a redelivered update changes nothing (client and staff side)', async () => {
    const { client, consultationId, thread } = await started()
    const draft = w.tg.privateText(client, 'Once')
    const pushed = await w.tg.push(TEST_BOT_ID, draft)
    await itemIn(w, client.id, draft.message.message_id, 'sent')
    await w.tg.redeliver(TEST_BOT_ID, pushed)
    const answer = w.tg.groupTopicMessage(STAFF_CHAT_ID, thread, w.expert, 'Answer once')
    const pushedAnswer = await w.tg.push(TEST_BOT_ID, answer)
    await itemIn(w, STAFF_CHAT_ID, answer.message.message_id, 'sent')
    await w.tg.redeliver(TEST_BOT_ID, pushedAnswer)
    // Later updates of the same chats are handled after the redeliveries (per-chat order).
    const marker = await clientSends(w, client, 'marker')
    await itemIn(w, client.id, marker.message_id, 'sent')
    await staffSends(w, thread, w.expert, 'marker answer')
    await lanesIdle(w, consultationId)
    const copiesOf = (from: number, to: number, id: number) =>
      w.tg.callsTo('copyMessage', { from_chat_id: from, chat_id: to, message_id: id })
    expect(copiesOf(client.id, STAFF_CHAT_ID, draft.message.message_id)).toHaveLength(1)
    expect(copiesOf(STAFF_CHAT_ID, client.id, answer.message.message_id)).toHaveLength(1)
    expect(w.tg.texts(client.id).filter((t) => /Question #\d+ accepted/.test(t ?? ''))).toHaveLength(2)
    expect(await appeals(w, consultationId)).toHaveLength(2)
  })
})
