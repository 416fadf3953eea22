import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TgErrors } from '../support/bot-api'
import {
  clientSends,
  consultationWithTopic,
  type DeskWorld,
  eventually,
  STAFF_CHAT_ID,
  startDeskWorld,
} from '../support/fixtures'

/**
 * copyMessages batching (src/routing/delivery.ts): consecutive plain copies pending in one lane go in one call,
 * in order. The first copy is held back (the stand-in answers it late) so the rest are pending together.
 */

describe('copyMessages batching', () => {
  let w: DeskWorld
  beforeAll(async () => {
    // No "Draft answer" button on the copies (a button cannot travel in a copyMessages).
    w = await startDeskWorld({
      configure: (c) => {
        c.llm.drafting.enabled = false
      },
    })
  })
  afterAll(() => w?.stop())

  async function allSettled(consultationId: number, n: number) {
    await eventually(async () => {
      const r = await sql<{ n: number }>`select count(*)::int as n from desk_message
        where consultation_id = ${consultationId} and direction = 'in' and chat_id is not null
          and state in ('sent', 'failed')`.execute(w.deps.db)
      return r.rows[0]!.n === n
    }, `${n} messages settled`)
  }

  it('ten texts while the lane is busy: one copyMessages for the waiting ones, each copied once, in order', async () => {
    const { client, consultationId, route } = await consultationWithTopic(w, { language_code: 'en' })
    w.tg.delay('copyMessage', 800, { when: (p) => p.from_chat_id === client.id })
    const ids: number[] = []
    for (let i = 0; i < 10; i++) ids.push((await clientSends(w, client, `batched ${i}`)).message_id)
    await allSettled(consultationId, 10)
    const calls = w.tg.callsTo(
      ['copyMessage', 'copyMessages'],
      (p) => p.from_chat_id === client.id && p.chat_id === STAFF_CHAT_ID,
      { ok: true },
    )
    const copied = calls.flatMap(
      (c) => (c.payload.message_ids as number[] | undefined) ?? [c.payload.message_id],
    )
    expect(copied).toEqual(ids)
    expect(
      calls.some((c) => c.method === 'copyMessages' && (c.payload.message_ids as number[]).length > 1),
    ).toBe(true)
    expect(calls.length).toBeLessThan(10)
    const rows = await w.deps.db
      .selectFrom('desk_message')
      .select(['mirror_message_id', 'mirror_thread_id'])
      .where('consultation_id', '=', consultationId)
      .where('direction', '=', 'in')
      .where('chat_id', 'is not', null)
      .orderBy('message_id')
      .execute()
    const mirrors = rows.map((r) => r.mirror_message_id!)
    expect(mirrors.every((m) => m !== null)).toBe(true)
    expect(mirrors).toEqual([...mirrors].sort((a, b) => a - b))
    expect(rows.every((r) => r.mirror_thread_id === route.message_thread_id)).toBe(true)
  })

  it('one uncopyable message in a batch: the others are copied, only it fails and the client is told', async () => {
    const { client, consultationId } = await consultationWithTopic(w, { language_code: 'en' })
    w.tg.delay('copyMessage', 800, { when: (p) => p.from_chat_id === client.id })
    const ids: number[] = []
    for (let i = 0; i < 6; i++) ids.push((await clientSends(w, client, `maybe ${i}`)).message_id)
    const bad = ids[3]!
    w.tg.fail(['copyMessage', 'copyMessages'], TgErrors.messageCantBeCopied, {
      times: Number.POSITIVE_INFINITY,
      when: (p) =>
        p.from_chat_id === client.id &&
        (p.message_id === bad || ((p.message_ids as number[]) ?? []).includes(bad)),
    })
    await allSettled(consultationId, 6)
    const rows = await w.deps.db
      .selectFrom('desk_message')
      .select(['message_id', 'state'])
      .where('consultation_id', '=', consultationId)
      .where('direction', '=', 'in')
      .where('chat_id', 'is not', null)
      .orderBy('message_id')
      .execute()
    expect(rows.map((r) => r.state)).toEqual(ids.map((id) => (id === bad ? 'failed' : 'sent')))
    await w.tg.waitForSent(client.id, /cannot be passed to the expert/)
  })
})
