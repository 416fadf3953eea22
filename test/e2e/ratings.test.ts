import type { Message } from 'grammy/types'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { closeEarly } from '../../src/consultations/desk.service'
import { rateConsultation } from '../../src/consultations/ratings'
import { ratingsSummary } from '../../src/dashboard/dashboard.overview'
import { upsertProfile } from '../../src/experts/experts.repository'
import { BOSS_SCHEMA } from '../../src/jobs/jobs'
import { buildReport, renderReport } from '../../src/reports/reports.service'
import {
  ADMIN_ID,
  activeConsultation,
  appeals,
  clientSends,
  consultationWithTopic,
  type DeskWorld,
  EXPERT_ID,
  eventually,
  itemIn,
  newClient,
  paidConsultation,
  STAFF_CHAT_ID,
  staffSends,
  startDeskWorld,
  TEST_BOT_ID,
} from '../support/fixtures'

/**
 * Ratings (issue 14): the 1-5 buttons when a consultation closes, one rating per consultation, changeable for 7
 * days, an optional comment, a low rating told to the admins through the outbox, /report and the dashboard's
 * average and count per answering expert; concurrent presses give one row.
 */

let w: DeskWorld
beforeAll(async () => {
  w = await startDeskWorld()
})
afterAll(() => w?.stop())

/** A consultation whose question the expert answered, then ended by an admin: the client has the rating buttons. */
async function closedAndAnswered() {
  const { client, consultationId, route } = await consultationWithTopic(w, { language_code: 'en' })
  const q = await clientSends(w, client, 'My question')
  await itemIn(w, client.id, q.message_id, 'sent')
  await staffSends(w, route.message_thread_id, w.expert, 'The answer')
  await eventually(async () => (await appeals(w, consultationId))[0]?.answered_by === EXPERT_ID, 'the answer')
  expect(await closeEarly(w.deps, w.t.desk, { consultationId, actorId: ADMIN_ID })).toEqual({
    status: 'closed',
  })
  const closed = await w.tg.waitForSent(client.id, /has ended your consultation/)
  return { client, consultationId, closed }
}

const rating = (id: number) =>
  w.deps.db.selectFrom('consultation_rating').selectAll().where('consultation_id', '=', id).executeTakeFirst()

describe('rating a closed consultation', () => {
  it('offers 1-5 buttons, stores one rating, tells the admins of a low one, lets the client change it and comment', async () => {
    const { client, consultationId, closed } = await closedAndAnswered()
    expect(closed.text).toContain('Rate it from 1 to 5')
    const markup = JSON.stringify(closed.reply_markup)
    for (const n of [1, 2, 3, 4, 5]) expect(markup).toContain(`rate:${consultationId}:${n}`)

    await w.tg.push(TEST_BOT_ID, w.tg.callback(client, `rate:${consultationId}:2`))
    await w.tg.waitForSent(client.id, /You rated the consultation 2 of 5/)
    const low = await w.tg.waitForSent(STAFF_CHAT_ID, /Низкая оценка 2\/5: консультация #\d+/)
    expect(low.text).toContain(`консультация #${consultationId}`)
    // Named (the Telegram name stored when Ed wrote), not by id.
    expect(low.text).toContain('ответственный Ed.')
    expect(await rating(consultationId)).toMatchObject({ score: 2, expert_id: EXPERT_ID, user_id: client.id })

    // Changed to 4: no new alert; the same row.
    const since = w.tg.mark()
    await w.tg.push(TEST_BOT_ID, w.tg.callback(client, `rate:${consultationId}:4`))
    const changed = await w.tg.waitForSent(client.id, /Your rating is now 4 of 5/, { since })
    expect(JSON.stringify(changed.reply_markup)).toContain(`rate:cm:${consultationId}`)
    expect((await rating(consultationId))?.score).toBe(4)

    // A comment: the next text message.
    await w.tg.push(TEST_BOT_ID, w.tg.callback(client, `rate:cm:${consultationId}`))
    await w.tg.waitForSent(client.id, /Write your comment in one message/)
    await clientSends(w, client, 'Clear and quick, thanks')
    await w.tg.waitForSent(client.id, /your comment is saved/)
    expect((await rating(consultationId))?.comment).toBe('Clear and quick, thanks')
    expect(
      w.tg.sentTo(STAFF_CHAT_ID, { since }).filter((m) => /Низкая оценка/.test(String(m.text))),
    ).toHaveLength(0)

    // Seven days later the rating stays as it is.
    await w.deps.db
      .updateTable('consultation_rating')
      .set({ created_at: new Date(Date.now() - 8 * 86_400_000) })
      .where('consultation_id', '=', consultationId)
      .execute()
    await w.tg.push(TEST_BOT_ID, w.tg.callback(client, `rate:${consultationId}:1`))
    await w.tg.waitFor('answerCallbackQuery', (p) => /only be changed within 7 days/.test(p.text ?? ''))
    expect((await rating(consultationId))?.score).toBe(4)
  })

  it('refuses a consultation still active and another client, changing nothing', async () => {
    const { client, consultationId } = await paidConsultation(w, { language_code: 'en' })
    await w.tg.push(TEST_BOT_ID, w.tg.callback(client, `rate:${consultationId}:5`))
    await w.tg.waitFor('answerCallbackQuery', (p) => /once it has ended/.test(p.text ?? ''))
    const other = await newClient(w, { language_code: 'en' })
    const closed = await closedAndAnswered()
    await w.tg.push(TEST_BOT_ID, w.tg.callback(other, `rate:${closed.consultationId}:5`))
    await w.tg.waitFor('answerCallbackQuery', (p) => /cannot be rated from this account/.test(p.text ?? ''))
    expect(await rating(consultationId)).toBeUndefined()
    expect(await rating(closed.consultationId)).toBeUndefined()
  })

  it('concurrent first presses make one rating and one "given" record (10 rounds of 8)', async () => {
    for (let round = 0; round < 10; round++) {
      const { client, consultationId } = await paidConsultation(w, { language_code: 'en' })
      await closeEarly(w.deps, w.t.desk, { consultationId, actorId: ADMIN_ID })
      const scores = [1, 2, 3, 4, 5, 1, 2, 5]
      const results = await Promise.all(
        scores.map((score) =>
          rateConsultation(w.deps, w.t.desk, { consultationId, userId: client.id, score }),
        ),
      )
      expect(results.every((r) => r.status === 'rated')).toBe(true)
      const rows = await w.deps.db
        .selectFrom('consultation_rating')
        .selectAll()
        .where('consultation_id', '=', consultationId)
        .execute()
      expect(rows).toHaveLength(1)
      const given = await w.deps.db
        .selectFrom('audit_log')
        .select('id')
        .where('action', '=', 'rating.given')
        .where('subject_id', '=', String(consultationId))
        .execute()
      expect(given).toHaveLength(1)
      // Nobody answered: the rating counts for the owner the activation chose (the desk's one expert).
      expect(rows[0]!.expert_id).toBe(EXPERT_ID)
    }
  })

  it('counts for the owner, not the answerer, and tells the owner of a low rating once, in private', async () => {
    const OWNER = 900007
    const { client, consultationId } = await closedAndAnswered()
    // Ed answered; the desk made someone else responsible (a hand-over after the answer).
    await w.deps.db
      .updateTable('expert_assignment')
      .set({ expert_id: OWNER })
      .where('consultation_id', '=', consultationId)
      .where('ended_at', 'is', null)
      .execute()
    await upsertProfile(w.deps.db, TEST_BOT_ID, OWNER, { name: 'Olga' })
    const since = w.tg.mark()
    const rate = (score: number) =>
      rateConsultation(w.deps, w.t.desk, { consultationId, userId: client.id, score })
    expect((await rate(1)).status).toBe('rated')
    expect(await rating(consultationId)).toMatchObject({ score: 1, expert_id: OWNER })
    const told = await w.tg.waitForSent(OWNER, /Клиент оценил вашу консультацию #\d+ .* на 1\/5/, { since })
    expect(told.text).toContain(`#${consultationId}`)
    const group = await w.tg.waitForSent(STAFF_CHAT_ID, /Низкая оценка 1\/5/, { since })
    expect(group.text).toContain('ответственный Olga.')
    // Still low (1 -> 2), then the same score pressed again: the owner is told once.
    expect((await rate(2)).status).toBe('rated')
    expect((await rate(2)).status).toBe('rated')
    // One notification was ever queued for the owner (jobs are the outbox: none is waiting to be sent later).
    const queued = await sql<{ n: number }>`select count(*)::int as n from ${sql.id(BOSS_SCHEMA, 'job')}
      where name = 'tg.notify' and data->>'chatId' = ${String(OWNER)}`.execute(w.deps.db)
    expect(queued.rows[0]!.n).toBe(1)
    expect(w.tg.sentTo(OWNER, { since })).toHaveLength(1)
    expect(w.tg.sentTo(EXPERT_ID, { since }).filter((m) => /оценил/.test(m.text ?? ''))).toHaveLength(0)
  })

  it('/report and the dashboard show the average and count per answering expert', async () => {
    const a = await closedAndAnswered()
    const b = await closedAndAnswered()
    for (const [c, score] of [
      [a, 5],
      [b, 2],
    ] as const)
      expect(
        (
          await rateConsultation(w.deps, w.t.desk, {
            consultationId: c.consultationId,
            userId: c.client.id,
            score,
          })
        ).status,
      ).toBe('rated')
    const from = new Date(Date.now() - 3600_000)
    const to = new Date(Date.now() + 3600_000)
    const report = await buildReport(w.deps.db, TEST_BOT_ID, from, to)
    const mine = report.ratings.find((r) => r.expertId === EXPERT_ID)!
    // Earlier tests in this file rated EXPERT_ID's consultations too (the first one moved 8 days back: outside).
    const all = await w.deps.db
      .selectFrom('consultation_rating')
      .select(['score'])
      .where('expert_id', '=', EXPERT_ID)
      .where('created_at', '>=', from)
      .execute()
    const avg = all.reduce((s, r) => s + r.score, 0) / all.length
    expect(mine.count).toBe(all.length)
    expect(mine.average).toBeCloseTo(avg, 2)
    const text = renderReport((k, p) => w.deps.i18n.t('ru', k, p), w.t.desk, report, new Date())
    expect(text).toContain('⭐ Оценки консультаций')
    expect(text).toContain(`эксперт id ${EXPERT_ID}: ${avg.toFixed(2)} по ${all.length} оценкам`)
    expect(text).toContain('по ответственному эксперту')
    const dash = await ratingsSummary(w.deps.db, { botId: TEST_BOT_ID, from, to, zone: 'Europe/Moscow' })
    expect(dash?.byExpert.find((x) => x.staffId === EXPERT_ID)).toEqual({
      staffId: EXPERT_ID,
      count: all.length,
      average: mine.average,
    })
  })
})

describe('the comment conversation never swallows a question (issue 23)', () => {
  it('a comment button naming another client’s consultation opens nothing: refused, and the next question reaches the expert', async () => {
    const closed = await closedAndAnswered()
    await w.tg.push(TEST_BOT_ID, w.tg.callback(closed.client, `rate:${closed.consultationId}:4`))
    await w.tg.waitForSent(closed.client.id, /You rated the consultation 4 of 5/)
    const other = await consultationWithTopic(w, { language_code: 'en' })
    const since = w.tg.mark()
    const press = w.tg.callback(other.client, `rate:cm:${closed.consultationId}`)
    await w.tg.push(TEST_BOT_ID, press)
    const answer = await w.tg.waitFor('answerCallbackQuery', { callback_query_id: press.callback_query!.id })
    expect(answer.payload).toMatchObject({
      text: 'This consultation cannot be rated from this account.',
      show_alert: true,
    })
    const q = await clientSends(w, other.client, 'NEXT-QUESTION right after the forged button')
    await itemIn(w, other.client.id, q.message_id, 'sent')
    expect(w.tg.sentTo(other.client.id, { since }).some((m) => /comment/i.test(m.text ?? ''))).toBe(false)
    expect((await rating(closed.consultationId))?.comment).toBeNull()
    expect(
      await w.deps.db
        .selectFrom('conversation_state')
        .selectAll()
        .where('chat_id', '=', other.client.id)
        .execute(),
    ).toHaveLength(0)
  })

  it('with an open consultation, a text that does not reply to the prompt goes to the expert; the reply is the comment (cut before an emoji); Cancel leaves', async () => {
    const closed = await closedAndAnswered()
    const client = closed.client
    await w.tg.push(TEST_BOT_ID, w.tg.callback(client, `rate:${closed.consultationId}:2`))
    await w.tg.waitForSent(client.id, /You rated the consultation 2 of 5/)
    // The client buys again: this consultation is where their questions go.
    const { consultationId: open } = await activeConsultation(w, client)

    const since = w.tg.mark()
    await w.tg.push(TEST_BOT_ID, w.tg.callback(client, `rate:cm:${closed.consultationId}`))
    const prompt = await w.tg.waitForSent(
      client.id,
      /Write your comment in one message, as a reply to this message/,
      { since },
    )
    expect(prompt.reply_markup).toMatchObject({ force_reply: true })
    // The way out: the message whose button was pressed now carries Cancel.
    await w.tg.waitFor('editMessageReplyMarkup', (p) =>
      JSON.stringify(p.reply_markup ?? {}).includes(`rate:cx:${closed.consultationId}`),
    )

    const q = await clientSends(w, client, 'A QUESTION for the expert, not a comment')
    const item = await itemIn(w, client.id, q.message_id, 'sent')
    expect(item.consultation_id).toBe(open)
    expect((await rating(closed.consultationId))?.comment).toBeNull()

    // 1,000 is the limit: the emoji at 999-1000 is not split (its half would make the admins' alert fail).
    const long = `${'a'.repeat(999)}😀${'b'.repeat(200)}`
    const reply = await clientSends(w, client, {
      text: long,
      reply_to_message: prompt.message as NonNullable<Message['reply_to_message']>,
    })
    await w.tg.waitForSent(client.id, /your comment is saved/, { since })
    expect((await rating(closed.consultationId))?.comment).toBe('a'.repeat(999))
    expect(
      await w.deps.db
        .selectFrom('desk_message')
        .select('id')
        .where('chat_id', '=', client.id)
        .where('message_id', '=', reply.message_id)
        .execute(),
    ).toHaveLength(0)
    await w.tg.waitForSent(STAFF_CHAT_ID, (m) => (m.text ?? '').includes('a'.repeat(999)))

    // Cancel: the prompt's button ends it; the next text is a question again, not a comment.
    const again = w.tg.mark()
    await w.tg.push(TEST_BOT_ID, w.tg.callback(client, `rate:cm:${closed.consultationId}`))
    const prompt2 = await w.tg.waitForSent(client.id, /Write your comment/, { since: again })
    const cancel = w.tg.callback(client, `rate:cx:${closed.consultationId}`)
    await w.tg.push(TEST_BOT_ID, cancel)
    const cancelled = await w.tg.waitFor('answerCallbackQuery', {
      callback_query_id: cancel.callback_query!.id,
    })
    expect(cancelled.payload.text).toBe('No comment added.')
    const q2 = await clientSends(w, client, {
      text: 'ANOTHER QUESTION',
      reply_to_message: prompt2.message as NonNullable<Message['reply_to_message']>,
    })
    await itemIn(w, client.id, q2.message_id, 'sent')
    expect((await rating(closed.consultationId))?.comment).toBe('a'.repeat(999))
  })
})
