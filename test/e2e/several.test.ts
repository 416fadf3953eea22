import type { User } from 'grammy/types'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { termsHash } from '../../src/orders/orders.service'
import {
  activeConsultation,
  type DeskWorld,
  eventually,
  inboxDrained,
  itemIn,
  lanesIdle,
  newClient,
  STAFF_CHAT_ID,
  staffSends,
  startDeskWorld,
  TEST_BOT_ID,
} from '../support/fixtures'
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

/**
 * Several consultations at once (issue 26), through the real app and the Bot API stand-in: a message goes to the
 * consultation it replies to or was written in (its topic of the private chat), else to the client's remembered
 * choice, asked once while the message waits; with private-chat topics broken by Telegram, the plain chat and the
 * choice still route every message.
 */

describe('several consultations at once', () => {
  let w: DeskWorld
  beforeAll(async () => {
    w = await startDeskWorld()
  })
  afterAll(() => w?.stop())

  /** The receipt of question `n` of the consultation, once it is sent and recorded as the consultation's. */
  function receipt(client: User, consultationId: number, n = 1) {
    return eventually(async () => {
      const mine = new Set(await messagesOf(w, consultationId))
      return w.tg
        .sentTo(client.id)
        .find((m) => mine.has(m.message_id) && new RegExp(`Question #${n} accepted`).test(m.text ?? ''))
    }, `receipt #${n} of consultation ${consultationId}`)
  }

  async function send(client: User, text: string, extra: Parameters<DeskWorld['tg']['privateText']>[2] = {}) {
    const d = w.tg.privateText(client, text, extra)
    await w.tg.push(TEST_BOT_ID, d)
    return d
  }

  it('a reply to each consultation’s own message goes to its staff topic; each receipt names its consultation', async () => {
    const { client, a, b, staffA, staffB } = await twoConsultations(w)
    // The activation notices are the consultations' first messages in the client's chat.
    const [actA] = await firstMessages(w, a, 'the activation notice of A')
    const [actB] = await firstMessages(w, b, 'the activation notice of B')

    const q1 = await send(client, 'For the first one', { replyTo: actA! })
    expect((await copiedTo(w, client, q1.message.message_id)).payload.message_thread_id).toBe(staffA)
    const q2 = await send(client, 'For the second one', { replyTo: actB! })
    expect((await copiedTo(w, client, q2.message.message_id)).payload.message_thread_id).toBe(staffB)

    const rA = await receipt(client, a)
    const rB = await receipt(client, b)
    expect(rA.text).toMatch(/Consultation: “Quick review” \(bought .+\)/)
    expect(rB.text).toMatch(/Consultation: “Quick review” \(bought .+\)/)
    // With two running, each receipt offers to send the next messages to its consultation.
    expect(rA.reply_markup?.inline_keyboard?.[0]?.[0]?.callback_data).toBe(`sw:${a}`)
    expect(rB.reply_markup?.inline_keyboard?.[0]?.[0]?.callback_data).toBe(`sw:${b}`)

    // Replies to the receipts, crosswise in time: each lands in its own topic.
    const toB = await send(client, 'More for the second', { replyTo: rB.message_id })
    const toA = await send(client, 'More for the first', { replyTo: rA.message_id })
    expect((await copiedTo(w, client, toB.message.message_id)).payload.message_thread_id).toBe(staffB)
    expect((await copiedTo(w, client, toA.message.message_id)).payload.message_thread_id).toBe(staffA)
    // And a reply to an expert's answer goes to the answer's consultation.
    const answer = await staffSends(w, staffB, w.expert, 'Answer in B')
    const back = await w.tg.waitFor(
      'copyMessage',
      { chat_id: client.id, from_chat_id: STAFF_CHAT_ID, message_id: answer.message.message_id },
      { ok: true },
    )
    const onAnswer = await send(client, 'Thanks, one more', { replyTo: back.result.message_id })
    expect((await copiedTo(w, client, onAnswer.message.message_id)).payload.message_thread_id).toBe(staffB)

    await inboxDrained(w.deps.db)
    expect(w.tg.texts(client.id).filter((t) => CHOOSE.test(t ?? ''))).toHaveLength(0)
  })

  it('a message that names none gets the choice once, waits, goes where chosen; later ones follow the choice', async () => {
    const { client, a, b, staffA, staffB } = await twoConsultations(w)
    const m1 = await send(client, 'Which consultation gets me?')
    const m2 = await send(client, 'And me?')
    const ask = await w.tg.waitForSent(client.id, CHOOSE)
    await eventually(async () => (await heldOf(w, client)).length === 2, 'both messages held')
    await inboxDrained(w.deps.db)
    expect(w.tg.texts(client.id).filter((t) => CHOOSE.test(t ?? ''))).toHaveLength(1)
    expect(w.tg.callsTo('copyMessage', { chat_id: STAFF_CHAT_ID, from_chat_id: client.id })).toHaveLength(0)
    // One button per consultation, named in words.
    const buttons = ask.reply_markup.inline_keyboard.map((r: any[]) => r[0])
    expect(buttons.map((x: any) => x.callback_data)).toEqual([`sw:${a}`, `sw:${b}`])
    for (const x of buttons) expect(x.text).toMatch(/^Quick review \(bought .+\)$/)

    await w.tg.push(TEST_BOT_ID, w.tg.callback(client, `sw:${b}`, ask))
    const c1 = await copiedTo(w, client, m1.message.message_id)
    const c2 = await copiedTo(w, client, m2.message.message_id)
    expect([c1.payload.message_thread_id, c2.payload.message_thread_id]).toEqual([staffB, staffB])
    expect(c1.seq).toBeLessThan(c2.seq)
    await w.tg.waitForSent(client.id, /now go to “Quick review”[\s\S]*2 messages that were waiting/)
    await receipt(client, b)

    // Later messages follow the remembered choice, without asking.
    const m3 = await send(client, 'Still about the second')
    expect((await copiedTo(w, client, m3.message.message_id)).payload.message_thread_id).toBe(staffB)

    // /switch asks again; the choice changes.
    const since = w.tg.mark()
    await w.tg.push(TEST_BOT_ID, w.tg.privateText(client, '/switch'))
    const again = await w.tg.waitForSent(client.id, /Where should your messages go\?/, { since })
    await w.tg.push(TEST_BOT_ID, w.tg.callback(client, `sw:${a}`, again))
    await w.tg.waitForSent(client.id, /now go to “Quick review”/, { since })
    const m4 = await send(client, 'Now about the first')
    expect((await copiedTo(w, client, m4.message.message_id)).payload.message_thread_id).toBe(staffA)

    await inboxDrained(w.deps.db)
    expect(w.tg.texts(client.id).filter((t) => CHOOSE.test(t ?? ''))).toHaveLength(1)
    expect(await heldOf(w, client)).toEqual([])
  })

  it('a choice button names only the presser’s own live consultation', async () => {
    const { client } = await twoConsultations(w)
    const other = await twoConsultations(w)
    await send(client, 'Where to?')
    const ask = await w.tg.waitForSent(client.id, CHOOSE)
    // Another client's consultation in forged callback data: refused, nothing chosen, nothing released.
    const since = w.tg.mark()
    await w.tg.push(TEST_BOT_ID, w.tg.callback(client, `sw:${other.a}`, ask))
    const answered = await w.tg.waitFor('answerCallbackQuery', {}, { since })
    expect(answered.payload.show_alert).toBe(true)
    await inboxDrained(w.deps.db)
    const route = await w.deps.db
      .selectFrom('client_route')
      .selectAll()
      .where('user_id', '=', client.id)
      .executeTakeFirst()
    expect(route?.consultation_id ?? null).toBeNull()
    expect(await heldOf(w, client)).toHaveLength(1)
  })

  it('races: the held message and the press, each delivered twice at once, land once (20 rounds)', async () => {
    for (let round = 0; round < 20; round++) {
      const { client, a, staffA } = await twoConsultations(w)
      const m = w.tg.privateText(client, `race ${round}`)
      // The same message in two updates (Telegram's at-least-once), at once.
      await Promise.all([w.tg.push(TEST_BOT_ID, m), w.tg.push(TEST_BOT_ID, m)])
      const ask = await w.tg.waitForSent(client.id, CHOOSE)
      // The press redelivered twice (the same update) while the message comes once more.
      const first = await w.tg.push(TEST_BOT_ID, w.tg.callback(client, `sw:${a}`, ask))
      await Promise.all([
        w.tg.redeliver(TEST_BOT_ID, first),
        w.tg.push(TEST_BOT_ID, m),
        w.tg.redeliver(TEST_BOT_ID, first),
      ])
      const item = await itemIn(w, client.id, m.message.message_id, 'sent')
      expect(item.consultation_id).toBe(a)
      await inboxDrained(w.deps.db)
      await lanesIdle(w, a)
      expect(copiesOf(w, client, m.message.message_id).map((c) => c.payload.message_thread_id)).toEqual([
        staffA,
      ])
      // The receipt and the confirmation are sent by jobs after the press: wait for them, then count.
      await w.tg.waitForSent(client.id, /Question #1 accepted/)
      await w.tg.waitForSent(client.id, /now go to/)
      const texts = w.tg.texts(client.id)
      expect(texts.filter((t) => CHOOSE.test(t ?? ''))).toHaveLength(1)
      expect(texts.filter((t) => /Question #1 accepted/.test(t ?? ''))).toHaveLength(1)
      expect(texts.filter((t) => /now go to/.test(t ?? ''))).toHaveLength(1)
      expect(await takenFor(w, client, [m.message.message_id])).toEqual([{ consultation_id: a }])
      const appeals = await w.deps.db
        .selectFrom('desk_appeal')
        .select('id')
        .where('consultation_id', '=', a)
        .execute()
      expect(appeals).toHaveLength(1)
    }
  }, 300_000)

  it('buying a second consultation while one runs says so on the card and before the invoice', async () => {
    const fresh = await newClient(w)
    await w.tg.push(TEST_BOT_ID, w.tg.callback(fresh, 'tf:show:quick'))
    await inboxDrained(w.deps.db)
    expect(w.tg.texts(fresh.id).join('\n')).not.toMatch(/You already have/)

    const client = await newClient(w)
    await activeConsultation(w, client)
    await w.tg.waitForSent(client.id, /is active/)
    let since = w.tg.mark()
    await w.tg.push(TEST_BOT_ID, w.tg.callback(client, 'tf:show:quick'))
    // The card replaces the message its button was on (or comes as a new one).
    const card = await w.tg.waitFor(
      ['editMessageText', 'sendMessage'],
      (p) => Number(p.chat_id) === client.id && /Quick review/.test(p.text ?? ''),
      { since },
    )
    expect(card.payload.text).toMatch(
      /You already have a consultation running: “Quick review” \(bought .+\)\. This purchase is a separate consultation/,
    )
    since = w.tg.mark()
    await w.tg.push(TEST_BOT_ID, w.tg.callback(client, `tf:buy:quick:${termsHash(w.t.desk.terms.version)}`))
    const invoice = await w.tg.waitFor('sendInvoice', { chat_id: client.id }, { since })
    const before = w.tg.sentTo(client.id, { since }).filter((m) => m.seq < invoice.seq)
    expect(before.some((m) => /You already have a consultation running/.test(m.text ?? ''))).toBe(true)
  })
})

describe('several consultations: topics in the client’s private chat', () => {
  let w: DeskWorld
  beforeAll(async () => {
    w = await startDeskWorld()
  })
  afterAll(() => w?.stop())

  it('each consultation gets its own topic in the private chat, and each topic routes to its own staff topic', async () => {
    w.tg.setPrivateTopics(TEST_BOT_ID, 'on')
    try {
      const { client, a, b, staffA, staffB } = await twoConsultations(w)
      const ta = (await clientTopic(w, a, 'open')).thread_id!
      const tb = (await clientTopic(w, b, 'open')).thread_id!
      expect(ta).not.toBe(tb)
      const names = w.tg.privateTopicsOf(client.id).map((t) => t.name)
      expect(names).toHaveLength(2)
      for (const n of names) expect(n).toMatch(/^Quick review · /)
      await w.tg.waitForSent(client.id, /This topic is your consultation “Quick review”/, { threadId: ta })
      await w.tg.waitForSent(client.id, /This topic is your consultation “Quick review”/, { threadId: tb })

      const inB = w.tg.privateTopicText(client, tb, 'Written in the second topic')
      const inA = w.tg.privateTopicText(client, ta, 'Written in the first topic')
      await w.tg.pushAll(TEST_BOT_ID, [inB, inA])
      expect((await copiedTo(w, client, inB.message.message_id)).payload.message_thread_id).toBe(staffB)
      expect((await copiedTo(w, client, inA.message.message_id)).payload.message_thread_id).toBe(staffA)
      // The receipts and the answers come back in each consultation's own topic.
      await w.tg.waitForSent(client.id, /Question #1 accepted/, { threadId: ta })
      await w.tg.waitForSent(client.id, /Question #1 accepted/, { threadId: tb })
      const answer = await staffSends(w, staffA, w.expert, 'Answer to the first')
      const back = await w.tg.waitFor(
        'copyMessage',
        { chat_id: client.id, from_chat_id: STAFF_CHAT_ID, message_id: answer.message.message_id },
        { ok: true },
      )
      expect(back.payload.message_thread_id).toBe(ta)
      await inboxDrained(w.deps.db)
      expect(w.tg.texts(client.id).filter((t) => CHOOSE.test(t ?? ''))).toHaveLength(0)
    } finally {
      w.tg.setPrivateTopics(TEST_BOT_ID, 'off')
    }
  })

  it('topics refused from the start: the plain chat, the replies and the choice route every message', async () => {
    w.tg.setPrivateTopics(TEST_BOT_ID, 'broken')
    try {
      const { client, a, b, staffA, staffB } = await twoConsultations(w)
      await clientTopic(w, a, 'broken')
      await clientTopic(w, b, 'broken')
      expect(w.tg.privateTopicsOf(client.id)).toHaveLength(0)
      const m = w.tg.privateText(client, 'No topics here')
      await w.tg.push(TEST_BOT_ID, m)
      const ask = await w.tg.waitForSent(client.id, CHOOSE)
      expect(ask.thread_id).toBeUndefined()
      await w.tg.push(TEST_BOT_ID, w.tg.callback(client, `sw:${a}`, ask))
      expect((await copiedTo(w, client, m.message.message_id)).payload.message_thread_id).toBe(staffA)
      // B's activation notice, in the plain chat: a reply to it goes to B.
      const [actB] = await firstMessages(w, b, 'the activation notice of B')
      const r = w.tg.privateText(client, 'For the second', { replyTo: actB! })
      await w.tg.push(TEST_BOT_ID, r)
      expect((await copiedTo(w, client, r.message.message_id)).payload.message_thread_id).toBe(staffB)
    } finally {
      w.tg.setPrivateTopics(TEST_BOT_ID, 'off')
    }
  })

  it('topics that break after they were made: the client’s topic still routes, sends fall back to the plain chat', async () => {
    w.tg.setPrivateTopics(TEST_BOT_ID, 'on')
    try {
      const { client, a, staffA } = await twoConsultations(w)
      const ta = (await clientTopic(w, a, 'open')).thread_id!
      w.tg.setPrivateTopics(TEST_BOT_ID, 'broken')
      const since = w.tg.mark()
      const inA = w.tg.privateTopicText(client, ta, 'Written in the first topic, now broken')
      await w.tg.push(TEST_BOT_ID, inA)
      expect((await copiedTo(w, client, inA.message.message_id)).payload.message_thread_id).toBe(staffA)
      // The receipt into the topic is refused ("message thread not found"), then sent to the plain chat.
      const refused = await w.tg.waitFor(
        'sendMessage',
        { chat_id: client.id, message_thread_id: ta },
        { since, ok: false },
      )
      expect(refused.ok).toBe(false)
      const rcpt = await w.tg.waitForSent(client.id, /Question #1 accepted/, { since })
      expect(rcpt.thread_id).toBeUndefined()
      await clientTopic(w, a, 'broken')
      const answer = await staffSends(w, staffA, w.expert, 'Answer after the break')
      const back = await w.tg.waitFor(
        'copyMessage',
        { chat_id: client.id, from_chat_id: STAFF_CHAT_ID, message_id: answer.message.message_id },
        { ok: true },
      )
      expect(back.payload.message_thread_id).toBeUndefined()
      // A reply to the fallback receipt still finds its consultation.
      const more = w.tg.privateText(client, 'More', { replyTo: rcpt.message_id })
      await w.tg.push(TEST_BOT_ID, more)
      expect((await copiedTo(w, client, more.message.message_id)).payload.message_thread_id).toBe(staffA)
    } finally {
      w.tg.setPrivateTopics(TEST_BOT_ID, 'off')
    }
  })
})
