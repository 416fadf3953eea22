import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DbHandle } from '../../src/db/pool'
import { Ledger } from '../../src/ledger/ledger.service'
import { createTestDatabase, type TestDatabase } from '../support/db'
import { account, expectInvariants, separateConnections, uid, warmPool } from './ledger.fixtures'

/**
 * Concurrent admission against real PostgreSQL: every contender has its own connection, and all start together
 * (connections opened beforehand, requests issued in the same tick), so the database sees a real race.
 */
let t: TestDatabase
let ledger: Ledger
const extra: DbHandle[] = []

beforeAll(async () => {
  t = await createTestDatabase()
  ledger = new Ledger(t.db)
})
afterAll(async () => {
  await Promise.all(extra.map((h) => h.close()))
  await t.drop()
})

async function connections(n: number): Promise<Ledger[]> {
  const hs = await separateConnections(t.url, n)
  extra.push(...hs)
  return hs.map((h) => new Ledger(h.db))
}

describe('ledger: the last unit', () => {
  it('two concurrent reserves on balance 1 from separate connections admit exactly one, 1,000 times', async () => {
    const [a, b] = await connections(2)
    const rounds = 1000
    const ids: number[] = []
    // Accounts first (ten at a time), so each round is only the race.
    for (let i = 0; i < rounds; i += 10)
      ids.push(...(await Promise.all(Array.from({ length: 10 }, () => account(ledger, 1)))))

    let admittedA = 0
    for (let i = 0; i < rounds; i++) {
      const lines = [{ account: { accountId: ids[i]! }, amount: 1 }]
      const [ra, rb] = await Promise.all([
        a!.reserve({ requestId: `race-${i}-a`, lines }),
        b!.reserve({ requestId: `race-${i}-b`, lines }),
      ])
      const admitted = [ra, rb].filter((r) => r.admitted)
      expect(admitted.length, `round ${i}`).toBe(1)
      const loser = ra.admitted ? rb : ra
      if (loser.admitted) throw new Error('unreachable')
      // The loser is told why, with the numbers: the last unit is held by the winner's request.
      expect(loser.reason).toBe('held_by_active')
      expect(loser.account).toMatchObject({ granted: 1, reserved: 1, used: 0, available: 0, activeHolds: 1 })
      if (ra.admitted) admittedA++
    }
    // Both connections won some rounds: the race was real, not one side always first.
    expect(admittedA).toBeGreaterThan(0)
    expect(admittedA).toBeLessThan(rounds)

    const r = await sql<{ n: number }>`
      select count(*)::int as n from ledger_reservation where request_id like 'race-%' and state = 'reserved'`.execute(
      t.db,
    )
    expect(r.rows[0]!.n).toBe(rounds)
    await expectInvariants(t.db)
  })

  it('20 concurrent reserves on balance 1 admit exactly one (25 rounds)', async () => {
    const pool = await warmPool(t.url, 20)
    extra.push(pool)
    const many = new Ledger(pool.db)
    for (let round = 0; round < 25; round++) {
      const id = await account(ledger, 1)
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          many.reserve({
            requestId: `twenty-${round}-${i}`,
            lines: [{ account: { accountId: id }, amount: 1 }],
          }),
        ),
      )
      expect(results.filter((r) => r.admitted).length).toBe(1)
      const bal = await ledger.balance({ accountId: id })
      expect(bal).toMatchObject({ granted: 1, reserved: 1, used: 0, available: 0, activeHolds: 1 })
    }
    await expectInvariants(t.db)
  })
})

describe('ledger: seed 002 (cap 100, 20 workers reserving 30 at once)', () => {
  it('admits exactly 3, holds 90; then commit 20, commit 45 (overrun), release one: counters and journal agree', async () => {
    const workers = await connections(20)
    const id = await account(ledger, 100, { unit: 'money' })
    const results = await Promise.all(
      workers.map((w, i) =>
        w.reserve({ requestId: `seed002-${i}`, lines: [{ account: { accountId: id }, amount: 30 }] }),
      ),
    )
    const admitted = results.filter((r) => r.admitted)
    expect(admitted.length).toBe(3)
    for (const r of results)
      if (!r.admitted) {
        // 10 left: releasing the holds would make room, so the reason is the holds, with the numbers.
        expect(r.reason).toBe('held_by_active')
        expect(r.account).toMatchObject({
          granted: 100,
          reserved: 90,
          used: 0,
          available: 10,
          activeHolds: 3,
        })
      }
    expect(await ledger.balance({ accountId: id })).toMatchObject({ reserved: 90, used: 0, available: 10 })
    await expectInvariants(t.db)

    const [x, y, z] = admitted.map((r) => r.requestId)
    const c1 = await ledger.commit(x!, 20)
    expect(c1).toMatchObject({ ok: true, state: 'committed', actuals: [20], charged: [20], overrun: false })
    const c2 = await ledger.commit(y!, 45)
    // allow (the default): the overrun is charged in full and flagged, never hidden.
    expect(c2).toMatchObject({ ok: true, state: 'committed', actuals: [45], charged: [45], overrun: true })
    const r3 = await ledger.release(z!)
    expect(r3).toMatchObject({ ok: true, state: 'released' })
    expect(r3.ok && r3.accounts[0]).toMatchObject({
      granted: 100,
      reserved: 0,
      used: 65,
      available: 35,
      activeHolds: 0,
    })

    const j = await sql<{ g: number; r: number; u: number }>`
      select sum(d_granted)::int as g, sum(d_reserved)::int as r, sum(d_used)::int as u
      from ledger_journal where account_id = ${id}`.execute(t.db)
    expect(j.rows[0]).toEqual({ g: 100, r: 0, u: 65 })
    await expectInvariants(t.db)
  })
})

describe('ledger: concurrency limit', () => {
  it('N+5 simultaneous requests with ample balance: exactly N admitted; a freed slot admits the next', async () => {
    const N = 3
    const workers = await connections(N + 5)
    const id = await account(ledger, 1000, { unit: 'drafts' })
    const key = uid('drafts:expert')
    const results = await Promise.all(
      workers.map((w, i) =>
        w.reserve({
          requestId: `conc-${key}-${i}`,
          lines: [{ account: { accountId: id }, amount: 1 }],
          concurrency: { key, max: N },
        }),
      ),
    )
    expect(results.filter((r) => r.admitted).length).toBe(N)
    for (const r of results)
      if (!r.admitted) {
        expect(r.reason).toBe('over_concurrency')
        expect(r.concurrency).toEqual({ key, active: N, max: N })
      }
    await expectInvariants(t.db)

    const first = results.find((r) => r.admitted)!
    expect((await ledger.release(first.requestId)).ok).toBe(true)
    const next = await ledger.reserve({
      requestId: `conc-${key}-next`,
      lines: [{ account: { accountId: id }, amount: 1 }],
      concurrency: { key, max: N },
    })
    expect(next.admitted).toBe(true)
    // An outcome-unknown request keeps its hold but no longer counts as running.
    const second = results.filter((r) => r.admitted)[1]!
    expect((await ledger.markUnknown(second.requestId)).ok).toBe(true)
    const after = await ledger.reserve({
      requestId: `conc-${key}-after-unknown`,
      lines: [{ account: { accountId: id }, amount: 1 }],
      concurrency: { key, max: N },
    })
    expect(after.admitted).toBe(true)
    expect(await ledger.balance({ accountId: id })).toMatchObject({ reserved: 4, activeHolds: 4 })
    await expectInvariants(t.db)
  })
})

describe('ledger: replays under concurrency', () => {
  it('the same new request id from 10 connections at once: one hold, one decision, nine replays', async () => {
    const workers = await connections(10)
    const id = await account(ledger, 5)
    const requestId = uid('dup')
    const results = await Promise.all(
      workers.map((w) => w.reserve({ requestId, lines: [{ account: { accountId: id }, amount: 2 }] })),
    )
    expect(results.every((r) => r.admitted)).toBe(true)
    expect(results.filter((r) => !r.replayed).length).toBe(1)
    const lines = results.map((r) => r.lines)
    for (const l of lines) expect(l).toEqual(lines[0])
    expect(await ledger.balance({ accountId: id })).toMatchObject({ reserved: 2, activeHolds: 1 })
    await expectInvariants(t.db)
  })
})

describe('ledger: two sweepers at once', () => {
  it('release each abandoned hold exactly once', async () => {
    const [s1, s2] = await connections(2)
    const ids = await Promise.all(Array.from({ length: 5 }, () => account(ledger, 1000)))
    const holds = 200
    for (let i = 0; i < holds; i += 20)
      await Promise.all(
        Array.from({ length: 20 }, (_, k) =>
          ledger.reserve({
            requestId: `sweep2-${i + k}`,
            lines: [{ account: { accountId: ids[(i + k) % 5]! }, amount: 3 }],
            concurrency: { key: `sweep2-${(i + k) % 3}`, max: 1000 },
            ttlSeconds: 0,
          }),
        ),
      )
    const [a, b] = await Promise.all([s1!.sweep({ batchSize: 7 }), s2!.sweep({ batchSize: 7 })])
    expect(a + b).toBe(holds)
    const j = await sql<{ n: number; distinct_ids: number }>`
      select count(*)::int as n, count(distinct request_id)::int as distinct_ids
      from ledger_journal where reason = 'expire' and request_id like 'sweep2-%'`.execute(t.db)
    expect(j.rows[0]).toEqual({ n: holds, distinct_ids: holds })
    for (const id of ids)
      expect(await ledger.balance({ accountId: id })).toMatchObject({ reserved: 0, used: 0 })
    await expectInvariants(t.db)
  })
})
