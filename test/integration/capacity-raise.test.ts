import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DbHandle } from '../../src/db/pool'
import { type CapacityAccount, capacityAccountId } from '../../src/orders/capacity'
import { createTestDatabase, type TestDatabase } from '../support/db'
import { expectInvariants, separateConnections } from './ledger.fixtures'

/**
 * A day's capacity raised while the desk runs (issue 24: a tariff's "consultations per day" changed in /settings or
 * the dashboard) tops the day's account up at the next hold, once, even when two processes do it at the same moment
 * (one with the new number, one still with an older one): the account ends with the largest, never their sum.
 */
let t: TestDatabase
const extra: DbHandle[] = []

beforeAll(async () => {
  t = await createTestDatabase()
})
afterAll(async () => {
  await Promise.all(extra.map((h) => h.close()))
  await t.drop()
})

const granted = async (id: number) =>
  (await t.db.selectFrom('ledger_account').select('granted').where('id', '=', id).executeTakeFirstOrThrow())
    .granted

function day(i: number, capacity: number): CapacityAccount {
  const start = Date.UTC(2030, 0, 1) + i * 86_400_000
  return {
    key: `day:raise:${new Date(start).toISOString().slice(0, 10)}`,
    capacity,
    periodStart: new Date(start),
    periodEnd: new Date(start + 86_400_000),
    timeZone: 'UTC',
  }
}

describe('capacity raised while the desk runs', () => {
  it('an opened day is topped up to the new capacity, and lowering it takes no place back', async () => {
    const open = await t.db.transaction().execute((trx) => capacityAccountId(trx, 1, day(-1, 1)))
    expect(await granted(open)).toBe(1)
    const raised = await t.db.transaction().execute((trx) => capacityAccountId(trx, 1, day(-1, 4)))
    expect(raised).toBe(open)
    expect(await granted(open)).toBe(4)
    await t.db.transaction().execute((trx) => capacityAccountId(trx, 1, day(-1, 2)))
    expect(await granted(open)).toBe(4)
  })

  it('two processes raising it at once (3 and a stale 2) add it once: the account holds 3 (20 rounds)', async () => {
    const [a, b] = await separateConnections(t.url, 2)
    extra.push(a!, b!)
    for (let i = 0; i < 20; i++) {
      const id = await t.db.transaction().execute((trx) => capacityAccountId(trx, 1, day(i, 1)))
      const [x, y] = await Promise.all([
        a!.db.transaction().execute((trx) => capacityAccountId(trx, 1, day(i, 3))),
        b!.db.transaction().execute((trx) => capacityAccountId(trx, 1, day(i, i % 2 ? 2 : 3))),
      ])
      expect([x, y]).toEqual([id, id])
      expect(await granted(id), `round ${i}`).toBe(3)
    }
    await expectInvariants(t.db)
  })
})
