import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Appeal } from '../../src/consultations/desk.repository'
import { upsertProfile } from '../../src/experts/experts.repository'
import { runBreach, runReminder } from '../../src/lifecycle/sla.service'
import { sweepLifecycle } from '../../src/lifecycle/sweep'
import {
  appeals,
  clientSends,
  consultationWithTopic,
  type DeskWorld,
  EXPERT_ID,
  eventually,
  itemIn,
  lanesIdle,
  newClient,
  payThroughTelegram,
  STAFF_CHAT_ID,
  staffSends,
  startDeskWorld,
  topicReady,
} from '../support/fixtures'
import { fastForward, jobsFor } from '../support/lifecycle-clock'

/**
 * The SLA after an appeal opened, end to end: the real app on its own database, Telegram played by the stand-in.
 * The clock is controlled without sleeping: the job logic is run at an injected instant (`now`), or the
 * consultation's instants and its scheduled jobs are moved into the past (fastForward) and the real jobs fire. The
 * test desk is open around the clock, so business time is wall time: the SLA is 4 h, the reminder 30 min before.
 */

const MIN = 60_000
const at = (d: Date, deltaMs = 0) => new Date(d.getTime() + deltaMs)

async function openedAppeal(w: DeskWorld, consultationId: number, n = 1): Promise<Appeal> {
  return eventually(async () => (await appeals(w, consultationId))[n - 1], `appeal #${n}`)
}

async function auditCount(w: DeskWorld, action: string, subjectId: number | string) {
  const r = await w.deps.db
    .selectFrom('audit_log')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('action', '=', action)
    .where('subject_id', '=', String(subjectId))
    .executeTakeFirstOrThrow()
  return r.n
}

describe('SLA: reminder, breach, policy', () => {
  let w: DeskWorld
  beforeAll(async () => {
    w = await startDeskWorld({
      configure: (c) => {
        const d = c.desks[0]!
        const quick = d.tariffs[0]!
        d.tariffs.push(
          { ...quick, code: 'extend', breachPolicy: { kind: 'extend_window', hours: 2 } },
          { ...quick, code: 'bonus', breachPolicy: { kind: 'extra_appeal' } },
        )
      },
    })
  })
  afterAll(() => w?.stop())

  it('reminds the topic 30 business minutes before the due time, mentioning the experts, once', async () => {
    const { client, consultationId, route } = await consultationWithTopic(w, { language_code: 'en' })
    await clientSends(w, client, 'Why does my webhook time out?')
    const a = await openedAppeal(w, consultationId)

    expect(await runReminder(w.deps, a.id, { now: at(a.due_at, -31 * MIN) })).toBe('not-due')
    // The mention names the person (the Telegram name stored when they last wrote), not "expert 1".
    await upsertProfile(w.deps.db, w.t.desk.botId, EXPERT_ID, { name: 'Ирина К.' })
    const since = w.tg.mark()
    expect(await runReminder(w.deps, a.id, { now: at(a.due_at, -30 * MIN) })).toBe('reminded')
    expect(await runReminder(w.deps, a.id, { now: at(a.due_at, -29 * MIN) })).toBe('done')
    const reminder = await w.tg.waitForSent(STAFF_CHAT_ID, /Ответ на вопрос №1 нужен до/, {
      threadId: route.message_thread_id,
    })
    expect(reminder.text).toContain('осталось 30 мин рабочего времени')
    expect(reminder.text).toContain('👤 Ирина К.')
    expect(reminder.message.entities).toEqual([
      expect.objectContaining({ type: 'text_mention', user: expect.objectContaining({ id: EXPERT_ID }) }),
    ])
    await lanesIdle(w, consultationId)
    const reminders = w.tg
      .sentTo(STAFF_CHAT_ID, { threadId: route.message_thread_id, since })
      .filter((m) => /Ответ на вопрос №1 нужен до/.test(m.text ?? ''))
    expect(reminders).toHaveLength(1)
  })

  it('the scheduled jobs fire by themselves at their instants: reminder, then breach at the due time', async () => {
    const { client, consultationId, route } = await consultationWithTopic(w, { language_code: 'en' })
    await clientSends(w, client, 'Question with a deadline')
    const a = await openedAppeal(w, consultationId)
    // Written with the appeal by the admission's transaction: one each, at their instants.
    const remind = await eventually(
      async () => (await jobsFor(w.deps.db, 'sla.remind', consultationId))[0],
      'job',
    )
    const breach = await eventually(
      async () => (await jobsFor(w.deps.db, 'sla.breach', consultationId))[0],
      'job',
    )
    expect(remind.start_after.getTime()).toBe(a.due_at.getTime() - 30 * MIN)
    expect(breach.start_after.getTime()).toBe(a.due_at.getTime())

    // 3 h 31 min later the reminder is due (29 min left); nothing else is.
    await fastForward(w.deps.db, consultationId, 3 * 60 * MIN + 31 * MIN)
    await w.tg.waitForSent(STAFF_CHAT_ID, /Ответ на вопрос №1 нужен до/, {
      threadId: route.message_thread_id,
    })
    expect((await appeals(w, consultationId))[0]!.breached_at).toBeNull()

    // Past the due time: breached by the job, the topic renamed, the admins and the client told.
    await fastForward(w.deps.db, consultationId, 30 * MIN)
    const breached = await eventually(async () => {
      const [x] = await appeals(w, consultationId)
      return x?.breached_at ? x : undefined
    }, 'the breach')
    expect(breached.breached_at!.getTime()).toBeGreaterThanOrEqual(breached.due_at.getTime())
    const rename = await w.tg.waitFor('editForumTopic', {
      chat_id: STAFF_CHAT_ID,
      message_thread_id: route.message_thread_id,
    })
    expect(rename.payload.name).toMatch(/^🔴 /)
    const alert = await w.tg.waitForSent(STAFF_CHAT_ID, /Нарушен SLA: консультация #\d+/)
    expect(alert.thread_id).toBeUndefined()
    expect(alert.text).toContain('нет (тариф не предусматривает компенсации)')
    await w.tg.waitForSent(client.id, /question #1 was due by .* and is late/)
    await w.tg.waitForSent(STAFF_CHAT_ID, /Ответ на вопрос №1 нужен был до/, {
      threadId: route.message_thread_id,
    })
    const sla = await w.deps.db
      .selectFrom('appeal_sla')
      .selectAll()
      .where('appeal_id', '=', a.id)
      .executeTakeFirstOrThrow()
    expect(sla).toMatchObject({ breach_outcome: 'none', breach_policy: { kind: 'none' } })
    expect(await auditCount(w, 'sla.breached', a.id)).toBe(1)

    // The expert answers late: recorded as not in time; the sweeper clears the 🔴 from the topic's name.
    await staffSends(w, route.message_thread_id, w.expert, 'Sorry for the wait: here it is.')
    const answered = await eventually(async () => {
      const [x] = await appeals(w, consultationId)
      return x?.state === 'answered' ? x : undefined
    }, 'the late answer')
    expect(answered.in_time).toBe(false)
    await lanesIdle(w, consultationId)
    await sweepLifecycle(w.deps)
    await w.tg.waitFor(
      'editForumTopic',
      (p) => p.message_thread_id === route.message_thread_id && /^🟢 /.test(String(p.name)),
    )
  })

  it('a first response before the due time is in time and nothing is breached', async () => {
    const { client, consultationId, route } = await consultationWithTopic(w)
    await clientSends(w, client, 'Quick one')
    const a = await openedAppeal(w, consultationId)
    const answer = await staffSends(w, route.message_thread_id, w.expert, 'Quick answer')
    await itemIn(w, STAFF_CHAT_ID, answer.message.message_id, 'sent')
    const [done] = await appeals(w, consultationId)
    expect(done).toMatchObject({
      state: 'answered',
      in_time: true,
      answered_by: EXPERT_ID,
      breached_at: null,
    })
    expect(done!.response_business_minutes).toBeLessThanOrEqual(1)
    expect(await runReminder(w.deps, a.id, { now: at(a.due_at, -10 * MIN) })).toBe('not-open')
    expect(await runBreach(w.deps, a.id, { now: at(a.due_at, MIN) })).toEqual({ status: 'not-open' })
    expect(await auditCount(w, 'sla.breached', a.id)).toBe(0)
  })

  it('extend_window: five breach jobs at once extend the window once, and the client is told once what they got', async () => {
    const { client, consultationId } = await consultationWithTopic(
      w,
      { language_code: 'en' },
      { tariff: 'extend' },
    )
    await clientSends(w, client, 'Please look at this')
    const a = await openedAppeal(w, consultationId)
    const before = await w.deps.db
      .selectFrom('consultation')
      .select(['starts_at', 'access_until'])
      .where('id', '=', consultationId)
      .executeTakeFirstOrThrow()

    expect(await runBreach(w.deps, a.id, { now: at(a.due_at, -1000) })).toEqual({ status: 'not-due' })
    const runs = await Promise.all(
      Array.from({ length: 5 }, () => runBreach(w.deps, a.id, { now: at(a.due_at, 1000) })),
    )
    expect(runs.filter((r) => r.status === 'breached')).toHaveLength(1)
    expect(runs.filter((r) => r.status === 'not-open')).toHaveLength(4)
    expect(await runBreach(w.deps, a.id)).toEqual({ status: 'not-open' })

    const after = await w.deps.db
      .selectFrom('consultation')
      .select(['starts_at', 'access_until'])
      .where('id', '=', consultationId)
      .executeTakeFirstOrThrow()
    expect(after.starts_at).toEqual(before.starts_at)
    expect(after.access_until!.getTime() - before.access_until!.getTime()).toBe(2 * 3600_000)
    const account = await w.deps.db
      .selectFrom('ledger_account')
      .select(['period_start', 'period_end'])
      .where('scope', '=', 'consultation')
      .where('subject', '=', String(consultationId))
      .where('unit', '=', 'appeals')
      .executeTakeFirstOrThrow()
    expect(account.period_end).toEqual(after.access_until)
    expect(await auditCount(w, 'consultation.extended', consultationId)).toBe(1)
    expect(await auditCount(w, 'sla.breached', a.id)).toBe(1)
    const audit = await w.deps.db
      .selectFrom('audit_log')
      .select('details')
      .where('action', '=', 'sla.breached')
      .where('subject_id', '=', String(a.id))
      .executeTakeFirstOrThrow()
    expect(audit.details).toMatchObject({ policy: { kind: 'extend_window', hours: 2 }, outcome: 'extended' })

    const told = await w.tg.waitForSent(client.id, /your window has been extended by 2 h/)
    expect(told.text).toContain('question #1 was due by')
    await eventually(
      async () =>
        (await w.deps.db
          .selectFrom('outbound_message')
          .select('key')
          .where('key', '=', `sla:${a.id}:breach:client`)
          .executeTakeFirst()) !== undefined,
      'the client message recorded',
    )
    expect(w.tg.texts(client.id).filter((t) => /extended by/.test(t ?? ''))).toHaveLength(1)
    // The window's closing jobs were written for the new end by the same transaction.
    const closeJobs = await jobsFor(w.deps.db, 'lifecycle.close', consultationId)
    expect(closeJobs.map((j) => j.start_after.getTime()).sort()).toEqual(
      [before.access_until!.getTime(), after.access_until!.getTime()].sort(),
    )
  })

  it('extra_appeal: one more unit on the ledger, granted once; the client can ask it', async () => {
    const { client, consultationId } = await consultationWithTopic(
      w,
      { language_code: 'en' },
      { tariff: 'bonus' },
    )
    await clientSends(w, client, 'First')
    const a = await openedAppeal(w, consultationId)
    await Promise.all([
      runBreach(w.deps, a.id, { now: at(a.due_at, 1) }),
      runBreach(w.deps, a.id, { now: at(a.due_at, 2) }),
    ])
    await runBreach(w.deps, a.id, { now: at(a.due_at, 3) })
    const account = await w.deps.db
      .selectFrom('ledger_account')
      .selectAll()
      .where('scope', '=', 'consultation')
      .where('subject', '=', String(consultationId))
      .where('unit', '=', 'appeals')
      .executeTakeFirstOrThrow()
    expect(account).toMatchObject({ granted: 4, reserved: 1, used: 0 })
    const told = await w.tg.waitForSent(client.id, /you get one extra question: 3 left/)
    expect(told.text).toContain('question #1')
    const grants = await w.deps.db
      .selectFrom('ledger_grant')
      .select('request_id')
      .where('request_id', '=', `sla:breach:${a.id}:extra-appeal`)
      .execute()
    expect(grants).toHaveLength(1)
  })

  it('after the window an unanswered breach applies no policy and asks the admins for a refund decision, once', async () => {
    const client = await newClient(w, { language_code: 'en' })
    const { consultationId } = await payThroughTelegram(w, client, 'extend')
    const route = await topicReady(w, consultationId)
    await clientSends(w, client, 'Late question')
    const a = await openedAppeal(w, consultationId)
    // Accepted an hour before the window ends, so its 4 h run past the end (the seed 004 Friday evening case).
    await sql`update desk_appeal set accepted_at = c.access_until - interval '1 hour',
        due_at = c.access_until + interval '3 hours'
      from consultation c where c.id = desk_appeal.consultation_id and c.id = ${consultationId}`.execute(
      w.deps.db,
    )
    await sql`update pgboss.job set start_after = a.due_at from desk_appeal a
      where a.id = ${a.id} and job.name = 'sla.breach' and job.data->>'appealId' = ${String(a.id)}`.execute(
      w.deps.db,
    )
    // The window closes with the question open and not yet due: still owed, nothing to flag.
    await fastForward(w.deps.db, consultationId, 24 * 3600_000 + 60_000)
    await eventually(async () => {
      const c = await w.deps.db
        .selectFrom('consultation')
        .select('state')
        .where('id', '=', consultationId)
        .executeTakeFirstOrThrow()
      return c.state === 'closed'
    }, 'the window to close')
    await w.tg.waitForSent(client.id, /Your accepted question will still be answered here/)
    expect(await auditCount(w, 'sla.refund_flagged', a.id)).toBe(0)

    // Its due time passes unanswered: breached by the job, no policy (the window is over), refund decision asked.
    await fastForward(w.deps.db, consultationId, 3 * 3600_000)
    const sla = await eventually(
      () =>
        w.deps.db
          .selectFrom('appeal_sla')
          .selectAll()
          .where('appeal_id', '=', a.id)
          .where('breach_outcome', 'is not', null)
          .executeTakeFirst(),
      'the breach',
    )
    expect(sla).toMatchObject({ breach_outcome: 'skipped', breach_detail: { reason: 'window_ended' } })
    const flag = await w.tg.waitForSent(STAFF_CHAT_ID, /Примите решение о возврате/)
    expect(flag.reply_markup?.inline_keyboard?.[0]?.[0]?.callback_data).toMatch(/^rf:ask:\d+$/)
    await w.tg.waitForSent(client.id, /will decide on a compensation/)
    await sweepLifecycle(w.deps)
    expect(await runBreach(w.deps, a.id)).toEqual({ status: 'not-open' })
    expect(await auditCount(w, 'sla.refund_flagged', a.id)).toBe(1)
    expect(await auditCount(w, 'consultation.extended', consultationId)).toBe(0)
    // The topic stays open: the question is still owed an answer.
    expect(w.tg.callsTo('closeForumTopic', { message_thread_id: route.message_thread_id })).toHaveLength(0)
  })

  it('a client who blocked the bot pauses nothing: the breach and its policy apply, the appeal notes the block', async () => {
    const { client, consultationId } = await consultationWithTopic(
      w,
      { language_code: 'en' },
      { tariff: 'extend' },
    )
    w.tg.block(client.id)
    const q = await clientSends(w, client, 'Asked, then blocked the bot')
    await itemIn(w, client.id, q.message_id, 'sent')
    // The receipt failed with 403: recorded once, not retried.
    await eventually(
      () =>
        w.deps.db
          .selectFrom('outbound_message')
          .select('outcome')
          .where('chat_id', '=', client.id)
          .where('outcome', '=', 'blocked')
          .executeTakeFirst(),
      'the blocked receipt',
    )
    const a = await openedAppeal(w, consultationId)
    const r = await runBreach(w.deps, a.id, { now: at(a.due_at, 1) })
    expect(r).toMatchObject({ status: 'breached', outcome: 'extended' })
    const sla = await w.deps.db
      .selectFrom('appeal_sla')
      .selectAll()
      .where('appeal_id', '=', a.id)
      .executeTakeFirstOrThrow()
    expect(sla.client_blocked_at).not.toBeNull()
    const alert = await w.tg.waitForSent(
      STAFF_CHAT_ID,
      (m) => /Нарушен SLA/.test(m.text ?? '') && /заблокировал/.test(m.text ?? ''),
    )
    expect(alert.text).toContain(`клиент id ${client.id}`)
    await eventually(
      () =>
        w.deps.db
          .selectFrom('outbound_message')
          .select('outcome')
          .where('key', '=', `sla:${a.id}:breach:client`)
          .where('outcome', '=', 'blocked')
          .executeTakeFirst(),
      'the breach message recorded as blocked',
    )
  })
})
