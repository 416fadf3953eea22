import type { Kysely } from 'kysely'
import type { Database } from '../db/database'
import type { InvariantReport, InvariantViolation } from './ledger.model'
import * as repo from './ledger.repository'

/** The ledger's invariants, recomputed from its journal and open reservations (tests, the benchmark, a health check). */

/**
 * Recomputes every account from its journal and its open reservations: for tests, the benchmark and a health
 * check. ok = counters equal the journal sums, reserved and holds equal the open reservations, and every
 * concurrency slot equals its reservations in state reserved.
 */
export async function checkInvariants(db: Kysely<Database>): Promise<InvariantReport> {
  const violations: InvariantViolation[] = []
  for (const m of await repo.counterMismatches(db)) {
    if (m.granted !== m.j_granted || m.reserved !== m.j_reserved || m.used !== m.j_used)
      violations.push({
        kind: 'counters_vs_journal',
        accountId: m.id,
        expected: { granted: m.j_granted, reserved: m.j_reserved, used: m.j_used },
        actual: { granted: m.granted, reserved: m.reserved, used: m.used },
      })
    if (m.reserved !== m.open_reserved)
      violations.push({
        kind: 'reserved_vs_open_reservations',
        accountId: m.id,
        expected: m.open_reserved,
        actual: m.reserved,
      })
    if (m.holds !== m.open_holds)
      violations.push({
        kind: 'holds_vs_open_reservations',
        accountId: m.id,
        expected: m.open_holds,
        actual: m.holds,
      })
  }
  for (const s of await repo.slotMismatches(db))
    violations.push({ kind: 'slot_vs_reserved', slotKey: s.key, expected: s.reserved, actual: s.active })
  const totals = await repo.ledgerTotals(db)
  return {
    ok: violations.length === 0,
    accounts: totals.accounts,
    reservations: totals.reservations,
    journalRows: totals.journal_rows,
    violations,
    overGrant: await repo.overGrantAccounts(db),
  }
}
