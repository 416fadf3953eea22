import { randomBytes } from 'node:crypto'
import { expect } from 'vitest'
import type { Db } from '../../src/db/database'
import { createDb, type DbHandle } from '../../src/db/pool'
import { checkInvariants } from '../../src/ledger/ledger.invariants'
import type { Ledger } from '../../src/ledger/ledger.service'

/** A period wide enough that tests never cross it by accident. */
export const WIDE = {
  periodStart: new Date('2000-01-01T00:00:00Z'),
  periodEnd: new Date('2100-01-01T00:00:00Z'),
}

export function uid(prefix = 't'): string {
  return `${prefix}-${randomBytes(6).toString('hex')}`
}

/** Creates an account with `amount` granted over a wide period; returns its id. */
export async function account(
  ledger: Ledger,
  amount: number,
  key: Partial<{ scope: string; subject: string; unit: string }> = {},
) {
  const g = await ledger.grant({
    requestId: uid('grant'),
    scope: key.scope ?? 'test',
    subject: key.subject ?? uid('s'),
    unit: key.unit ?? 'appeals',
    amount,
    ...WIDE,
  })
  if (!g.ok) throw new Error(`grant failed: ${g.reason}`)
  return g.accountId
}

/** `n` separate pools of one connection each, connected before they are used (so a start is a real race). */
export async function separateConnections(url: string, n: number): Promise<DbHandle[]> {
  const handles = Array.from({ length: n }, () => createDb(url, 1))
  await Promise.all(handles.map((h) => h.pool.query('select 1')))
  return handles
}

/** One pool of `n` connections, all opened now. */
export async function warmPool(url: string, n: number): Promise<DbHandle> {
  const h = createDb(url, n)
  await Promise.all(Array.from({ length: n }, () => h.pool.query('select pg_sleep(0.02)')))
  return h
}

export async function expectInvariants(db: Db): Promise<void> {
  const report = await checkInvariants(db)
  expect(report.violations).toEqual([])
  expect(report.ok).toBe(true)
}
