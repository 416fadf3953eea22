import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { TgErrors } from '../support/bot-api'
import {
  activeConsultation,
  clientSends,
  consultationWithTopic,
  type DeskWorld,
  eventually,
  itemIn,
  items,
  lanesIdle,
  newClient,
  STAFF_CHAT_ID,
  staffSends,
  startDeskWorld,
} from '../support/fixtures'

/** Telegram faults: topics that disappear, rate limits, clients who block the bot, messages that can't be copied. */

describe('desk: Telegram faults', () => {
  let w: DeskWorld
  beforeAll(async () => {
    w = await startDeskWorld()
  })
  afterAll(() => w?.stop())
  afterEach(() => w.tg.clearRules())

  async function started() {
    const { client, consultationId, route } = await consultationWithTopic(w, {
      first_name: 'Boris',
      language_code: 'en',
    })
    return { client, consultationId, thread: route.message_thread_id }
  }

  it('a deleted topic is recreated with the card and a summary, the route moves, the failed message is delivered there', async () => {
    const { client, consultationId, thread } = await started()
    const first = await clientSends(w, client, 'First question about webhooks')
    await itemIn(w, client.id, first.message_id, 'sent')
    const firstAnswer = await staffSends(w, thread, w.expert, 'First answer')
    await itemIn(w, STAFF_CHAT_ID, firstAnswer.message.message_id, 'sent')
    await lanesIdle(w, consultationId)

    w.tg.deleteTopic(STAFF_CHAT_ID, thread)
    const since = w.tg.mark()
    const second = await clientSends(w, client, 'Second question after the topic vanished')
    const sent = await itemIn(w, client.id, second.message_id, 'sent')

    const failed = w.tg.callsTo(
      'copyMessage',
      { chat_id: STAFF_CHAT_ID, from_chat_id: client.id, message_id: second.message_id },
      { since },
    )
    expect(failed[0]!.error?.description).toMatch(/message thread not found/)
    const created = w.tg.callsTo('createForumTopic', { chat_id: STAFF_CHAT_ID }, { since, ok: true })
    expect(created).toHaveLength(1)
    const newThread = created[0]!.result.message_thread_id as number
    expect(newThread).not.toBe(thread)
    expect(sent.mirror_thread_id).toBe(newThread)

    // In the new topic: the card, the summary telling the staff what happened, then the failed message.
    const inNew = w.tg.sentTo(STAFF_CHAT_ID, { threadId: newThread })
    expect(inNew[0]!.text).toContain(`#${consultationId}`)
    expect(inNew[1]!.text).toMatch(/^♻️/)
    expect(inNew[1]!.text).toContain('message thread not found')
    expect(inNew[1]!.text).toContain('First question about webhooks')
    expect(inNew[2]!.text).toBe('Second question after the topic vanished')
    await w.tg.waitFor('pinChatMessage', { chat_id: STAFF_CHAT_ID, message_id: inNew[0]!.message_id })

    const routes = await w.deps.db
      .selectFrom('desk_route')
      .selectAll()
      .where('consultation_id', '=', consultationId)
      .orderBy('created_at')
      .execute()
    expect(routes.map((r) => [r.message_thread_id, r.state])).toEqual([
      [thread, 'replaced'],
      [newThread, 'active'],
    ])
    // The staff answer from the new topic reaches the client.
    const answer = await staffSends(w, newThread, w.expert, 'Answer from the new topic')
    await itemIn(w, STAFF_CHAT_ID, answer.message.message_id, 'sent')
  })

  it('a topic closed by hand is reopened when the client writes, and the message goes into it', async () => {
    const { client, consultationId, thread } = await started()
    w.tg.closeTopic(STAFF_CHAT_ID, thread)
    const since = w.tg.mark()
    const q = await clientSends(w, client, 'Are you there?')
    const sent = await itemIn(w, client.id, q.message_id, 'sent')
    expect(sent.mirror_thread_id).toBe(thread)
    await w.tg.waitFor('reopenForumTopic', { chat_id: STAFF_CHAT_ID, message_thread_id: thread }, { since })
    await w.tg.waitForSent(STAFF_CHAT_ID, /снова открыта/, { threadId: thread })
    await lanesIdle(w, consultationId)
    expect(w.tg.callsTo('createForumTopic', undefined, { since })).toHaveLength(0)
  })

  it('429: retry_after is honoured and the message is copied exactly once', async () => {
    const { client, consultationId } = await started()
    const rule = w.tg.fail429('copyMessage', 1, { when: (p) => p.chat_id === STAFF_CHAT_ID })
    const q = await clientSends(w, client, 'Rate limited')
    await itemIn(w, client.id, q.message_id, 'sent')
    expect(rule.hits).toBe(1)
    const calls = w.tg.callsTo('copyMessage', {
      chat_id: STAFF_CHAT_ID,
      from_chat_id: client.id,
      message_id: q.message_id,
    })
    expect(calls.map((c) => c.ok)).toEqual([false, true])
    expect(calls[1]!.seq).toBeGreaterThan(calls[0]!.seq)
    await lanesIdle(w, consultationId)
    const copies = w.tg
      .sentTo(STAFF_CHAT_ID)
      .filter((m) => m.source?.chat_id === client.id && m.source.message_id === q.message_id)
    expect(copies).toHaveLength(1)
  })

  it('403 from a client is recorded once, the staff are told once, nothing loops; their next message brings the answers', async () => {
    const { client, consultationId, thread } = await started()
    const q = await clientSends(w, client, 'Question before blocking')
    await itemIn(w, client.id, q.message_id, 'sent')
    await w.tg.waitFor('setMessageReaction', { chat_id: client.id, message_id: q.message_id })
    await lanesIdle(w, consultationId)
    w.tg.block(client.id)
    const since = w.tg.mark()
    const a1 = await staffSends(w, thread, w.expert, 'Answer one')
    await itemIn(w, STAFF_CHAT_ID, a1.message.message_id, 'blocked')
    const a2 = await staffSends(w, thread, w.expert, 'Answer two')
    await itemIn(w, STAFF_CHAT_ID, a2.message.message_id, 'blocked')
    await lanesIdle(w, consultationId)

    const dc = await w.deps.db
      .selectFrom('desk_consultation')
      .selectAll()
      .where('consultation_id', '=', consultationId)
      .executeTakeFirstOrThrow()
    expect(dc.client_blocked_at).not.toBeNull()
    const notes = w.tg
      .sentTo(STAFF_CHAT_ID, { threadId: thread })
      .filter((m) => /заблокировал бота: сообщения/.test(m.text ?? ''))
    expect(notes).toHaveLength(1)
    // One attempt hit the 403; the second answer was parked without calling Telegram.
    const attempts = w.tg.callsTo('copyMessage', { chat_id: client.id }, { since })
    expect(attempts).toHaveLength(1)
    expect(attempts[0]!.error?.error_code).toBe(403)
    // The job does not come back: a sweep finds nothing to do for this consultation.
    const { sweepLanes } = await import('../../src/routing/routing.workers')
    await sweepLanes(w.deps, 0)
    await lanesIdle(w, consultationId)
    expect(w.tg.callsTo('copyMessage', { chat_id: client.id }, { since })).toHaveLength(1)

    w.tg.unblock(client.id)
    await clientSends(w, client, 'Sorry, I had blocked you')
    await itemIn(w, STAFF_CHAT_ID, a1.message.message_id, 'sent')
    await itemIn(w, STAFF_CHAT_ID, a2.message.message_id, 'sent')
    await w.tg.waitForSent(STAFF_CHAT_ID, /снова написал/, { threadId: thread })
    const after = await w.deps.db
      .selectFrom('desk_consultation')
      .select('client_blocked_at')
      .where('consultation_id', '=', consultationId)
      .executeTakeFirstOrThrow()
    expect(after.client_blocked_at).toBeNull()
  })

  it('a message that cannot be copied fails once: the client is asked to resend it, the staff get a note, the lane goes on', async () => {
    const { client, consultationId, thread } = await started()
    const bad = await clientSends(w, client, { text: 'protected', has_protected_content: true })
    const good = await clientSends(w, client, 'plain follow-up')
    await itemIn(w, client.id, bad.message_id, 'failed')
    await itemIn(w, client.id, good.message_id, 'sent')
    await w.tg.waitForSent(client.id, /cannot be passed to the expert/)
    await w.tg.waitForSent(STAFF_CHAT_ID, /нельзя скопировать/, { threadId: thread })
    await lanesIdle(w, consultationId)
  })

  it('a staff message Telegram keeps refusing (400) fails after three tries with a note instead of blocking the lane', async () => {
    const { client, consultationId, thread } = await started()
    await clientSends(w, client, 'Question')
    w.tg.fail(
      'copyMessage',
      { error_code: 400, description: 'Bad Request: something odd' },
      {
        times: 3,
        when: (p) => p.chat_id === client.id,
      },
    )
    // The two answers may travel together in one copyMessages: refused too, so they go one by one and only the
    // first fails.
    w.tg.fail(
      'copyMessages',
      { error_code: 400, description: 'Bad Request: something odd' },
      { times: 10, when: (p) => p.chat_id === client.id },
    )
    const a = await staffSends(w, thread, w.expert, 'Answer Telegram dislikes')
    const next = await staffSends(w, thread, w.expert, 'Next answer')
    await itemIn(w, STAFF_CHAT_ID, a.message.message_id, 'failed')
    await itemIn(w, STAFF_CHAT_ID, next.message.message_id, 'sent')
    await w.tg.waitForSent(STAFF_CHAT_ID, /не удалось доставить клиенту/, { threadId: thread })
    await lanesIdle(w, consultationId)
    const rows = await items(w, consultationId)
    expect(rows.find((r) => r.message_id === a.message.message_id)?.attempts).toBe(3)
  })

  it('a staff group that refuses topics (not a forum, no rights) never fails the client’s message: it waits and goes once fixed', async () => {
    const client = await newClient(w, { language_code: 'en' })
    const rule = w.tg.fail('createForumTopic', TgErrors.notAForum, { times: 2 })
    const { consultationId } = await activeConsultation(w, client)
    const q = await clientSends(w, client, 'Is anyone there?')
    const sent = await eventually(
      async () => {
        const r = await w.deps.db
          .selectFrom('desk_message')
          .selectAll()
          .where('chat_id', '=', client.id)
          .where('message_id', '=', q.message_id)
          .executeTakeFirst()
        expect(r?.state).not.toBe('failed')
        return r?.state === 'sent' ? r : undefined
      },
      'the message after the group was fixed',
      40_000,
    )
    expect(rule.hits).toBe(2)
    expect(sent.attempts).toBe(1)
    await lanesIdle(w, consultationId)
    expect(w.tg.texts(client.id).some((t) => t?.includes('cannot be passed'))).toBe(false)
  }, 60_000)

  it('copies in a topic arrive in admission order even when Telegram is slow', async () => {
    const { client, consultationId, thread } = await started()
    w.tg.delay('copyMessage', 150, { times: 3 })
    const sent = []
    for (let i = 1; i <= 6; i++) sent.push(await clientSends(w, client, `part ${i}`))
    await eventually(async () => {
      const rows = await items(w, consultationId)
      return rows.filter((r) => r.direction === 'in' && r.kind === 'copy' && r.state === 'sent').length === 6
    }, 'six copies')
    const texts = w.tg
      .sentTo(STAFF_CHAT_ID, { threadId: thread })
      .filter((m) => m.source?.chat_id === client.id)
      .map((m) => m.text)
    expect(texts).toEqual(['part 1', 'part 2', 'part 3', 'part 4', 'part 5', 'part 6'])
  })
})
