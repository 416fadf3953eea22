import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runLane } from '../../src/routing/delivery'
import { Lease } from '../../src/routing/lanes'
import {
  activeConsultation,
  type DeskWorld,
  eventually,
  newClient,
  paidConsultation,
  STAFF_CHAT_ID,
  startDeskWorld,
  TEST_BOT_ID,
} from '../support/fixtures'

/**
 * At most one topic per consultation, whatever races: the activation job and the first messages' jobs, on two
 * worker processes at once, many consultations at a time; and the lane itself called concurrently from both.
 */

describe('routing: one topic per consultation under races', () => {
  let w: DeskWorld
  let second: DeskWorld
  beforeAll(async () => {
    w = await startDeskWorld()
    // Another process with workers only, on the same database and the same Telegram.
    second = await startDeskWorld({ role: 'worker', database: w.t.db, tg: w.tg })
  })
  afterAll(async () => {
    await second?.stop()
    await w?.stop()
  })

  /** On a failure: the consultation's desk row, items and lane jobs, to see where a message stopped. */
  async function dump(consultationId: number) {
    const q = (text: ReturnType<typeof sql>) => text.execute(w.deps.db).then((r) => r.rows)
    const state = {
      desk: await q(sql`select * from desk_consultation where consultation_id = ${consultationId}`),
      items: await q(sql`select id, state, message_id, created_at from desk_message
        where consultation_id = ${consultationId} order by id`),
      jobs: await q(sql`select name, state, created_on, started_on, completed_on, start_after from pgboss.job
        where singleton_key = ${String(consultationId)} order by created_on`),
    }
    console.log(JSON.stringify(state, null, 1))
  }

  async function topicsOf(consultationId: number) {
    return w.deps.db
      .selectFrom('desk_route')
      .selectAll()
      .where('consultation_id', '=', consultationId)
      .execute()
  }

  it('two first messages sent at once, activation racing them, two worker processes: one topic, both copied in order (3 × 10 consultations)', async () => {
    for (let round = 0; round < 3; round++) {
      const since = w.tg.mark()
      const started = await Promise.all(
        Array.from({ length: 10 }, async () => {
          const { client, consultationId } = await paidConsultation(w)
          const a = w.tg.privateText(client, 'first')
          const b = w.tg.privateText(client, 'second')
          await Promise.all([w.tg.push(TEST_BOT_ID, a), w.tg.push(TEST_BOT_ID, b)])
          return { client, consultationId, ids: [a.message.message_id, b.message.message_id] }
        }),
      )
      for (const s of started) {
        await eventually(async () => {
          const r = await sql<{ n: number }>`select count(*)::int as n from desk_message
            where consultation_id = ${s.consultationId} and state = 'sent' and direction = 'in'`.execute(
            w.deps.db,
          )
          return r.rows[0]!.n === 2
        }, `both messages of consultation ${s.consultationId}`)
        const routes = await topicsOf(s.consultationId)
        expect(routes).toHaveLength(1)
        const thread = routes[0]!.message_thread_id
        const copies = w.tg
          .sentTo(STAFF_CHAT_ID, { threadId: thread })
          .filter((m) => m.source?.chat_id === s.client.id)
        expect(copies.map((m) => m.source!.message_id)).toEqual(s.ids)
      }
      const created = w.tg.callsTo('createForumTopic', { chat_id: STAFF_CHAT_ID }, { since })
      expect(created).toHaveLength(10)
    }
  })

  it('bursts while the lanes are busy on two workers: every accepted message reaches the topic, in order (10 × 12)', async () => {
    // Slow copies keep lanes busy, so admissions keep finding a job already queued (and skip writing one).
    const slow = w.tg.delay('copyMessage', 40, { times: Number.POSITIVE_INFINITY })
    try {
      const started = await Promise.all(
        Array.from({ length: 10 }, async () => {
          const { client, consultationId } = await paidConsultation(w)
          const ids: number[] = []
          for (let k = 0; k < 12; k++) {
            const m = w.tg.privateText(client, `burst ${k}`)
            ids.push(m.message.message_id)
            await w.tg.push(TEST_BOT_ID, m)
            if (k % 4 === 3) await new Promise((r) => setImmediate(r))
          }
          return { client, consultationId, ids }
        }),
      )
      for (const s of started) {
        await eventually(
          async () => {
            const r = await sql<{ n: number }>`select count(*)::int as n from desk_message
            where consultation_id = ${s.consultationId} and state = 'sent' and direction = 'in'`.execute(
              w.deps.db,
            )
            return r.rows[0]!.n === 12
          },
          `all twelve messages of consultation ${s.consultationId}`,
          30_000,
        ).catch(async (e) => {
          await dump(s.consultationId)
          throw e
        })
        const [route] = await topicsOf(s.consultationId)
        const copies = w.tg
          .sentTo(STAFF_CHAT_ID, { threadId: route!.message_thread_id })
          .filter((m) => m.source?.chat_id === s.client.id)
        expect(copies.map((m) => m.source!.message_id)).toEqual(s.ids)
      }
    } finally {
      slow.cancel()
    }
  })

  it('the topic lane called concurrently from both processes for fresh consultations: exactly one createForumTopic each (20 times)', async () => {
    for (let i = 0; i < 20; i++) {
      const client = await newClient(w)
      const since = w.tg.mark()
      // Activated in the bot-only sense: the lane is raced directly by both processes' deps, five calls each.
      const { consultationId } = await activeConsultation(w, client)
      await Promise.all(
        Array.from({ length: 10 }, (_, k) => runLane(k % 2 ? w.deps : second.deps, consultationId, 'in')),
      )
      await eventually(async () => {
        const r = await topicsOf(consultationId)
        return r.length === 1 && r[0]!.card_message_id !== null
      }, 'the topic with its card')
      const created = w.tg.callsTo(
        'createForumTopic',
        { name: new RegExp(`#${consultationId}( · 👤 .+)?$`) },
        { since },
      )
      expect(created).toHaveLength(1)
      const cards = w.tg
        .sentTo(STAFF_CHAT_ID, { threadId: created[0]!.result.message_thread_id })
        .filter((m) => m.text?.startsWith('📋'))
      expect(cards).toHaveLength(1)
    }
  })

  it('a heartbeat that reaches the database after its lane was released leaves the lane free', async () => {
    const client = await newClient(w)
    const { consultationId } = await activeConsultation(w, client)
    // The activation's lane is done: the topic exists with its card posted and pinned.
    await eventually(async () => {
      const r = await topicsOf(consultationId)
      return (
        r.length === 1 &&
        r[0]!.card_message_id !== null &&
        r[0]!.card_pinned_message_id === r[0]!.card_message_id
      )
    }, 'the topic with its card pinned')
    const lane = () =>
      w.deps.db
        .selectFrom('desk_consultation')
        .select(['in_lease', 'in_lease_until'])
        .where('consultation_id', '=', consultationId)
        .executeTakeFirstOrThrow()
    const lease = new Lease(w.deps, consultationId, 'in')
    await eventually(() => lease.claim(), 'the lane, once the activation has let it go')
    // A beat while held renews.
    const held = await lane()
    await lease.beat()
    expect(await lane()).toMatchObject({ in_lease: lease.token })
    expect((await lane()).in_lease_until!.getTime()).toBeGreaterThanOrEqual(held.in_lease_until!.getTime())
    expect(lease.lost).toBe(false)
    await lease.release()
    // The beat the timer sent just before the release, arriving after it: it must not take the lane back (before
    // the fix it did, for 12 s, and every job of the lane left it to a holder that no longer existed).
    await lease.beat()
    expect(await lane()).toMatchObject({ in_lease: null, in_lease_until: null })
    expect(lease.lost).toBe(true)
    const other = new Lease(second.deps, consultationId, 'in')
    expect(await other.claim()).toBe(true)
    await other.release()
    // And the lane delivers: a message sent now is copied.
    const since = w.tg.mark()
    await w.tg.push(TEST_BOT_ID, w.tg.privateText(client, 'after the late beat'))
    await w.tg.waitFor('copyMessage', { from_chat_id: client.id }, { since })
  })
})
