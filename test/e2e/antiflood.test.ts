import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Item } from '../../src/routing/messages.repository'
import { media } from '../support/bot-api'
import {
  clientSends,
  consultationWithTopic,
  type DeskWorld,
  eventually,
  STAFF_CHAT_ID,
  startDeskWorld,
} from '../support/fixtures'

/**
 * Anti-flood (src/routing/antiflood.ts): at most RATE of a client's messages a (scaled) minute go into the topic one
 * by one; the rest go as digests. A client sends 30 texts at once: every text reaches the topic once and in order
 * (individually or inside a digest), far fewer sends than messages, the client is told exactly once, the ledger
 * counted one question. Photos and files join a digest as a line in their place, and go right below it in one
 * copyMessages.
 */

const RATE = 4
const SCALE = 0.05
const N = 30
/** The digest's header (the desk's default language is ru; en for completeness). */
const DIGEST =
  /^(One more message from the client:|\d+ more messages from the client:|Ещё \d+ сообщени[еяй] от клиента:)/
const MEDIA_LINE = / (— see below|— см\. ниже)$/

describe('anti-flood digest', () => {
  let w: DeskWorld
  beforeAll(async () => {
    w = await startDeskWorld({
      configure: (c) => {
        c.antiFlood.perMinute = RATE
        c.telegramLimits.windowScale = SCALE
      },
    })
  })
  afterAll(() => w?.stop())

  it('30 messages at once: a few one by one, the rest in digests, all in order, the client told once', async () => {
    const { client, consultationId, route } = await consultationWithTopic(w, { language_code: 'en' })
    const thread = route.message_thread_id
    const texts = Array.from({ length: N }, (_, i) => `flood message number ${i}`)
    for (const t of texts) await clientSends(w, client, t)

    await eventually(
      async () => {
        const r = await sql<{ n: number }>`select count(*)::int as n from desk_message
        where consultation_id = ${consultationId} and direction = 'in' and chat_id is not null and state = 'sent'`.execute(
          w.deps.db,
        )
        return r.rows[0]!.n === N
      },
      'all messages in the topic',
      60_000,
    )

    // What the topic shows: single copies and digests; the texts in order, each once.
    const calls = w.tg.callsTo(
      ['copyMessage', 'sendMessage'],
      (p) => p.chat_id === STAFF_CHAT_ID && p.message_thread_id === thread,
      { ok: true },
    )
    const shown: string[] = []
    let digests = 0
    for (const c of calls) {
      if (c.method === 'copyMessage') {
        shown.push(`copy:${c.payload.message_id}`)
      } else if (DIGEST.test(String(c.payload.text))) {
        digests++
        for (const line of String(c.payload.text).split('\n\n').slice(1)) shown.push(line)
      }
    }
    expect(digests).toBeGreaterThan(0)
    const singles = calls.filter((c) => c.method === 'copyMessage').length
    expect(singles + digests).toBeLessThan(N / 2)
    const rows = await w.deps.db
      .selectFrom('desk_message')
      .select(['message_id', 'content', 'mirror_message_id'])
      .where('consultation_id', '=', consultationId)
      .where('direction', '=', 'in')
      .where('chat_id', 'is not', null)
      .orderBy('message_id')
      .execute()
    const expected = rows.map((r, i) =>
      shown.includes(`copy:${r.message_id}`) ? `copy:${r.message_id}` : texts[i]!,
    )
    expect(shown).toEqual(expected)
    // Mirrors never go backwards (a digest's items share its message).
    const mirrors = rows.map((r) => r.mirror_message_id!)
    expect(mirrors).toEqual([...mirrors].sort((a, b) => a - b))

    // Told once; one question on the ledger.
    await w.tg.waitForSent(client.id, /expert will see them together/)
    expect(w.tg.sentTo(client.id).filter((m) => /see them together/.test(m.text ?? ''))).toHaveLength(1)
    const appeals = await w.deps.db
      .selectFrom('desk_appeal')
      .select('id')
      .where('consultation_id', '=', consultationId)
      .execute()
    expect(appeals).toHaveLength(1)
  })

  it('texts and photos mixed: each photo listed in its place in a digest and copied right below it, once, in order', async () => {
    const { client, consultationId, route } = await consultationWithTopic(w, { language_code: 'en' })
    const thread = route.message_thread_id
    const sent: number[] = []
    for (let i = 0; i < 24; i++) {
      const m =
        i % 3 === 1
          ? await clientSends(w, client, { photo: media.photo(), caption: `picture ${i}` })
          : await clientSends(w, client, `mixed message ${i}`)
      sent.push(m.message_id)
    }
    await eventually(
      async () => {
        const r = await sql<{ n: number }>`select count(*)::int as n from desk_message
        where consultation_id = ${consultationId} and direction = 'in' and chat_id is not null and state = 'sent'`.execute(
          w.deps.db,
        )
        return r.rows[0]!.n === sent.length
      },
      'all messages in the topic',
      60_000,
    )
    const rows: Item[] = await w.deps.db
      .selectFrom('desk_message')
      .selectAll()
      .where('consultation_id', '=', consultationId)
      .where('direction', '=', 'in')
      .where('chat_id', 'is not', null)
      .orderBy('message_id')
      .execute()
    const textOf = new Map(rows.map((r) => [r.message_id!, r.content?.text]))

    // What the topic shows, in order: a copy as its source id; a digest's texts as themselves and each of its media
    // lines as the source id of the copy that must follow it in the next call.
    const calls = w.tg.callsTo(
      ['copyMessage', 'copyMessages', 'sendMessage'],
      (p) => p.chat_id === STAFF_CHAT_ID && p.message_thread_id === thread,
      { ok: true },
    )
    const shown: (number | string)[] = []
    const idsOf = (c: (typeof calls)[number] | undefined): number[] =>
      c?.method === 'copyMessage'
        ? [c.payload.message_id]
        : c?.method === 'copyMessages'
          ? [...c.payload.message_ids]
          : []
    let placed = -1
    let mediaInDigests = 0
    for (const [k, c] of calls.entries()) {
      if (k === placed) continue
      if (c.method !== 'sendMessage') shown.push(...idsOf(c))
      else if (DIGEST.test(String(c.payload.text))) {
        const lines = String(c.payload.text).split('\n\n').slice(1)
        const media = lines.filter((l) => MEDIA_LINE.test(l))
        if (media.length === 0) {
          shown.push(...lines)
          continue
        }
        // The copies right below: the next call, placed by the digest's lines.
        const below = idsOf(calls[k + 1])
        expect(below, 'the media listed in a digest are copied right below it').toHaveLength(media.length)
        placed = k + 1
        for (const line of lines)
          if (MEDIA_LINE.test(line)) {
            mediaInDigests++
            expect(line).toMatch(/^\[(photo|фото)\] picture \d+ (— see below|— см\. ниже)$/)
            shown.push(below.shift()!)
          } else shown.push(line)
      }
    }
    expect(mediaInDigests).toBeGreaterThan(0)
    const expected = sent.map((id) => (shown.includes(id) ? id : textOf.get(id)!))
    expect(shown).toEqual(expected)
    // Each photo was copied once.
    for (const r of rows.filter((r) => r.content_type === 'photo'))
      expect(shown.filter((x) => x === r.message_id)).toHaveLength(1)
  })
})
