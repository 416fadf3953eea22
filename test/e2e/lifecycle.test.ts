import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { activateConsultation } from '../../src/consultations/activation'
import { consultationActivatedQueue, scheduleWindowJobs } from '../../src/consultations/consultations.jobs'
import { runScheduledStart } from '../../src/consultations/start.service'
import { clockNow } from '../../src/db/clock'
import { sweepLifecycle } from '../../src/lifecycle/sweep'
import { runClosingSoon, runWindowClose } from '../../src/lifecycle/window.service'
import { scheduleStart } from '../../src/orders/orders.service'
import type { RecordedFile } from '../support/bot-api'
import { media } from '../support/bot-api'
import {
  appeals,
  clientSends,
  consultationWithTopic,
  type DeskWorld,
  eventually,
  itemIn,
  lanesIdle,
  newClient,
  payThroughTelegram,
  STAFF_CHAT_ID,
  staffSends,
  startDeskWorld,
  TEST_BOT_ID,
  topicReady,
  waitingConsultation,
} from '../support/fixtures'
import { fastForward, H, jobsFor, MIN } from '../support/lifecycle-clock'

/**
 * The window's lifecycle end to end (issue 6): opening at the agreed start, "closes soon", "closed", the topic
 * closed once every accepted appeal is answered, /extend moving the closing jobs, a worker restart, /status and the
 * transcript. Time moves by fastForward (the consultation's instants and its scheduled jobs shift into the past, the
 * real jobs fire by themselves), never by sleeping; job logic run twice on purpose checks "exactly once".
 */

async function consultation(w: DeskWorld, id: number) {
  return w.deps.db.selectFrom('consultation').selectAll().where('id', '=', id).executeTakeFirstOrThrow()
}

async function auditCount(w: DeskWorld, action: string, subjectId: number) {
  const r = await w.deps.db
    .selectFrom('audit_log')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('action', '=', action)
    .where('subject_id', '=', String(subjectId))
    .executeTakeFirstOrThrow()
  return r.n
}

const count = (w: DeskWorld, chatId: number, re: RegExp) =>
  w.tg.texts(chatId).filter((t) => re.test(t ?? '')).length

describe('lifecycle: one consultation from start to transcript', () => {
  let w: DeskWorld
  beforeAll(async () => {
    w = await startDeskWorld()
  })
  afterAll(() => w?.stop())

  it('opens at its scheduled start once, however often the start job runs; the window jobs are written once', async () => {
    const client = await newClient(w, { language_code: 'en' })
    const desk = w.t.desk
    const { consultationId } = await waitingConsultation(w, client)
    // The agreed start has just come (payments' scheduled-start job, as agreeStart writes it).
    const startsAt = new Date((await clockNow(w.deps.db)).getTime() - 1000)
    await w.deps.jobs.transaction(w.deps.db, (_trx, outbox) =>
      scheduleStart(outbox, consultationId, startsAt),
    )
    await w.tg.waitForSent(client.id, /Your consultation “Quick review” is active/)
    const active = await consultation(w, consultationId)
    expect(active.starts_at).toEqual(startsAt)
    expect(active.access_until!.getTime()).toBe(startsAt.getTime() + 24 * H)

    // The start job again, twice at once, and the activation replayed with its window jobs: nothing moves.
    const job = { consultationId, startsAt: startsAt.toISOString() }
    await Promise.all([runScheduledStart(w.deps, job), runScheduledStart(w.deps, job)])
    await w.deps.jobs.transaction(w.deps.db, async (trx, outbox) => {
      const r = await activateConsultation(trx, outbox, w.deps, {
        consultationId,
        actorId: null,
        reason: 'admin',
      })
      expect(r.status).toBe('already-active')
      await scheduleWindowJobs(outbox, desk, r.consultation!)
    })
    const again = await consultation(w, consultationId)
    expect([again.starts_at, again.access_until]).toEqual([active.starts_at, active.access_until])
    const soon = await jobsFor(w.deps.db, 'lifecycle.closing-soon', consultationId)
    const close = await jobsFor(w.deps.db, 'lifecycle.close', consultationId)
    expect(soon.map((j) => j.start_after)).toEqual([new Date(active.access_until!.getTime() - H)])
    expect(close.map((j) => j.start_after)).toEqual([active.access_until])
    await topicReady(w, consultationId)
    expect(count(w, client.id, /is active/)).toBe(1)
  })

  it('closes soon, then closes: each notice once even when its job runs twice; the topic closes; late message refused; transcript', async () => {
    const { client, consultationId, orderId, route } = await consultationWithTopic(w, {
      language_code: 'en',
      first_name: 'Olga',
    })
    const q = await clientSends(w, client, { photo: media.photo(), caption: 'Here is the stack trace' })
    await itemIn(w, client.id, q.message_id, 'sent')
    const answer = await staffSends(
      w,
      route.message_thread_id,
      w.expert,
      'Increase the pool timeout to 30 s.',
    )
    await itemIn(w, STAFF_CHAT_ID, answer.message.message_id, 'sent')

    // 23 h 01 min later: one hour minus a minute left.
    await fastForward(w.deps.db, consultationId, 23 * H + MIN)
    const soon = await w.tg.waitForSent(client.id, /closes soon/)
    expect(soon.text).toContain('59 min left')
    expect(soon.text).toContain('Questions left: 2 of 3.')
    const c1 = await consultation(w, consultationId)
    const soonJob = { consultationId, accessUntil: c1.access_until!.toISOString() }
    const reruns = await Promise.all([runClosingSoon(w.deps, soonJob), runClosingSoon(w.deps, soonJob)])
    expect(reruns).toEqual(['done', 'done'])

    // The end of the window.
    await fastForward(w.deps.db, consultationId, H)
    const closed = await w.tg.waitForSent(client.id, /ended at/)
    expect(closed.text).toContain('New questions need a new consultation')
    expect(closed.reply_markup?.inline_keyboard?.[0]?.[0]?.callback_data).toBe(`tr:get:${consultationId}`)
    // The rating buttons (issue 14), 1 to 5.
    expect(closed.text).toContain('Rate it from 1 to 5')
    expect(
      closed.reply_markup?.inline_keyboard?.[1]?.map((b: { callback_data?: string }) => b.callback_data),
    ).toEqual([1, 2, 3, 4, 5].map((n) => `rate:${consultationId}:${n}`))
    const c2 = await consultation(w, consultationId)
    expect(c2).toMatchObject({ state: 'closed' })
    expect(c2.closed_at).toEqual(c2.access_until)
    expect(c2.access_until!.getTime() - c2.starts_at!.getTime()).toBe(24 * H)
    const order = await w.deps.db
      .selectFrom('orders')
      .select('state')
      .where('id', '=', orderId)
      .executeTakeFirstOrThrow()
    expect(order.state).toBe('closed')
    const closeJob = { consultationId, accessUntil: c2.access_until!.toISOString() }
    expect(await Promise.all([runWindowClose(w.deps, closeJob), runWindowClose(w.deps, closeJob)])).toEqual([
      'not-active',
      'not-active',
    ])
    // Every question answered: the topic is renamed (⚪) and closed, once.
    await w.tg.waitFor('closeForumTopic', {
      chat_id: STAFF_CHAT_ID,
      message_thread_id: route.message_thread_id,
    })
    await w.tg.waitFor(
      'editForumTopic',
      (p) => p.message_thread_id === route.message_thread_id && /^⚪ Olga/.test(String(p.name)),
    )
    await w.tg.waitForSent(STAFF_CHAT_ID, /Окно закончилось .* На все вопросы ответ дан/, {
      threadId: route.message_thread_id,
    })
    await sweepLifecycle(w.deps)
    expect(w.tg.callsTo('closeForumTopic', { message_thread_id: route.message_thread_id })).toHaveLength(1)
    expect(await auditCount(w, 'consultation.window_closed', consultationId)).toBe(1)

    // A late message is refused with the closing time and not passed on.
    const late = await clientSends(w, client, 'One more thing...')
    await itemIn(w, client.id, late.message_id, 'refused')
    await w.tg.waitForSent(client.id, /The consultation window closed at/)

    // The transcript, by the button; a redelivered press sends nothing more.
    const press = await w.tg.push(TEST_BOT_ID, w.tg.callback(client, `tr:get:${consultationId}`))
    const doc = await w.tg.waitFor('sendDocument', { chat_id: client.id }, { ok: true })
    const file = doc.payload.document as RecordedFile
    expect(file.filename).toBe(`consultation-${consultationId}.txt`)
    const text = file.data!.toString('utf8')
    expect(text).toContain(`Consultation #${consultationId} · Quick review`)
    expect(text).toMatch(/— Question #1 · accepted .* · due .* · answered /)
    expect(text).toMatch(/You: \[photo\] Here is the stack trace/)
    expect(text).toMatch(/Expert: Increase the pool timeout to 30 s\./)
    expect(text).toMatch(/You \(not passed to the expert: the consultation had ended\): One more thing\.\.\./)
    await w.tg.redeliver(TEST_BOT_ID, press)
    await w.tg.push(TEST_BOT_ID, w.tg.privateText(client, '/status'))
    await w.tg.waitForSent(client.id, /Your orders/)
    expect(w.tg.callsTo('sendDocument', { chat_id: client.id })).toHaveLength(1)
    expect(count(w, client.id, /closes soon/)).toBe(1)
    expect(count(w, client.id, /ended at/)).toBe(1)
  })

  it('an appeal open at the end is still answered; the topic closes after that answer', async () => {
    const { client, consultationId, route } = await consultationWithTopic(w, { language_code: 'en' })
    await fastForward(w.deps.db, consultationId, 23 * H + 30 * MIN)
    const q = await clientSends(w, client, 'Asked in the last half hour')
    await itemIn(w, client.id, q.message_id, 'sent')

    // /status while it is open: time left, appeals, the open one with its due time.
    await w.tg.push(TEST_BOT_ID, w.tg.privateText(client, '/status'))
    const status = await w.tg.waitForSent(client.id, /Time left/)
    expect(status.text).toMatch(/Time left: (29|30) min\./)
    expect(status.text).toContain('Questions: 0 answered, 1 awaiting an answer, 2 left of 3.')
    expect(status.text).toMatch(/Question #1 \(accepted .*\): answer due by /)

    await fastForward(w.deps.db, consultationId, 31 * MIN)
    const closed = await w.tg.waitForSent(client.id, /ended at/)
    expect(closed.text).toContain('Your accepted question will still be answered here.')
    await w.tg.waitForSent(STAFF_CHAT_ID, /Ещё нужно ответить: #1/, { threadId: route.message_thread_id })
    await sweepLifecycle(w.deps)
    expect(w.tg.callsTo('closeForumTopic', { message_thread_id: route.message_thread_id })).toHaveLength(0)

    const answer = await staffSends(w, route.message_thread_id, w.expert, 'The answer, after the window.')
    await itemIn(w, STAFF_CHAT_ID, answer.message.message_id, 'sent')
    expect((await appeals(w, consultationId))[0]).toMatchObject({ state: 'answered', in_time: true })
    await lanesIdle(w, consultationId)
    await sweepLifecycle(w.deps)
    await w.tg.waitFor('closeForumTopic', {
      chat_id: STAFF_CHAT_ID,
      message_thread_id: route.message_thread_id,
    })
  })

  it('/extend moves the closing jobs: the old ones find the window moved and do nothing', async () => {
    const { client, consultationId, route } = await consultationWithTopic(w, { language_code: 'en' })
    const before = await consultation(w, consultationId)
    await staffSends(w, route.message_thread_id, w.admin, '/extend 2')
    await w.tg.waitForSent(client.id, /extended by 2 h/)
    const after = await consultation(w, consultationId)
    expect(after.access_until!.getTime() - before.access_until!.getTime()).toBe(2 * H)
    const close = await jobsFor(w.deps.db, 'lifecycle.close', consultationId)
    expect(close.map((j) => j.start_after.getTime()).sort()).toEqual(
      [before.access_until!.getTime(), after.access_until!.getTime()].sort(),
    )

    // Past the old end: the old jobs run and find the window moved.
    await fastForward(w.deps.db, consultationId, 24 * H + MIN)
    await eventually(async () => {
      const jobs = await jobsFor(w.deps.db, 'lifecycle.close', consultationId)
      return jobs.filter((j) => j.state === 'completed').length === 1
    }, 'the old close job to run')
    expect((await consultation(w, consultationId)).state).toBe('active')
    expect(count(w, client.id, /closes soon|ended at/)).toBe(0)

    // An hour before the new end, then the new end.
    await fastForward(w.deps.db, consultationId, 61 * MIN)
    const soon = await w.tg.waitForSent(client.id, /closes soon/)
    expect(soon.text).toMatch(/5\d min left/)
    await fastForward(w.deps.db, consultationId, H)
    await w.tg.waitForSent(client.id, /ended at/)
    const closed = await consultation(w, consultationId)
    expect(closed.closed_at).toEqual(closed.access_until)
    expect(count(w, client.id, /closes soon/)).toBe(1)
  })
})

describe('lifecycle: a worker restart moves nothing', () => {
  let bot: DeskWorld
  let worker: DeskWorld | undefined
  beforeAll(async () => {
    bot = await startDeskWorld({ role: 'bot' })
    worker = await startDeskWorld({ role: 'worker', database: bot.t.db, tg: bot.tg })
  })
  afterAll(async () => {
    await worker?.stop()
    await bot?.stop()
  })

  it('the window and its jobs survive a restart and duplicate jobs unchanged; the new worker closes it on time', async () => {
    const client = await newClient(bot, { language_code: 'en' })
    const { consultationId } = await payThroughTelegram(bot, client)
    await topicReady(bot, consultationId)
    const window = await consultation(bot, consultationId)

    // The worker goes away and a new one comes up on the same database; meanwhile the jobs are written again.
    await worker!.stop()
    worker = undefined
    await bot.deps.jobs.transaction(bot.deps.db, async (trx, outbox) => {
      const r = await activateConsultation(trx, outbox, bot.deps, {
        consultationId,
        actorId: null,
        reason: 'admin',
      })
      expect(r.status).toBe('already-active')
      await scheduleWindowJobs(outbox, bot.t.desk, r.consultation!)
      await outbox.send(consultationActivatedQueue, { consultationId })
    })
    worker = await startDeskWorld({ role: 'worker', database: bot.t.db, tg: bot.tg })
    await sweepLifecycle(worker.deps)
    const same = await consultation(bot, consultationId)
    expect([same.starts_at, same.access_until]).toEqual([window.starts_at, window.access_until])
    expect(await jobsFor(bot.deps.db, 'lifecycle.close', consultationId)).toHaveLength(1)
    expect(await jobsFor(bot.deps.db, 'lifecycle.closing-soon', consultationId)).toHaveLength(1)

    await fastForward(bot.deps.db, consultationId, 23 * H + MIN)
    await bot.tg.waitForSent(client.id, /closes soon/)
    await fastForward(bot.deps.db, consultationId, H)
    await bot.tg.waitForSent(client.id, /ended at/)
    const closed = await consultation(bot, consultationId)
    expect(closed.closed_at).toEqual(closed.access_until)
    expect(closed.access_until!.getTime() - closed.starts_at!.getTime()).toBe(24 * H)
    expect(count(bot, client.id, /is active/)).toBe(1)
    expect(count(bot, client.id, /closes soon/)).toBe(1)
    expect(count(bot, client.id, /ended at/)).toBe(1)
    expect(bot.tg.callsTo('createForumTopic', { chat_id: STAFF_CHAT_ID })).toHaveLength(1)
  })
})
