import type { User } from 'grammy/types'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Db } from '../../src/db/database'
import { BOSS_SCHEMA } from '../../src/jobs/jobs'
import { jobId } from '../../src/jobs/queue'
import { runStartReminder } from '../../src/lifecycle/start-reminders'
import { startReminderQueue } from '../../src/orders/orders.jobs'
import { cancelBeforeStart, moveStart } from '../../src/payments/change-start'
import { formatInstant } from '../../src/time/format'
import { eventually } from '../support/fixtures'
import {
  buy,
  openTwelveHoursAhead,
  orderState,
  type PayWorld,
  pay,
  preCheckout,
  startPayWorld,
  TEST_BOT_ID,
  tariff,
} from './payments-support'

/**
 * Reminders before a start (issue 22, src/lifecycle/start-reminders.ts): an hour before a scheduled start and a day
 * before an on_request order's Start deadline, written with the state that makes them (the payment, a move), sent
 * once at their time, and not at all once the state changed (moved, cancelled, started) - a moved start is reminded
 * of its new time. Time passes as in test/support/lifecycle-clock.ts: the order's instants and its jobs (their start
 * and the instant they carry) move back together; the database clock decides.
 */

const HOUR = 3_600_000
const MIN = 60_000
const base = Math.ceil((Date.now() + 48 * HOUR) / HOUR) * HOUR
const A = new Date(base)
const B = new Date(base + 24 * HOUR)
const C = new Date(base + 48 * HOUR)
const D = new Date(base + 72 * HOUR)
const SOON = new Date(Math.ceil((Date.now() + 40 * MIN) / MIN) * MIN)

let w: PayWorld
beforeAll(async () => {
  w = await startPayWorld((c) => {
    c.desks[0]!.tariffs.push(
      tariff({
        code: 'sl',
        startMode: 'scheduled',
        slots: [A, B, C, D].map((d) => d.toISOString()),
        slotCapacity: 10,
      }),
      tariff({ code: 'soon', startMode: 'scheduled', slots: [SOON.toISOString()], slotCapacity: 5 }),
    )
  })
})
afterAll(() => w?.stop())

/**
 * `ms` pass for one consultation before it starts: its order's instants, the consultation's, and its jobs not yet
 * run (their start and the instants in their payload: `startsAt` of the start job, `at` of the reminders).
 */
async function fastForward(db: Db, consultationId: number, ms: number): Promise<void> {
  const d = sql`make_interval(secs => ${ms / 1000})`
  const iso = (f: string) =>
    sql`to_char(((data->>${f})::timestamptz - ${d}) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
  await db.transaction().execute(async (trx) => {
    await sql`update orders set slot_start = slot_start - ${d}, start_by = start_by - ${d}, paid_at = paid_at - ${d},
      updated_at = updated_at - ${d}, created_at = created_at - ${d}
      where id = (select order_id from consultation where id = ${consultationId})`.execute(trx)
    await sql`update consultation set created_at = created_at - ${d} where id = ${consultationId}`.execute(
      trx,
    )
    const job = sql.id(BOSS_SCHEMA, 'job')
    const mine = sql`state in ('created', 'retry') and data->>'consultationId' = ${String(consultationId)}`
    await sql`update ${job} set start_after = start_after - ${d} where ${mine}`.execute(trx)
    await sql`update ${job} set data = jsonb_set(data, '{startsAt}', to_jsonb(${iso('startsAt')}))
      where ${mine} and data ? 'startsAt'`.execute(trx)
    await sql`update ${job} set data = jsonb_set(data, '{at}', to_jsonb(${iso('at')}))
      where ${mine} and data ? 'at'`.execute(trx)
  })
}

/** Moves the consultation's clock to `before` ahead of `instant` (as stored on its order now). */
async function until(consultationId: number, instant: () => Promise<Date>, before: number) {
  const at = await instant()
  await fastForward(w.deps.db, consultationId, at.getTime() - before - Date.now())
}

/** The reminder job of `kind` for the instant (as the job carries it now, moved with the clock) has completed. */
function reminderRan(consultationId: number, kind: 'start' | 'deadline', at: Date) {
  return eventually(async () => {
    const r = await sql<{ state: string }>`select state from ${sql.id(BOSS_SCHEMA, 'job')}
      where name = ${startReminderQueue.name} and data->>'consultationId' = ${String(consultationId)}
        and data->>'kind' = ${kind} and data->>'at' = ${at.toISOString()}`.execute(w.deps.db)
    return r.rows.length === 1 && r.rows[0]!.state === 'completed'
  }, `the ${kind} reminder of ${consultationId} at ${at.toISOString()}`)
}

/** Every notification job with this once-key has been handled. */
function notified(key: string) {
  return eventually(async () => {
    const r = await sql<{ open: number; all: number }>`
      select count(*) filter (where state <> 'completed')::int as open, count(*)::int as all
        from ${sql.id(BOSS_SCHEMA, 'job')} where name = 'tg.notify' and data->>'dedupeKey' = ${key}`.execute(
      w.deps.db,
    )
    return r.rows[0]!.all > 0 && r.rows[0]!.open === 0
  }, `notifications ${key}`)
}

const reminders = (u: User, re: RegExp) => w.tg.texts(u.id).filter((t) => re.test(t ?? ''))

/**
 * The reminder notifications written for an order (sent or not yet): a reminder job writes its notification in the
 * transaction it completes with, so once reminderRan() returned, none here means none will come.
 */
async function reminderNotes(orderId: number): Promise<number> {
  const r = await sql<{ n: number }>`select count(*)::int as n from ${sql.id(BOSS_SCHEMA, 'job')}
    where name = 'tg.notify' and data->>'dedupeKey' like ${`order:${orderId}:start-reminder:%`}`.execute(
    w.deps.db,
  )
  return r.rows[0]!.n
}

async function paid(code: string, start?: Date, lang = 'en') {
  const u = w.tg.user({ language_code: lang })
  const o = await buy(w, u, code, start)
  expect((await preCheckout(w, u, o)).ok).toBe(true)
  await pay(w, u, o)
  await w.tg.waitForSent(u.id, /Payment received|Оплата получена/)
  const s = await orderState(w.deps, o.orderId)
  expect(s.order.state).toBe('paid_waiting')
  return { u, orderId: o.orderId, consultationId: s.consultation!.id }
}

const slotOf = async (orderId: number) => (await orderState(w.deps, orderId)).order.slot_start!
const startByOf = async (orderId: number) => (await orderState(w.deps, orderId)).order.start_by!

describe('before a scheduled start', () => {
  it('an hour before: once, with the start in the client’s zone; a second run of the job sends nothing more', async () => {
    const { u, orderId, consultationId } = await paid('sl', A)
    // Written with the payment, for an hour before the start; nothing yet.
    const id = jobId(`${startReminderQueue.name}:${consultationId}:start:${A.toISOString()}`)
    const job = await sql<{ start_after: Date }>`select start_after from ${sql.id(BOSS_SCHEMA, 'job')}
      where id = ${id}`.execute(w.deps.db)
    expect(job.rows[0]!.start_after.getTime()).toBe(A.getTime() - HOUR)
    expect(reminders(u, /starts/)).toHaveLength(0)

    await until(consultationId, () => slotOf(orderId), 30 * MIN)
    const at = await slotOf(orderId)
    const m = await w.tg.waitForSent(u.id, /⏰ Your consultation/)
    expect(m.text).toContain(`starts ${formatInstant(at, 'Europe/Moscow', 'en')}, in 30 minutes`)
    await reminderRan(consultationId, 'start', at)

    // The same job again (a retry, a duplicate): the once-key lets one message through.
    expect(await runStartReminder(w.deps, { consultationId, kind: 'start', at: at.toISOString() })).toBe(
      'sent',
    )
    await notified(`order:${orderId}:start-reminder:start:${at.getTime()}`)
    expect(reminders(u, /⏰ Your consultation/)).toHaveLength(1)
  })

  it('a moved start: no reminder for the old time, one for the new', async () => {
    const { u, orderId, consultationId } = await paid('sl', B)
    const moved = await moveStart(w.deps, w.t.desk, { orderId, userId: u.id, to: C, updateId: 910_000_001 })
    expect(moved.ok).toBe(true)
    await w.tg.waitForSent(u.id, /now starts/)
    // The old reminder's instant comes (an hour before B): it finds the start moved and sends nothing.
    const x = B.getTime() - 30 * MIN - Date.now()
    await fastForward(w.deps.db, consultationId, x)
    await reminderRan(consultationId, 'start', new Date(B.getTime() - x))
    expect(await reminderNotes(orderId)).toBe(0)
    // The new one at its time.
    await until(consultationId, () => slotOf(orderId), 20 * MIN)
    const at = await slotOf(orderId)
    const m = await w.tg.waitForSent(u.id, /⏰ Your consultation/)
    expect(m.text).toContain(`starts ${formatInstant(at, 'Europe/Moscow', 'en')}, in 20 minutes`)
    await reminderRan(consultationId, 'start', at)
    expect(reminders(u, /⏰ Your consultation/)).toHaveLength(1)
  })

  it('a cancelled start (refunded): no reminder', async () => {
    const { u, orderId, consultationId } = await paid('sl', D)
    const r = await cancelBeforeStart(w.deps, w.t.desk, { orderId, userId: u.id })
    expect(r.ok).toBe(true)
    await eventually(async () => (await orderState(w.deps, orderId)).order.state === 'refunded', 'the refund')
    await until(consultationId, () => slotOf(orderId), 30 * MIN)
    await reminderRan(consultationId, 'start', await slotOf(orderId))
    expect(await reminderNotes(orderId)).toBe(0)
    expect(reminders(u, /⏰ Your consultation/)).toHaveLength(0)
  })

  it('a slot bought less than an hour before it starts: the payment said when, no second message', async () => {
    const { u, orderId, consultationId } = await paid('soon', SOON)
    await reminderRan(consultationId, 'start', await slotOf(orderId))
    expect(await reminderNotes(orderId)).toBe(0)
    expect(reminders(u, /⏰ Your consultation/)).toHaveLength(0)
  })

  it('in Russian, with the plural of the time left', async () => {
    const { u, orderId, consultationId } = await paid('sl', A, 'ru')
    await until(consultationId, () => slotOf(orderId), 2 * MIN)
    const m = await w.tg.waitForSent(u.id, /⏰ Ваша консультация/)
    expect(m.text).toContain('через 2 минуты')
  })
})

describe('before the Start deadline of an on_request consultation', () => {
  it('a day before: once, with the deadline in the client’s zone and the Start button', async () => {
    const { u, orderId, consultationId } = await paid('later')
    await until(consultationId, () => startByOf(orderId), 12 * HOUR)
    const by = await startByOf(orderId)
    const m = await w.tg.waitForSent(u.id, /⏳ Your consultation/)
    expect(m.text).toContain(`Press “Start” by ${formatInstant(by, 'Europe/Moscow', 'en')} (in 12 hours)`)
    expect(JSON.stringify(m.reply_markup)).toContain(`ord:start:${orderId}`)
    await reminderRan(consultationId, 'deadline', by)
    expect(reminders(u, /⏳ Your consultation/)).toHaveLength(1)
  })

  it('started before the reminder’s time: no reminder', async () => {
    const { u, orderId, consultationId } = await paid('later')
    await w.tg.push(TEST_BOT_ID, w.tg.callback(u, `ord:start:${orderId}`))
    await eventually(async () => (await orderState(w.deps, orderId)).order.state === 'active', 'the start')
    // The consultation is active now; its order's deadline moves on with the clock all the same.
    await until(consultationId, () => startByOf(orderId), 12 * HOUR)
    await reminderRan(consultationId, 'deadline', await startByOf(orderId))
    expect(await reminderNotes(orderId)).toBe(0)
    expect(reminders(u, /⏳ Your consultation/)).toHaveLength(0)
  })
})

describe('the Start deadline while the desk is closed', () => {
  // A second desk world: open one hour a week, from about 12 hours from now (payments-support.ts).
  let closed: PayWorld
  const hours = openTwelveHoursAhead(60, 'hour')
  beforeAll(async () => {
    closed = await startPayWorld(hours.configure)
  })
  afterAll(() => closed?.stop())

  async function paidLater() {
    const u = closed.tg.user({ language_code: 'en' })
    const o = await buy(closed, u, 'later')
    expect((await preCheckout(closed, u, o)).ok).toBe(true)
    await pay(closed, u, o)
    await closed.tg.waitForSent(u.id, /Payment received/)
    const s = await orderState(closed.deps, o.orderId)
    return { u, orderId: o.orderId, consultationId: s.consultation!.id }
  }
  const startBy = async (orderId: number) => (await orderState(closed.deps, orderId)).order.start_by!

  it('says when the desk opens (Start works while it is open)', async () => {
    const { u, orderId, consultationId } = await paidLater()
    const at = await startBy(orderId)
    await fastForward(closed.deps.db, consultationId, at.getTime() - 20 * HOUR - Date.now())
    const m = await closed.tg.waitForSent(u.id, /⏳ Your consultation/)
    expect(m.text).toContain(
      `The desk is closed now: Start works while it is open, next from ${formatInstant(hours.opening.toJSDate(), 'Europe/Moscow', 'en')}.`,
    )
  })

  it('closed until after the deadline: no "press Start" that cannot be pressed in time', async () => {
    const { u, orderId, consultationId } = await paidLater()
    const at = await startBy(orderId)
    const x = at.getTime() - 6 * HOUR - Date.now()
    await fastForward(closed.deps.db, consultationId, x)
    const id = String(consultationId)
    await eventually(async () => {
      const r = await sql<{ state: string }>`select state from ${sql.id(BOSS_SCHEMA, 'job')}
        where name = ${startReminderQueue.name} and data->>'consultationId' = ${id} and data->>'kind' = 'deadline'`.execute(
        closed.deps.db,
      )
      return r.rows[0]?.state === 'completed'
    }, 'the deadline reminder job')
    const notes = await sql<{ n: number }>`select count(*)::int as n from ${sql.id(BOSS_SCHEMA, 'job')}
      where name = 'tg.notify' and data->>'dedupeKey' like ${`order:${orderId}:start-reminder:%`}`.execute(
      closed.deps.db,
    )
    expect(notes.rows[0]!.n).toBe(0)
    expect(closed.tg.texts(u.id).filter((t) => /⏳/.test(t ?? ''))).toHaveLength(0)
  })
})
