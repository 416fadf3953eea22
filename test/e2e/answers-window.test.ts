import type { User } from 'grammy/types'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startBotApi } from '../support/bot-api'
import {
  consultationWithTopic,
  type DeskWorld,
  eventually,
  STAFF_CHAT_ID,
  staffSends,
  startDeskWorld,
} from '../support/fixtures'

/**
 * Answers to clients (the out lanes, src/routing/delivery.ts) against the shared budget with Telegram's limits on:
 * a client's private chat takes 3 messages a window. A lane whose client's window is closed gives its worker up and
 * comes back when it opens, so the answers to other clients go meanwhile: no worker waits on one client's window.
 *
 * Nine clients get four answers each at once (the fourth must wait for its client's window), more lanes than the
 * process has out-lane workers (8); then one more client gets one answer. That answer is in the client's chat
 * before any of the nine fourth answers: asserted by the order of the calls at the stand-in, not by times. With
 * the lane waiting in its worker instead, eight workers sit out the window and the last answer comes after fourth
 * answers (checked when this test was written). Every answer still goes once, in order, without a 429.
 *
 * The private chat's window is 3 per 10 s here (Telegram: about 1 a second, short bursts), so that the nine are
 * certainly still waiting when the last answer is admitted; the group's is shortened (20 per 3 s) so that the ten
 * topics are set up quickly.
 */

const CHAT = { count: 3, seconds: 10 }
const GROUP = { count: 20, seconds: 3 }
const WAITING = 9
const EACH = 4

describe("answers to clients within their chats' windows", () => {
  let w: DeskWorld
  beforeAll(async () => {
    const tg = await startBotApi({ defaultWaitTimeoutMs: 30_000, limits: { chat: CHAT, group: GROUP } })
    w = await startDeskWorld({
      tg,
      throttled: true,
      configure: (c) => {
        c.telegramLimits.chat = CHAT
        c.telegramLimits.group = GROUP
        // No "Draft answer" buttons in the topics: fewer group sends while the topics are set up.
        c.llm.drafting.enabled = false
      },
    })
  })
  afterAll(async () => {
    await w?.stop()
    await w?.tg.close()
  })

  it("a closed window holds no worker: another client's answer goes before the fourth answers, all in order", async () => {
    const waiting: { client: User; thread: number }[] = []
    for (let i = 0; i < WAITING; i++) {
      const c = await consultationWithTopic(w, { language_code: 'en' })
      waiting.push({ client: c.client, thread: c.route.message_thread_id })
    }
    const last = await consultationWithTopic(w, { language_code: 'en' })
    const mark = w.tg.mark()

    const sent = new Map<number, number[]>()
    for (const { client, thread } of waiting) {
      const ids: number[] = []
      for (let i = 0; i < EACH; i++)
        ids.push((await staffSends(w, thread, w.expert, `answer ${i}`)).message.message_id)
      sent.set(client.id, ids)
    }
    const lastId = (await staffSends(w, last.route.message_thread_id, w.expert, 'the other answer')).message
      .message_id

    await eventually(
      async () => {
        const r = await sql<{ n: number }>`select count(*)::int as n from desk_message
          where direction = 'out' and kind = 'copy' and state = 'sent' and chat_id = ${STAFF_CHAT_ID}`.execute(
          w.deps.db,
        )
        return r.rows[0]!.n === WAITING * EACH + 1
      },
      'every answer sent',
      60_000,
    )

    const calls = w.tg.callsTo(['copyMessage', 'copyMessages'], (p) => p.from_chat_id === STAFF_CHAT_ID, {
      since: mark,
      ok: true,
    })
    const copied = (chat: number) =>
      calls
        .filter((c) => c.payload.chat_id === chat)
        .flatMap(
          (c) => ((c.payload.message_ids as number[] | undefined) ?? [c.payload.message_id]) as number[],
        )
    // Once each, in order.
    for (const { client } of waiting) expect(copied(client.id)).toEqual(sent.get(client.id))
    expect(copied(last.client.id)).toEqual([lastId])
    expect(w.tg.limiter!.refused).toBe(0)

    // The other client's answer did not wait for the nine windows.
    const seqOf = (chat: number, id: number) =>
      calls.find(
        (c) =>
          c.payload.chat_id === chat &&
          ((c.payload.message_ids as number[] | undefined) ?? [c.payload.message_id]).includes(id),
      )!.seq
    const lastSeq = seqOf(last.client.id, lastId)
    const fourths = waiting.map(({ client }) => seqOf(client.id, sent.get(client.id)![EACH - 1]!))
    expect(fourths.every((s) => s > lastSeq)).toBe(true)
  })
})
