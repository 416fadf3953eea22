import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { formatInstant } from '../../src/time/format'
import {
  activeConsultation,
  appeals,
  clientSends,
  consultationWithTopic,
  type DeskWorld,
  eventually,
  itemIn,
  lanesIdle,
  newClient,
  paidConsultation,
  STAFF_CHAT_ID,
  staffSends,
  startDeskWorld,
  topicReady,
} from '../support/fixtures'

/**
 * The access window and the appeals allowance, end to end. Time is moved the way issue 6 allows: the admission
 * itself always runs on the database clock; to stand at 18:02 after a message accepted at 17:59 the test moves the
 * window and the acceptance instant into the past, never sleeps.
 */

describe('desk: the window edge of seed 004 (17:59 accepted, 18:02 delivered)', () => {
  let w: DeskWorld
  let worker: DeskWorld | undefined
  beforeAll(async () => {
    // Only the bot runs at first: messages are admitted, nothing is delivered yet (the worker is "late").
    w = await startDeskWorld({ role: 'bot' })
  })
  afterAll(async () => {
    await worker?.stop()
    await w?.stop()
  })

  it('a question accepted before the close is delivered and answered after it; a later one is refused with the closing time', async () => {
    const { client, consultationId } = await paidConsultation(w, { language_code: 'en' })
    const q = await clientSends(w, client, 'Last-minute question')
    const accepted = await itemIn(w, client.id, q.message_id, 'pending')
    expect(accepted.accepted_at).not.toBeNull()

    // Accepted at "17:59", the window closed at "18:00", it is now "18:02".
    await sql`update consultation set starts_at = now() - interval '1 day 2 minutes',
      access_until = now() - interval '2 minutes' where id = ${consultationId}`.execute(w.deps.db)
    await sql`update desk_message set accepted_at = now() - interval '3 minutes' where id = ${accepted.id}`.execute(
      w.deps.db,
    )
    await sql`update desk_appeal set accepted_at = now() - interval '3 minutes'
      where consultation_id = ${consultationId}`.execute(w.deps.db)
    const { access_until } = await w.deps.db
      .selectFrom('consultation')
      .select('access_until')
      .where('id', '=', consultationId)
      .executeTakeFirstOrThrow()

    const late = await clientSends(w, client, 'And one more, too late')
    const refused = await itemIn(w, client.id, late.message_id, 'refused')
    expect(refused.refusal).toMatchObject({
      reason: 'window_closed',
      numbers: { accessUntil: access_until!.toISOString(), openAppeal: true },
    })

    // The worker comes up two minutes late: the accepted question goes to the topic as an accepted question.
    worker = await startDeskWorld({ role: 'worker', database: w.t.db, tg: w.tg })
    const route = await topicReady(w, consultationId)
    const copy = await w.tg.waitFor(
      'copyMessage',
      { chat_id: STAFF_CHAT_ID, from_chat_id: client.id, message_id: q.message_id },
      { ok: true },
    )
    expect(copy.payload.message_thread_id).toBe(route.message_thread_id)
    const closedAt = formatInstant(access_until!, 'Europe/Moscow', 'en')
    const told = await w.tg.waitForSent(client.id, /window closed/)
    expect(told.text).toContain(closedAt)
    expect(told.text).toContain('Your accepted question will still be answered.')

    // The answer to the accepted appeal is delivered although the window is over.
    const answer = await staffSends(w, route.message_thread_id, w.expert, 'Here is the answer.')
    await w.tg.waitFor(
      'copyMessage',
      { chat_id: client.id, from_chat_id: STAFF_CHAT_ID, message_id: answer.message.message_id },
      { ok: true },
    )
    const [a] = await appeals(w, consultationId)
    expect(a).toMatchObject({ state: 'answered', answered_by: w.expert.id })
    await lanesIdle(w, consultationId)
    expect(
      w.tg.callsTo('copyMessage', {
        chat_id: STAFF_CHAT_ID,
        from_chat_id: client.id,
        message_id: late.message_id,
      }),
    ).toHaveLength(0)
  })
})

describe('desk: appeals on the ledger', () => {
  let w: DeskWorld
  beforeAll(async () => {
    w = await startDeskWorld()
  })
  afterAll(() => w?.stop())

  it('three rounds take three units; clarifications join the open appeal; a fourth is refused with the numbers', async () => {
    const { client, consultationId, route } = await consultationWithTopic(w, { language_code: 'ru' })
    for (let round = 1; round <= 3; round++) {
      const q = await clientSends(w, client, `Вопрос ${round}`)
      const more = await clientSends(w, client, `Уточнение к вопросу ${round}`)
      await itemIn(w, client.id, more.message_id, 'sent')
      await w.tg.waitForSent(client.id, new RegExp(`Вопрос №${round} принят`))
      const answer = await staffSends(w, route.message_thread_id, w.expert, `Ответ ${round}`)
      await itemIn(w, STAFF_CHAT_ID, answer.message.message_id, 'sent')
      const list = await appeals(w, consultationId)
      expect(list).toHaveLength(round)
      expect(list[round - 1]).toMatchObject({
        number: round,
        state: 'answered',
        opened_by_message_id: q.message_id,
      })
    }
    const fourth = await clientSends(w, client, 'Четвёртый вопрос')
    const refused = await itemIn(w, client.id, fourth.message_id, 'refused')
    expect(refused.refusal).toMatchObject({
      reason: 'no_appeals',
      numbers: { granted: 3, used: 3, held: 0, left: 0 },
    })
    const told = await w.tg.waitForSent(client.id, /не осталось вопросов/)
    expect(told.text).toContain('осталось 0 из 3.')
    await lanesIdle(w, consultationId)
    expect(
      w.tg.callsTo('copyMessage', {
        chat_id: STAFF_CHAT_ID,
        from_chat_id: client.id,
        message_id: fourth.message_id,
      }),
    ).toHaveLength(0)

    const account = await w.deps.db
      .selectFrom('ledger_account')
      .selectAll()
      .where('scope', '=', 'consultation')
      .where('subject', '=', String(consultationId))
      .where('unit', '=', 'appeals')
      .executeTakeFirstOrThrow()
    expect(account).toMatchObject({ granted: 3, used: 3, reserved: 0 })
    const receipts = w.tg.texts(client.id).filter((t) => /Вопрос №\d принят/.test(t ?? ''))
    expect(receipts).toHaveLength(3)
  })

  it('the receipt names the due time in the client’s time zone: accepted_at + the SLA in business minutes', async () => {
    const client = await newClient(w, { language_code: 'en' })
    await w.deps.db
      .updateTable('client')
      .set({ time_zone: 'Asia/Vladivostok' })
      .where('user_id', '=', client.id)
      .execute()
    const { consultationId } = await activeConsultation(w, client)
    await clientSends(w, client, 'When?')
    const receipt = await w.tg.waitForSent(client.id, /Question #1 accepted/)
    const [a] = await eventually(async () => {
      const l = await appeals(w, consultationId)
      return l.length ? l : undefined
    }, 'the appeal')
    // The test desk is open around the clock: due = accepted + 4 h exactly.
    expect(a!.due_at.getTime() - a!.accepted_at.getTime()).toBe(4 * 3600_000)
    // The zone she picked is her own: the time in it, no zone named (and never its id).
    const due = formatInstant(a!.due_at, { id: 'Asia/Vladivostok', own: true }, 'en')
    expect(receipt.text).toContain(`by ${due} (`)
    expect(receipt.text).not.toContain('Vladivostok time')
    expect(receipt.text).not.toContain('Asia/Vladivostok')
  })
})
