import type { User } from 'grammy/types'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { settleHeld } from '../../src/consultations/choice'
import { runWindowClose } from '../../src/lifecycle/window.service'
import { media } from '../support/bot-api'
import {
  activeConsultation,
  clientSends,
  type DeskWorld,
  eventually,
  inboxDrained,
  itemIn,
  newClient,
  startDeskWorld,
  TEST_BOT_ID,
  topicReady,
} from '../support/fixtures'
import { fastForward, H, MIN } from '../support/lifecycle-clock'
import {
  CHOOSE,
  clientTopic,
  copiedTo,
  copiesOf,
  firstMessages,
  heldOf,
  messagesOf,
  takenFor,
  twoConsultations,
} from './several-support'
import { NOFILES, subscribe, withPlans } from './subscriptions-support'

/**
 * The edges of several consultations at once (issue 26): every notice of a consultation (here "closes soon") goes
 * into its topic of the private chat and is recorded as its message, so a reply to it goes to it; the check of a
 * plan without attachments follows the consultation the routing chose; messages held for a choice go to the one
 * consultation left when the others end (once, however often the ending's jobs run), or the client is told they
 * were not sent.
 */

let w: DeskWorld
beforeAll(async () => {
  w = await startDeskWorld({ configure: withPlans([NOFILES]) })
})
afterAll(() => w?.stop())

/** The client's photo with a caption, replying to one of the bot's messages. */
const photoReplying = (client: User, caption: string, replyTo: number) =>
  clientSends(w, client, { photo: media.photo(), caption, replyTo })

describe('notices of a consultation', () => {
  it('"closes soon" lands in its consultation’s private topic, and a reply to it goes to its staff topic', async () => {
    w.tg.setPrivateTopics(TEST_BOT_ID, 'on')
    try {
      const { client, a, staffA } = await twoConsultations(w)
      const ta = (await clientTopic(w, a, 'open')).thread_id!
      await fastForward(w.deps.db, a, 23 * H + MIN)
      const soon = await w.tg.waitForSent(client.id, /closes soon/, { threadId: ta })
      expect(soon.thread_id).toBe(ta)
      await eventually(
        async () => (await messagesOf(w, a)).includes(soon.message_id),
        'the notice recorded for A',
      )
      const reply = w.tg.privateTopicText(client, ta, 'One more before it closes', {
        replyTo: soon.message_id,
      })
      await w.tg.push(TEST_BOT_ID, reply)
      expect((await copiedTo(w, client, reply.message.message_id)).payload.message_thread_id).toBe(staffA)
      await inboxDrained(w.deps.db)
      expect(w.tg.texts(client.id).filter((t) => CHOOSE.test(t ?? ''))).toHaveLength(0)
    } finally {
      w.tg.setPrivateTopics(TEST_BOT_ID, 'off')
    }
  })

  it('with private topics off, a reply to a consultation’s notice goes to that consultation', async () => {
    const { client, a, b, staffA } = await twoConsultations(w)
    await fastForward(w.deps.db, a, 23 * H + MIN)
    const soon = await w.tg.waitForSent(client.id, /closes soon/)
    expect(soon.thread_id).toBeUndefined()
    await eventually(
      async () => (await messagesOf(w, a)).includes(soon.message_id),
      'the notice recorded for A',
    )
    expect(await messagesOf(w, b)).not.toContain(soon.message_id)
    const reply = w.tg.privateText(client, 'Can I still ask this?', { replyTo: soon.message_id })
    await w.tg.push(TEST_BOT_ID, reply)
    expect((await copiedTo(w, client, reply.message.message_id)).payload.message_thread_id).toBe(staffA)
    await inboxDrained(w.deps.db)
    expect(w.tg.texts(client.id).filter((t) => CHOOSE.test(t ?? ''))).toHaveLength(0)
  })
})

describe('a plan without attachments', () => {
  it('is checked on the consultation the message is routed to, not the newest', async () => {
    const client = await newClient(w)
    const oneOff = (await activeConsultation(w, client)).consultationId
    const staffOneOff = (await topicReady(w, oneOff)).message_thread_id
    const [activation] = await firstMessages(w, oneOff, 'the activation notice of the one-off')
    // The plan (no attachments) is bought second: it is the newest live consultation.
    const { sub } = await subscribe(w, client, NOFILES)
    await topicReady(w, sub.consultation_id)
    const [planNotice] = await firstMessages(w, sub.consultation_id, 'the plan’s first message')

    // A photo replying to the one-off's notice goes to the one-off, whose tariff takes photos.
    const toOneOff = await photoReplying(client, 'Screenshot for the one-off', activation!)
    const accepted = await itemIn(w, client.id, toOneOff.message_id, 'sent')
    expect(accepted.consultation_id).toBe(oneOff)
    expect((await copiedTo(w, client, toOneOff.message_id)).payload.message_thread_id).toBe(staffOneOff)

    // A photo replying to the plan's message is refused with the plan's reason, on the plan's consultation.
    const toPlan = await photoReplying(client, 'Screenshot for the plan', planNotice!)
    const refused = await itemIn(w, client.id, toPlan.message_id, 'refused')
    expect(refused.consultation_id).toBe(sub.consultation_id)
    await w.tg.waitForSent(client.id, /Attachments are not included in your plan/)
    await inboxDrained(w.deps.db)
    expect(copiesOf(w, client, toPlan.message_id)).toHaveLength(0)
  })
})

describe('held messages when the choice is no longer there', () => {
  it('go to the one consultation left when the other closes, in order, once, and the client is told', async () => {
    const { client, a, b, staffB } = await twoConsultations(w)
    const m1 = w.tg.privateText(client, 'First, waiting for a choice')
    const m2 = w.tg.privateText(client, 'Second, waiting too')
    await w.tg.push(TEST_BOT_ID, m1)
    await w.tg.push(TEST_BOT_ID, m2)
    await w.tg.waitForSent(client.id, CHOOSE)
    await eventually(async () => (await heldOf(w, client)).length === 2, 'both messages held')
    await inboxDrained(w.deps.db)
    expect(copiesOf(w, client, m1.message.message_id)).toHaveLength(0)

    // A's window ends: its close job runs by itself, and the held messages go to B.
    await fastForward(w.deps.db, a, 24 * H + MIN)
    const c1 = await copiedTo(w, client, m1.message.message_id)
    const c2 = await copiedTo(w, client, m2.message.message_id)
    expect([c1.payload.message_thread_id, c2.payload.message_thread_id]).toEqual([staffB, staffB])
    expect(c1.seq).toBeLessThan(c2.seq)
    const told = await w.tg.waitForSent(
      client.id,
      /2 messages that were waiting for a choice have been sent to/,
    )
    expect(told.text).toMatch(
      /“Quick review” \(bought .+\): it is the only consultation you still have running/,
    )
    await eventually(async () => (await heldOf(w, client)).length === 0, 'nothing held')

    // The ending's jobs again (the close redelivered, the settle job run twice at once): nothing more happens.
    const closed = await w.deps.db
      .selectFrom('consultation')
      .select(['state', 'access_until'])
      .where('id', '=', a)
      .executeTakeFirstOrThrow()
    expect(closed.state).toBe('closed')
    expect(
      await runWindowClose(w.deps, { consultationId: a, accessUntil: closed.access_until!.toISOString() }),
    ).toBe('not-active')
    expect(
      await Promise.all([
        settleHeld(w.deps, { botId: TEST_BOT_ID, userId: client.id }),
        settleHeld(w.deps, { botId: TEST_BOT_ID, userId: client.id }),
      ]),
    ).toEqual(['nothing-held', 'nothing-held'])
    await inboxDrained(w.deps.db)
    expect(copiesOf(w, client, m1.message.message_id)).toHaveLength(1)
    expect(copiesOf(w, client, m2.message.message_id)).toHaveLength(1)
    expect(
      w.tg.texts(client.id).filter((t) => /waiting for a choice have been sent/.test(t ?? '')),
    ).toHaveLength(1)
    expect(await takenFor(w, client, [m1.message.message_id, m2.message.message_id])).toEqual([
      { consultation_id: b },
      { consultation_id: b },
    ])
  }, 60_000)

  it('a settle run twice at once while messages are held delivers each once (20 rounds)', async () => {
    for (let round = 0; round < 20; round++) {
      const { client, a, b } = await twoConsultations(w)
      const m = w.tg.privateText(client, `held ${round}`)
      await w.tg.push(TEST_BOT_ID, m)
      await eventually(async () => (await heldOf(w, client)).length === 1, 'the message held')
      // A ends without its jobs (its window passed a moment ago); two settles race.
      await sql`update consultation set starts_at = starts_at - interval '1 hour', access_until = now() - interval '1 second' where id = ${a}`.execute(
        w.deps.db,
      )
      const r = await Promise.all([
        settleHeld(w.deps, { botId: TEST_BOT_ID, userId: client.id }),
        settleHeld(w.deps, { botId: TEST_BOT_ID, userId: client.id }),
      ])
      expect(r).toContain('delivered')
      const item = await itemIn(w, client.id, m.message.message_id, 'sent')
      expect(item.consultation_id).toBe(b)
      await w.tg.waitForSent(client.id, /message that was waiting for a choice has been sent/)
      await inboxDrained(w.deps.db)
      expect(copiesOf(w, client, m.message.message_id)).toHaveLength(1)
      expect(
        w.tg.texts(client.id).filter((t) => /waiting for a choice has been sent/.test(t ?? '')),
      ).toHaveLength(1)
      expect(await heldOf(w, client)).toEqual([])
    }
  }, 300_000)

  it('a message written when one is left and the others still wait goes after them, in order (no ending job ran)', async () => {
    const { client, a, b, staffB } = await twoConsultations(w)
    const m1 = w.tg.privateText(client, 'Held for a choice')
    await w.tg.push(TEST_BOT_ID, m1)
    await eventually(async () => (await heldOf(w, client)).length === 1, 'the first message held')
    // A's window has just passed; its close job has not run (so no settle job either) when the client writes again.
    await sql`update consultation set starts_at = starts_at - interval '1 hour', access_until = now() - interval '1 second' where id = ${a}`.execute(
      w.deps.db,
    )
    const m2 = w.tg.privateText(client, 'Written after')
    await w.tg.push(TEST_BOT_ID, m2)
    await w.tg.push(TEST_BOT_ID, m2)
    const c1 = await copiedTo(w, client, m1.message.message_id)
    const c2 = await copiedTo(w, client, m2.message.message_id)
    expect([c1.payload.message_thread_id, c2.payload.message_thread_id]).toEqual([staffB, staffB])
    expect(c1.seq).toBeLessThan(c2.seq)
    await w.tg.waitForSent(client.id, /2 messages that were waiting for a choice have been sent to/)
    await inboxDrained(w.deps.db)
    expect(copiesOf(w, client, m1.message.message_id)).toHaveLength(1)
    expect(copiesOf(w, client, m2.message.message_id)).toHaveLength(1)
    expect(await heldOf(w, client)).toEqual([])
    expect(await takenFor(w, client, [m1.message.message_id, m2.message.message_id])).toEqual([
      { consultation_id: b },
      { consultation_id: b },
    ])
    // Not asked again: one live consultation leaves no choice to make.
    expect(w.tg.texts(client.id).filter((t) => CHOOSE.test(t ?? ''))).toHaveLength(1)
  }, 60_000)

  it('with no consultation left, the client is told the held messages were not sent, and why', async () => {
    const { client, a, b } = await twoConsultations(w)
    const m = w.tg.privateText(client, 'Nobody will get me')
    await w.tg.push(TEST_BOT_ID, m)
    await eventually(async () => (await heldOf(w, client)).length === 1, 'the message held')
    await sql`update consultation set starts_at = starts_at - interval '1 hour', access_until = now() - interval '1 second' where id in (${a}, ${b})`.execute(
      w.deps.db,
    )
    expect(await settleHeld(w.deps, { botId: TEST_BOT_ID, userId: client.id })).toBe('dropped')
    const told = await w.tg.waitForSent(client.id, /was not sent to an expert/)
    expect(told.text).toContain('none of your consultations is running any more')
    expect(await heldOf(w, client)).toEqual([])
    await inboxDrained(w.deps.db)
    expect(copiesOf(w, client, m.message.message_id)).toHaveLength(0)
  })
})
