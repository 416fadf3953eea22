import type { ColumnType, Generated } from 'kysely'

/** timestamptz: read as Date, written as Date or ISO string. */
type Timestamp = ColumnType<Date, Date | string, Date | string>
type GeneratedTimestamp = ColumnType<Date, Date | string | undefined, Date | string>

/**
 * The quota ledger's tables (migrations/2026-11-30T0000_baseline.ts). Amounts are int8 parsed to number
 * (src/db/pg-types.ts). Counters change only through the ledger's functions, each with a journal row.
 */
export interface LedgerTables {
  /** One row per (scope, subject, unit, period). Available = granted - reserved - used. */
  ledger_account: {
    id: Generated<number>
    scope: string
    subject: string
    unit: string
    period_start: Timestamp
    period_end: Timestamp
    /** IANA zone the period was cut in, used to show its end ("resets on 14 Dec"). */
    time_zone: Generated<string>
    granted: Generated<number>
    reserved: Generated<number>
    used: Generated<number>
    /** Open reservations (reserved or unknown) holding part of `reserved`. */
    holds: Generated<number>
    active: Generated<boolean>
    /** Set once the unused units were carried into a later period. */
    rolled_over_to: number | null
    created_at: GeneratedTimestamp
  }
  /**
   * One row per admission attempt, keyed by the caller's stable request id; refusals are stored too.
   * The bigint[] columns are read through the repository (as jsonb), not with selectAll: the int8[] type parser
   * in src/db/pg-types.ts calls pg.types.arrayParser as a function, which it is not in pg-types 2.
   */
  ledger_reservation: {
    request_id: string
    state: string
    /** Pinned at reservation: the accounts (so the periods) the hold was taken from, in request order. */
    account_ids: (number | null)[]
    amounts: number[]
    actuals: number[] | null
    charged: number[] | null
    overrun: Generated<boolean>
    concurrency_key: string | null
    fingerprint: string
    decision: unknown
    created_at: GeneratedTimestamp
    expires_at: Timestamp | null
    settled_at: Timestamp | null
    note: string | null
    prev_state: string | null
  }
  /** Every change of granted / reserved / used, with its reason: the counters are the sums of these rows. */
  ledger_journal: {
    id: Generated<number>
    account_id: number
    request_id: string | null
    reason: string
    d_granted: Generated<number>
    d_reserved: Generated<number>
    d_used: Generated<number>
    note: string | null
    created_at: GeneratedTimestamp
  }
  /** Grants by request id, so a replayed grant (a redelivered successful_payment) does not add twice. */
  ledger_grant: {
    request_id: string
    account_id: number
    amount: number
    carried: Generated<number>
    carried_from: number | null
    fingerprint: string
    created_at: GeneratedTimestamp
  }
  /** Reservations in state reserved per concurrency key. */
  ledger_slot: {
    key: string
    active: Generated<number>
  }
  /** The allowed moves of a reservation's state. */
  ledger_transition: {
    from_state: string
    to_state: string
  }
}
