// Longer than ~400 lines: the ledger's whole contract (reserve, settle, grants and carry-over, periods, replays,
// refusals with numbers, invariants) against one database and one set of fixtures; each describe block is a rule.

import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDb } from '../../src/db/pool'
import { Jobs } from '../../src/jobs/jobs'
import { ledgerSweepQueue, startLedgerSweeper } from '../../src/ledger/ledger.jobs'
import { RESERVATION_TRANSITIONS } from '../../src/ledger/ledger.model'
import { dailyPeriod, monthlyPeriod, nextMonthlyPeriod } from '../../src/ledger/ledger.periods'
import { findReservation, listJournal } from '../../src/ledger/ledger.repository'
import { Ledger } from '../../src/ledger/ledger.service'
import { quietLogger } from '../../src/log'
import { createTestDatabase, type TestDatabase } from '../support/db'
import { account, expectInvariants, uid, WIDE } from './ledger.fixtures'

let t: TestDatabase
let ledger: Ledger

beforeAll(async () => {
  t = await createTestDatabase()
  ledger = new Ledger(t.db)
})
afterAll(() => t.drop())

const one = (accountId: number, amount = 1) => [{ account: { accountId }, amount }]

async function journalCount(requestId: string): Promise<number> {
  const r = await sql<{ n: number }>`
    select count(*)::int as n from ledger_journal where request_id = ${requestId}`.execute(t.db)
  return r.rows[0]!.n
}

describe('ledger: multi-account admission', () => {
  it('admits on all accounts or none: one short account reserves nothing anywhere', async () => {
    const consultation = uid('c')
    const allowance = await account(ledger, 5, {
      scope: 'consultation',
      subject: consultation,
      unit: 'drafts',
    })
    const expertCap = await account(ledger, 10, { scope: 'expert', unit: 'drafts' })
    const budget = await account(ledger, 100, { scope: 'desk', unit: 'money' })
    const lines = (money: number) => [
      { account: { scope: 'consultation', subject: consultation, unit: 'drafts' }, amount: 1 },
      { account: { accountId: expertCap }, amount: 1 },
      { account: { accountId: budget }, amount: money },
    ]

    const refused = await ledger.reserve({ requestId: uid('draft'), lines: lines(500) })
    expect(refused.admitted).toBe(false)
    if (refused.admitted) return
    expect(refused.reason).toBe('exhausted')
    expect(refused.line).toBe(2)
    expect(refused.account).toMatchObject({ accountId: budget, granted: 100, reserved: 0, available: 100 })
    expect(refused.state).toBe('refused')
    for (const id of [allowance, expertCap, budget])
      expect(await ledger.balance({ accountId: id })).toMatchObject({ reserved: 0, used: 0, activeHolds: 0 })
    expect(await journalCount(refused.requestId)).toBe(0)

    const ok = await ledger.reserve({ requestId: uid('draft'), lines: lines(50) })
    expect(ok.admitted).toBe(true)
    if (!ok.admitted) return
    // Key lines are pinned to the resolved account; the admission reports the numbers after its hold.
    expect(ok.lines.map((l) => l.account?.accountId)).toEqual([allowance, expertCap, budget])
    expect(ok.lines[2]!.account).toMatchObject({ reserved: 50, available: 50, activeHolds: 1 })
    const c = await ledger.commit(ok.requestId, [1, 1, 37])
    expect(c).toMatchObject({ ok: true, charged: [1, 1, 37], overrun: false })
    expect(await ledger.balance({ accountId: budget })).toMatchObject({
      reserved: 0,
      used: 37,
      available: 63,
    })
    expect(await ledger.balance({ accountId: allowance })).toMatchObject({ used: 1, available: 4 })
    // One actual for a three-line reservation is ambiguous: a conflict, nothing changes.
    const ok2 = await ledger.reserve({ requestId: uid('draft'), lines: lines(10) })
    expect(await ledger.commit(ok2.requestId, 10)).toMatchObject({ ok: false, reason: 'conflict' })
    await expectInvariants(t.db)
  })

  it('refuses unknown accounts and inactive ones, with the line that refused', async () => {
    const none = await ledger.reserve({
      requestId: uid('r'),
      lines: [{ account: { scope: 'nobody', subject: 1, unit: 'appeals' }, amount: 1 }],
    })
    expect(none).toMatchObject({ admitted: false, reason: 'no_account', line: 0, account: null })
    const missingId = await ledger.reserve({ requestId: uid('r'), lines: one(987654321) })
    expect(missingId).toMatchObject({ admitted: false, reason: 'no_account' })

    const id = await account(ledger, 3)
    await t.db.transaction().execute((trx) => ledger.in(trx).setActive(id, false))
    const inactive = await ledger.reserve({ requestId: uid('r'), lines: one(id) })
    expect(inactive).toMatchObject({ admitted: false, reason: 'inactive', line: 0 })
    expect(!inactive.admitted && inactive.account).toMatchObject({ accountId: id, granted: 3, available: 3 })

    // A window that has not started (or has ended) is inactive too.
    const g = await ledger.grant({
      requestId: uid('g'),
      scope: 'consultation',
      subject: uid('c'),
      unit: 'appeals',
      periodStart: new Date('2090-01-01T00:00:00Z'),
      periodEnd: new Date('2090-01-02T00:00:00Z'),
      amount: 3,
    })
    expect(g.ok).toBe(true)
    if (!g.ok) return
    expect(await ledger.reserve({ requestId: uid('r'), lines: one(g.accountId) })).toMatchObject({
      admitted: false,
      reason: 'inactive',
    })
    await expectInvariants(t.db)
  })

  it('rejects malformed requests before touching the database', async () => {
    await expect(ledger.reserve({ requestId: '', lines: one(1) })).rejects.toThrow(/request id/)
    await expect(ledger.reserve({ requestId: 'x', lines: one(1, 0) })).rejects.toThrow(/positive/)
    await expect(ledger.reserve({ requestId: 'x', lines: one(1, 1.5) })).rejects.toThrow(/positive/)
    await expect(ledger.reserve({ requestId: 'x', lines: [...one(1), ...one(1)] })).rejects.toThrow(/twice/)
  })
})

describe('ledger: replay and conflict', () => {
  it('a replayed admission returns the original numbers and creates nothing', async () => {
    const id = await account(ledger, 3)
    const requestId = uid('q')
    const first = await ledger.reserve({ requestId, lines: one(id) })
    expect(first).toMatchObject({ admitted: true, replayed: false, state: 'reserved' })
    const journal = await journalCount(requestId)
    await ledger.reserve({ requestId: uid('q'), lines: one(id) }) // the account changes meanwhile

    const again = await ledger.reserve({ requestId, lines: one(id) })
    expect(again).toMatchObject({ admitted: true, replayed: true })
    expect(again.lines).toEqual(first.lines)
    expect(await journalCount(requestId)).toBe(journal)
    expect(await ledger.balance({ accountId: id })).toMatchObject({ reserved: 2, activeHolds: 2 })

    // After commit, a replay still answers "admitted", and reports the current state.
    await ledger.commit(requestId)
    expect(await ledger.reserve({ requestId, lines: one(id) })).toMatchObject({
      admitted: true,
      state: 'committed',
    })
    await expectInvariants(t.db)
  })

  it('a replayed refusal returns the same refusal with the same numbers, even after a top-up', async () => {
    const subject = uid('s')
    const id = await account(ledger, 1, { subject })
    await ledger.commit((await ledger.reserve({ requestId: uid('q'), lines: one(id) })).requestId)
    const requestId = uid('q')
    const refused = await ledger.reserve({ requestId, lines: one(id) })
    expect(refused).toMatchObject({ admitted: false, reason: 'exhausted', replayed: false })
    await ledger.grant({
      requestId: uid('topup'),
      scope: 'test',
      subject,
      unit: 'appeals',
      amount: 5,
      ...WIDE,
    })

    const again = await ledger.reserve({ requestId, lines: one(id) })
    expect(again).toMatchObject({ admitted: false, reason: 'exhausted', replayed: true })
    if (again.admitted || refused.admitted) return
    expect(again.account).toEqual(refused.account)
    expect(again.account).toMatchObject({ granted: 1, used: 1, available: 0 })
    await expectInvariants(t.db)
  })

  it('the same request id with another amount or other accounts is a conflict, not an overwrite', async () => {
    const a = await account(ledger, 10)
    const b = await account(ledger, 10)
    const requestId = uid('q')
    await ledger.reserve({ requestId, lines: one(a, 2) })
    const amount = await ledger.reserve({ requestId, lines: one(a, 3) })
    expect(amount).toMatchObject({ admitted: false, reason: 'conflict', state: 'reserved' })
    const accounts = await ledger.reserve({ requestId, lines: one(b, 2) })
    expect(accounts).toMatchObject({ admitted: false, reason: 'conflict' })
    expect(await ledger.balance({ accountId: a })).toMatchObject({ reserved: 2 })
    expect(await ledger.balance({ accountId: b })).toMatchObject({ reserved: 0 })
    await expectInvariants(t.db)
  })
})

describe('ledger: settling', () => {
  it('commit twice: the same actual is a no-op, another actual is a conflict; moves outside the table refuse', async () => {
    const id = await account(ledger, 10, { unit: 'tokens' })
    const requestId = uid('d')
    await ledger.reserve({ requestId, lines: one(id, 5) })
    const first = await ledger.commit(requestId, 4)
    expect(first).toMatchObject({ ok: true, replayed: false, actuals: [4], charged: [4] })
    expect(first.ok && first.accounts[0]).toMatchObject({ reserved: 0, used: 4, available: 6 })
    const journal = await journalCount(requestId)

    expect(await ledger.commit(requestId, 4)).toMatchObject({ ok: true, replayed: true, state: 'committed' })
    expect(await ledger.commit(requestId, 5)).toMatchObject({
      ok: false,
      reason: 'conflict',
      state: 'committed',
      actuals: [4],
    })
    expect(await ledger.release(requestId)).toMatchObject({ ok: false, reason: 'invalid_transition' })
    expect(await ledger.markUnknown(requestId)).toMatchObject({ ok: false, reason: 'invalid_transition' })
    expect(await journalCount(requestId)).toBe(journal)
    expect(await ledger.commit(uid('missing'))).toMatchObject({ ok: false, reason: 'not_found' })

    const released = uid('d')
    await ledger.reserve({ requestId: released, lines: one(id, 2) })
    expect(await ledger.release(released)).toMatchObject({ ok: true, replayed: false, state: 'released' })
    expect(await ledger.release(released)).toMatchObject({ ok: true, replayed: true })
    expect(await ledger.commit(released)).toMatchObject({ ok: false, reason: 'invalid_transition' })
    expect(await ledger.balance({ accountId: id })).toMatchObject({ reserved: 0, used: 4 })
    await expectInvariants(t.db)
  })

  it('cap policy charges at most the reservation, records the actual and flags the overrun', async () => {
    const capped = new Ledger(t.db, { overrunPolicy: 'cap' })
    const id = await account(ledger, 100, { unit: 'money' })
    const requestId = uid('d')
    await capped.reserve({ requestId, lines: one(id, 30) })
    const c = await capped.commit(requestId, 45)
    expect(c).toMatchObject({ ok: true, actuals: [45], charged: [30], overrun: true })
    expect(await ledger.balance({ accountId: id })).toMatchObject({ reserved: 0, used: 30 })
    const row = await findReservation(t.db, requestId)
    expect(row).toMatchObject({
      state: 'committed',
      prev_state: 'reserved',
      actuals: [45],
      charged: [30],
      overrun: true,
    })
    await expectInvariants(t.db)
  })

  it('unknown keeps the hold until reconciled; then commit (or release) settles it', async () => {
    const id = await account(ledger, 3)
    const requestId = uid('d')
    await ledger.reserve({ requestId, lines: one(id) })
    expect(await ledger.markUnknown(requestId, { note: 'timeout after sending' })).toMatchObject({
      ok: true,
      state: 'unknown',
    })
    expect(await ledger.markUnknown(requestId)).toMatchObject({ ok: true, replayed: true })
    expect(await ledger.balance({ accountId: id })).toMatchObject({ reserved: 1, activeHolds: 1 })
    expect((await ledger.unknownReservations()).map((r) => r.requestId)).toContain(requestId)
    expect(await ledger.reservation(requestId)).toMatchObject({
      state: 'unknown',
      prevState: 'reserved',
      accountIds: [id],
      amounts: [1],
      note: 'timeout after sending',
    })
    expect(await ledger.commit(requestId)).toMatchObject({ ok: true, state: 'committed' })
    expect(await ledger.reservation(uid('none'))).toBeNull()
    expect((await findReservation(t.db, requestId))?.prev_state).toBe('unknown')
    await expectInvariants(t.db)
  })

  it('has one transition table, in code and in the database', async () => {
    const rows = await t.db
      .selectFrom('ledger_transition')
      .selectAll()
      .orderBy('from_state')
      .orderBy('to_state')
      .execute()
    const fromCode = Object.entries(RESERVATION_TRANSITIONS)
      .flatMap(([from, tos]) => tos.map((to) => ({ from_state: from, to_state: to })))
      .sort((x, y) => (x.from_state + x.to_state).localeCompare(y.from_state + y.to_state))
    expect(rows).toEqual(fromCode)
  })
})

describe('ledger: periods, grants and rollover', () => {
  const tz = 'Europe/Moscow'

  it('cuts monthly and daily periods in the desk time zone', () => {
    const nov = monthlyPeriod(new Date('2026-11-30T20:59:00Z'), tz) // 23:59 on 30 Nov in Moscow
    expect(nov.start.toISOString()).toBe('2026-10-31T21:00:00.000Z')
    expect(nov.end.toISOString()).toBe('2026-11-30T21:00:00.000Z')
    expect(nextMonthlyPeriod(nov, tz).start.toISOString()).toBe('2026-11-30T21:00:00.000Z')
    expect(monthlyPeriod(new Date('2026-11-30T21:00:00Z'), tz).start.toISOString()).toBe(
      '2026-11-30T21:00:00.000Z',
    )
    const dstDay = dailyPeriod(new Date('2026-03-29T12:00:00Z'), 'Europe/Berlin')
    expect(dstDay.end.getTime() - dstDay.start.getTime()).toBe(23 * 3600_000)
    expect(() => monthlyPeriod(new Date(), 'Mars/Olympus')).toThrow(/IANA/)
  })

  it('grants idempotently by request id; another grant under the same id is a conflict', async () => {
    const subject = uid('desk')
    const p = monthlyPeriod(new Date('2026-11-15T12:00:00Z'), tz)
    const g = {
      requestId: uid('pay'),
      scope: 'desk',
      subject,
      unit: 'money',
      periodStart: p.start,
      periodEnd: p.end,
    }
    const first = await ledger.grant({ ...g, amount: 1000, timeZone: tz })
    const again = await ledger.grant({ ...g, amount: 1000, timeZone: tz })
    expect(first).toMatchObject({ ok: true, replayed: false, amount: 1000 })
    expect(again).toMatchObject({ ok: true, replayed: true, amount: 1000 })
    expect(again.ok && again.account.granted).toBe(1000)
    expect(await ledger.grant({ ...g, amount: 999 })).toMatchObject({ ok: false, reason: 'conflict' })
    expect(
      await ledger.grant({
        ...g,
        requestId: uid('pay'),
        periodEnd: new Date(p.end.getTime() + 1),
        amount: 1,
      }),
    ).toMatchObject({ ok: false, reason: 'period_mismatch' })
    // A zero grant gets the account without adding.
    expect(await ledger.grant({ ...g, requestId: uid('open'), amount: 0 })).toMatchObject({
      ok: true,
      accountId: first.ok ? first.accountId : -1,
      account: { granted: 1000 },
    })
    await expectInvariants(t.db)
  })

  it('a reservation from the old period commits into it after rollover; carry-over is capped and happens once', async () => {
    const subject = uid('client')
    const key = { scope: 'client', subject, unit: 'appeals' }
    const nov = monthlyPeriod(new Date('2026-11-15T12:00:00Z'), tz)
    const dec = nextMonthlyPeriod(nov, tz)
    const g1 = await ledger.grant({
      requestId: uid('g'),
      ...key,
      periodStart: nov.start,
      periodEnd: nov.end,
      amount: 5,
      timeZone: tz,
    })
    if (!g1.ok) throw new Error('grant')

    // 23:59 on 30 Nov in Moscow: the key resolves to November's account.
    const lastMinute = new Date('2026-11-30T20:59:00Z')
    const used = await ledger.reserve({
      requestId: uid('q'),
      lines: [{ account: key, amount: 1 }],
      at: lastMinute,
    })
    await ledger.commit(used.requestId)
    const late = await ledger.reserve({
      requestId: uid('q'),
      lines: [{ account: key, amount: 1 }],
      at: lastMinute,
    })
    expect(late.admitted && late.lines[0]!.account).toMatchObject({
      accountId: g1.accountId,
      periodEndLocal: '2026-12-01T00:00:00.000+03:00',
    })

    // December is granted with carry-over capped at 2 (November has 3 unused): 2 move over, once.
    const g2 = await ledger.grant({
      requestId: uid('g'),
      ...key,
      periodStart: dec.start,
      periodEnd: dec.end,
      amount: 5,
      timeZone: tz,
      carryOver: { kind: 'capped', max: 2 },
    })
    expect(g2).toMatchObject({ ok: true, carried: 2, carriedFrom: g1.accountId, account: { granted: 7 } })
    const topUp = await ledger.grant({
      requestId: uid('g'),
      ...key,
      periodStart: dec.start,
      periodEnd: dec.end,
      amount: 1,
      carryOver: { kind: 'capped', max: 2 },
    })
    expect(topUp).toMatchObject({ ok: true, carried: 0, account: { granted: 8 } })

    // The November hold commits after the rollover: into November, not December.
    const c = await ledger.commit(late.requestId)
    expect(c.ok && c.accounts[0]).toMatchObject({ accountId: g1.accountId })
    expect(await ledger.balance({ accountId: g1.accountId })).toMatchObject({
      granted: 3,
      reserved: 0,
      used: 2,
    })
    expect(await ledger.balance(key, new Date('2026-12-01T09:00:00Z'))).toMatchObject({
      granted: 8,
      reserved: 0,
      used: 0,
    })
    const jr = await listJournal(t.db, g1.accountId)
    expect(jr.map((r) => r.reason)).toEqual(['grant', 'reserve', 'commit', 'reserve', 'rollover', 'commit'])
    await expectInvariants(t.db)
  })

  it("a line can be taken from its own instant's period: all or none still holds across the periods", async () => {
    // A consultation window 10:00-12:00 with 2 drafts, and an expert account open all along.
    const windowKey = { scope: 'consultation', subject: uid('c'), unit: 'drafts' }
    const g = await ledger.grant({
      requestId: uid('g'),
      ...windowKey,
      periodStart: new Date('2026-11-30T10:00:00Z'),
      periodEnd: new Date('2026-11-30T12:00:00Z'),
      amount: 2,
    })
    if (!g.ok) throw new Error('grant')
    const expert = await account(ledger, 10, { scope: 'expert', unit: 'drafts' })
    const after = new Date('2026-11-30T13:00:00Z') // the window has closed
    const accepted = new Date('2026-11-30T11:59:00Z') // the question was accepted inside it

    const noLineInstant = await ledger.reserve({
      requestId: uid('d'),
      lines: [
        { account: windowKey, amount: 1 },
        { account: { accountId: expert }, amount: 1 },
      ],
      at: after,
    })
    expect(noLineInstant).toMatchObject({ admitted: false, reason: 'no_account', line: 0 })

    // Several lines (the full path): the window's line at its own instant, the expert's at the request's.
    const two = await ledger.reserve({
      requestId: uid('d'),
      lines: [
        { account: windowKey, amount: 1, at: accepted },
        { account: { accountId: expert }, amount: 1 },
      ],
      at: after,
    })
    expect(two.admitted).toBe(true)
    if (!two.admitted) return
    expect(two.lines.map((l) => l.account!.accountId)).toEqual([g.accountId, expert])
    // One line (the fast path), and a line instant outside every period refuses as before.
    const one = await ledger.reserve({
      requestId: uid('d'),
      lines: [{ account: windowKey, amount: 1, at: accepted }],
      at: after,
    })
    expect(one.admitted && one.lines[0]!.account!.accountId).toBe(g.accountId)
    const outside = await ledger.reserve({
      requestId: uid('d'),
      lines: [{ account: { accountId: g.accountId }, amount: 1, at: after }],
    })
    expect(outside).toMatchObject({ admitted: false, reason: 'inactive' })
    expect(await ledger.balance({ accountId: g.accountId })).toMatchObject({ reserved: 2, used: 0 })
    expect(await ledger.balance({ accountId: expert })).toMatchObject({ reserved: 1 })
    await expectInvariants(t.db)
  })

  it('without carry-over the old period keeps its units', async () => {
    const key = { scope: 'client', subject: uid('client'), unit: 'appeals' }
    const nov = monthlyPeriod(new Date('2026-11-15T12:00:00Z'), tz)
    const dec = nextMonthlyPeriod(nov, tz)
    const g1 = await ledger.grant({
      requestId: uid('g'),
      ...key,
      periodStart: nov.start,
      periodEnd: nov.end,
      amount: 5,
    })
    const g2 = await ledger.grant({
      requestId: uid('g'),
      ...key,
      periodStart: dec.start,
      periodEnd: dec.end,
      amount: 5,
      carryOver: { kind: 'none' },
    })
    expect(g1.ok && g1.account.granted).toBe(5)
    expect(g2).toMatchObject({ ok: true, carried: 0, carriedFrom: null, account: { granted: 5 } })
  })
})

describe('ledger: the sweeper', () => {
  it('expires an abandoned hold, never an unknown one and never one still within its TTL', async () => {
    const id = await account(ledger, 10)
    const abandoned = uid('abandoned')
    const unknown = uid('unknown')
    const fresh = uid('fresh')
    const key = uid('conc')
    await ledger.reserve({
      requestId: abandoned,
      lines: one(id, 2),
      ttlSeconds: 0,
      concurrency: { key, max: 5 },
    })
    await ledger.reserve({ requestId: unknown, lines: one(id, 3), ttlSeconds: 0 })
    await ledger.markUnknown(unknown)
    await ledger.reserve({ requestId: fresh, lines: one(id, 1), ttlSeconds: 3600 })

    const expired = await ledger.expireDue(1000)
    expect(expired).toContain(abandoned)
    expect(expired).not.toContain(unknown)
    expect(expired).not.toContain(fresh)
    expect((await findReservation(t.db, abandoned))?.state).toBe('expired')
    expect((await findReservation(t.db, unknown))?.state).toBe('unknown')
    expect(await ledger.balance({ accountId: id })).toMatchObject({ reserved: 4, activeHolds: 2 })
    const jr = await listJournal(t.db, id)
    expect(jr.filter((r) => r.reason === 'expire')).toMatchObject([{ request_id: abandoned, d_reserved: -2 }])
    // A late commit of an expired hold is refused for review, not silently applied.
    expect(await ledger.commit(abandoned)).toMatchObject({
      ok: false,
      reason: 'invalid_transition',
      state: 'expired',
    })
    expect(await ledger.expireDue(1000)).not.toContain(unknown)
    await expectInvariants(t.db)
  })

  it('runs as a pg-boss scheduled job', async () => {
    const jobs = Jobs.create(t.url, [ledgerSweepQueue], quietLogger(), { schedule: false })
    await jobs.start()
    try {
      await startLedgerSweeper(jobs, ledger)
      const id = await account(ledger, 1)
      const requestId = uid('job')
      await ledger.reserve({ requestId, lines: one(id), ttlSeconds: 0 })
      await jobs.transaction(t.db, (_trx, outbox) => outbox.send(ledgerSweepQueue, {}))
      // Wait for the job's effect (no fixed sleep: poll the state until it changes or the test times out).
      while ((await findReservation(t.db, requestId))?.state !== 'expired')
        await new Promise((r) => setTimeout(r, 50))
      const schedules = await jobs.boss.getSchedules()
      expect(schedules.map((s) => s.name)).toContain(ledgerSweepQueue.name)
    } finally {
      await jobs.stop()
    }
    await expectInvariants(t.db)
  })
})

describe("ledger: inside the caller's transaction", () => {
  it('a refusal does not abort the caller; everything commits together', async () => {
    const empty = await account(ledger, 0)
    const full = await account(ledger, 2)
    const a = uid('in')
    const b = uid('in')
    await t.db.transaction().execute(async (trx) => {
      const l = ledger.in(trx)
      expect(await l.reserve({ requestId: a, lines: one(empty) })).toMatchObject({
        admitted: false,
        reason: 'exhausted',
      })
      expect(await l.reserve({ requestId: b, lines: one(full) })).toMatchObject({ admitted: true })
      expect(await l.commit(uid('nothing'))).toMatchObject({ ok: false, reason: 'not_found' })
      await trx.insertInto('processed_update').values({ bot_id: 1, update_id: Date.now() }).execute()
    })
    expect((await findReservation(t.db, a))?.state).toBe('refused')
    expect((await findReservation(t.db, b))?.state).toBe('reserved')
    await expectInvariants(t.db)
  })

  it("the caller's rollback undoes the reservation", async () => {
    const id = await account(ledger, 2)
    const requestId = uid('in')
    await expect(
      t.db.transaction().execute(async (trx) => {
        expect(await ledger.in(trx).reserve({ requestId, lines: one(id) })).toMatchObject({ admitted: true })
        throw new Error('the caller failed later')
      }),
    ).rejects.toThrow(/caller failed/)
    expect(await findReservation(t.db, requestId)).toBeUndefined()
    expect(await ledger.balance({ accountId: id })).toMatchObject({ reserved: 0 })
  })

  it('adjusts with a journal row and refuses to go negative', async () => {
    const id = await account(ledger, 5)
    await t.db.transaction().execute(async (trx) => {
      expect(await ledger.in(trx).adjust({ accountId: id, dGranted: 2, note: 'goodwill' })).toMatchObject({
        granted: 7,
      })
      expect(await ledger.in(trx).adjust({ accountId: id, dGranted: -100, note: 'too much' })).toBeNull()
    })
    await expectInvariants(t.db)
  })
})

describe('ledger: database down', () => {
  it('reserve returns "temporarily unavailable" and admits nothing', async () => {
    const id = await account(ledger, 1)
    // A pool pointing at a closed port: every checkout fails.
    const down = createDb('postgres://postgres:postgres@127.0.0.1:1/nowhere', 1)
    try {
      const l = new Ledger(down.db)
      const requestId = uid('down')
      const r = await l.reserve({ requestId, lines: one(id) })
      expect(r).toMatchObject({ admitted: false, reason: 'unavailable', requestId })
      expect(await l.commit(requestId)).toMatchObject({ ok: false, reason: 'unavailable' })
      expect(await l.release(requestId)).toMatchObject({ ok: false, reason: 'unavailable' })
      expect(
        await l.grant({ requestId: uid('g'), scope: 'x', subject: 1, unit: 'u', amount: 1, ...WIDE }),
      ).toMatchObject({ ok: false, reason: 'unavailable' })
      expect(await findReservation(t.db, requestId)).toBeUndefined()
      expect(await ledger.balance({ accountId: id })).toMatchObject({ reserved: 0, available: 1 })
    } finally {
      await down.close()
    }
  })

  it('a failing transaction is "unavailable" too', async () => {
    const id = await account(ledger, 1)
    const blocker = createDb(t.url, 1)
    // A session whose statements give up after 100 ms, while another transaction holds the account's row lock.
    const impatient = createDb(`${t.url}?options=-c%20statement_timeout%3D100`, 1)
    try {
      const requestId = uid('fail')
      await blocker.db.transaction().execute(async (trx) => {
        await sql`select 1 from ledger_account where id = ${id} for update`.execute(trx)
        const r = await new Ledger(impatient.db).reserve({ requestId, lines: one(id) })
        expect(r).toMatchObject({ admitted: false, reason: 'unavailable' })
      })
      expect(await findReservation(t.db, requestId)).toBeUndefined()
      expect(await ledger.balance({ accountId: id })).toMatchObject({ reserved: 0 })
    } finally {
      await impatient.close()
      await blocker.close()
    }
  })
})
