import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { findReservation, listJournal } from '../../src/ledger/ledger.repository'
import { Ledger } from '../../src/ledger/ledger.service'
import { createTestDatabase, type TestDatabase } from '../support/db'
import { account, expectInvariants, uid } from './ledger.fixtures'

/**
 * The one-line fast paths (ledger_reserve_one / ledger_settle_one in src/ledger/sql, which the repository calls for every one-line reservation and every settle with at most one actual) must store and return
 * exactly what the full functions (ledger_reserve_full / ledger_settle_full) do. Twin accounts with the same
 * numbers: one goes through the fast path, the other through the full function called directly.
 */
let t: TestDatabase
let viaPool: Ledger
let viaKysely: Ledger

beforeAll(async () => {
  t = await createTestDatabase()
  viaPool = new Ledger(t.db, { pool: t.pool })
  viaKysely = new Ledger(t.db)
})
afterAll(() => t.drop())

async function reserveFull(requestId: string, accountId: number, amount: number) {
  const r = await sql<{ o_outcome: string; o_state: string; o_decision: unknown }>`
    select * from ledger_reserve_full(${requestId}, ${[accountId]}::bigint[], array[null]::text[],
      array[null]::text[], array[null]::text[], ${[amount]}::bigint[], null, null, null, 900,
      ${JSON.stringify([[`#${accountId}`, amount]])})`.execute(t.db)
  return r.rows[0]!
}

async function settleFull(requestId: string, to: string, actuals: number[] | null, policy = 'allow') {
  await sql`select * from ledger_settle_full(${requestId}, ${to}, ${actuals}::bigint[], ${policy}, null)`.execute(
    t.db,
  )
}

/** What the two paths must agree on, with the ids that differ between twins taken out. */
async function stored(requestId: string) {
  const r = await findReservation(t.db, requestId)
  const d = r!.decision
  return {
    state: r!.state,
    prevState: r!.prev_state,
    amounts: r!.amounts,
    actuals: r!.actuals,
    charged: r!.charged,
    overrun: r!.overrun,
    decision: { ...d, lines: d.lines.map(({ accountId, subject, ...l }) => l) },
    journal: (await listJournal(t.db, r!.account_ids[0]!))
      .filter((j) => j.request_id === requestId)
      .map((j) => [j.reason, j.d_granted, j.d_reserved, j.d_used]),
  }
}

describe.each([
  ['pool (prepared statements)', () => viaPool],
  ['Kysely', () => viaKysely],
])('ledger fast paths via %s', (_, ledgerOf) => {
  it('reserve, commit (allow, cap with overrun), release: the same rows as the full functions', async () => {
    const ledger = ledgerOf()
    for (const [settle, actual, policy] of [
      ['committed', 7, 'allow'],
      ['committed', 12, 'allow'],
      ['committed', 12, 'cap'],
      ['released', null, 'allow'],
    ] as const) {
      const fast = await account(ledger, 50)
      const full = await account(ledger, 50)
      const a = uid('fast')
      const b = uid('full')
      const r = await ledger.reserve({ requestId: a, lines: [{ account: { accountId: fast }, amount: 10 }] })
      expect(r).toMatchObject({ admitted: true, replayed: false, state: 'reserved' })
      expect((await reserveFull(b, full, 10)).o_outcome).toBe('new')
      expect(await stored(a)).toEqual(await stored(b))

      const s =
        settle === 'committed'
          ? await ledger.commit(a, actual ?? undefined, { overrunPolicy: policy })
          : await ledger.release(a)
      expect(s).toMatchObject({ ok: true, replayed: false, state: settle })
      await settleFull(b, settle, actual === null ? null : [actual], policy)
      expect(await stored(a)).toEqual(await stored(b))
      expect(await ledger.balance({ accountId: fast })).toMatchObject({
        ...(await ledger.balance({ accountId: full })),
        accountId: fast,
        subject: expect.any(String),
      })
    }
    await expectInvariants(t.db)
  })

  it('a replay of a fast admission while the account still has room takes no second hold', async () => {
    const ledger = ledgerOf()
    const id = await account(ledger, 5)
    const requestId = uid('q')
    const first = await ledger.reserve({ requestId, lines: [{ account: { accountId: id }, amount: 2 }] })
    const again = await ledger.reserve({ requestId, lines: [{ account: { accountId: id }, amount: 2 }] })
    expect(again).toMatchObject({ admitted: true, replayed: true, state: 'reserved' })
    expect(again.lines).toEqual(first.lines)
    const other = await account(ledger, 5)
    expect(
      await ledger.reserve({ requestId, lines: [{ account: { accountId: other }, amount: 2 }] }),
    ).toMatchObject({ admitted: false, reason: 'conflict' })
    expect(await ledger.balance({ accountId: id })).toMatchObject({ reserved: 2, activeHolds: 1 })
    expect(await ledger.balance({ accountId: other })).toMatchObject({ reserved: 0, activeHolds: 0 })
    // Settling twice: the second is the full path's replay; another actual is a conflict.
    expect(await ledger.commit(requestId, 2)).toMatchObject({ ok: true, replayed: false })
    expect(await ledger.commit(requestId, 2)).toMatchObject({ ok: true, replayed: true })
    expect(await ledger.commit(requestId, 3)).toMatchObject({ ok: false, reason: 'conflict' })
    await expectInvariants(t.db)
  })

  it('a refusal and a reservation with a concurrency slot take the full path and keep the slot counts', async () => {
    const ledger = ledgerOf()
    const id = await account(ledger, 3)
    expect(
      await ledger.reserve({ requestId: uid('q'), lines: [{ account: { accountId: id }, amount: 4 }] }),
    ).toMatchObject({ admitted: false, reason: 'exhausted', account: { granted: 3, available: 3 } })
    const key = uid('k')
    const requestId = uid('q')
    expect(
      await ledger.reserve({
        requestId,
        lines: [{ account: { accountId: id }, amount: 1 }],
        concurrency: { key, max: 1 },
      }),
    ).toMatchObject({ admitted: true })
    // The commit is the fast path; it gives the slot back.
    expect(await ledger.commit(requestId)).toMatchObject({ ok: true, state: 'committed' })
    expect(
      await ledger.reserve({
        requestId: uid('q'),
        lines: [{ account: { accountId: id }, amount: 1 }],
        concurrency: { key, max: 1 },
      }),
    ).toMatchObject({ admitted: true })
    await expectInvariants(t.db)
  })

  it('commit and release answer with the numbers after the settle', async () => {
    const ledger = ledgerOf()
    const id = await account(ledger, 50)
    const a = uid('q')
    await ledger.reserve({ requestId: a, lines: [{ account: { accountId: id }, amount: 10 }] })
    expect(await ledger.commit(a, 12, { overrunPolicy: 'cap' })).toEqual({
      ok: true,
      requestId: a,
      state: 'committed',
      replayed: false,
      amounts: [10],
      actuals: [12],
      charged: [10],
      overrun: true,
      accounts: [{ accountId: id, granted: 50, reserved: 0, used: 10, available: 40, activeHolds: 0 }],
    })
    const b = uid('q')
    await ledger.reserve({ requestId: b, lines: [{ account: { accountId: id }, amount: 5 }] })
    expect(await ledger.release(b)).toEqual({
      ok: true,
      requestId: b,
      state: 'released',
      replayed: false,
      amounts: [5],
      actuals: null,
      charged: null,
      overrun: false,
      accounts: [{ accountId: id, granted: 50, reserved: 0, used: 10, available: 40, activeHolds: 0 }],
    })
    await expectInvariants(t.db)
  })

  it('every other one-line case is answered by the full path in the same call', async () => {
    const ledger = ledgerOf()
    const subject = uid('s')
    const id = await account(ledger, 5, { subject })
    // By key: the account whose period holds the instant.
    const byKey = uid('q')
    expect(
      await ledger.reserve({
        requestId: byKey,
        lines: [{ account: { scope: 'test', subject, unit: 'appeals' }, amount: 2 }],
      }),
    ).toMatchObject({ admitted: true, lines: [{ account: { accountId: id, reserved: 2, available: 3 } }] })
    // No account with that key, or none whose period holds the instant: refusals with their reason.
    expect(
      await ledger.reserve({
        requestId: uid('q'),
        lines: [{ account: { scope: 'test', subject: uid('none'), unit: 'appeals' }, amount: 1 }],
      }),
    ).toMatchObject({ admitted: false, reason: 'no_account' })
    expect(
      await ledger.reserve({
        requestId: uid('q'),
        lines: [{ account: { accountId: id }, amount: 1, at: new Date('1999-06-01T00:00:00Z') }],
      }),
    ).toMatchObject({ admitted: false, reason: 'inactive' })
    // unknown -> committed is not the fast path's move: the full path makes it, charging the actual.
    expect(await ledger.markUnknown(byKey)).toMatchObject({ ok: true, state: 'unknown' })
    expect(await ledger.commit(byKey, 1)).toMatchObject({
      ok: true,
      state: 'committed',
      amounts: [2],
      actuals: [1],
      charged: [1],
      accounts: [{ accountId: id, reserved: 0, used: 1, activeHolds: 0 }],
    })
    expect(await ledger.release(byKey)).toMatchObject({ ok: false, reason: 'invalid_transition' })
    expect(await ledger.commit(uid('never'), 1)).toMatchObject({ ok: false, reason: 'not_found' })
    await expectInvariants(t.db)
  })
})

it('the transition table governs the fast settle too: a move taken out of it is refused', async () => {
  const id = await account(viaPool, 5)
  const requestId = uid('q')
  await viaPool.reserve({ requestId, lines: [{ account: { accountId: id }, amount: 1 }] })
  const rollback = new Error('rollback')
  await expect(
    t.db.transaction().execute(async (trx) => {
      await trx
        .deleteFrom('ledger_transition')
        .where('from_state', '=', 'reserved')
        .where('to_state', '=', 'released')
        .execute()
      expect(await viaPool.in(trx).release(requestId)).toMatchObject({
        ok: false,
        reason: 'invalid_transition',
        state: 'reserved',
      })
      throw rollback
    }),
  ).rejects.toBe(rollback)
  expect(await viaPool.release(requestId)).toMatchObject({ ok: true, state: 'released' })
  await expectInvariants(t.db)
})
