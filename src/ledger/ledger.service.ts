import type pg from 'pg'
import type { Db, Trx } from '../db/database'
import { errorSummary } from '../jobs/jobs'
import type { Logger } from '../log'
import { metrics } from '../metrics'
import {
  actualsOf,
  checkRequestId,
  grantCall,
  reservationView,
  reserveCall,
  runBalance,
  runGrant,
  runReserve,
  runSettle,
  settledAccount,
  unavailableRefusal,
} from './ledger.calls'
import {
  type AccountNumbers,
  type AccountRef,
  type Actual,
  type GrantRequest,
  type GrantResult,
  LedgerInputError,
  type OverrunPolicy,
  type ReservationView,
  type ReserveRequest,
  type ReserveResult,
  type SettledAccount,
  type SettleResult,
} from './ledger.model'
import * as repo from './ledger.repository'

/**
 * The quota ledger: atomic admission of work against quota accounts.
 *
 *   const ledger = new Ledger(db, { overrunPolicy: config.ledger.overrunPolicy })
 *   // own short transaction; a database failure is the refusal `unavailable` (fail closed):
 *   const r = await ledger.reserve({ requestId, lines: [{ account: { accountId }, amount: 1 }] })
 *   // or inside the caller's transaction (e.g. with the order row locked); a refusal leaves it usable:
 *   const r = await ledger.in(trx).reserve({ ... })
 *   // then, after the work: commit(requestId, actual) | release(requestId) | markUnknown(requestId)
 *
 * Every operation is one statement calling a database function, so both forms are atomic: all lines or none.
 * Operations need READ COMMITTED (PostgreSQL's default). Database errors inside a caller's transaction are
 * thrown (that transaction is aborted anyway); a caller mapping them to a reply can use `unavailableRefusal`.
 */

export interface LedgerOptions {
  /** config `ledger.overrunPolicy`: charge an actual above the reservation in full, or cap it and flag it. */
  overrunPolicy?: OverrunPolicy
  /** TTL of a hold when the request gives none. */
  defaultTtlSeconds?: number
  log?: Logger
  /**
   * The pg pool behind `db` (DbHandle.pool). With it, reserve/commit/release/markUnknown in their own transaction
   * run as named prepared statements on the pool, parsed and planned once per connection; without it, through
   * Kysely (the same SQL, re-parsed and re-planned by the server on every call). Same results either way.
   */
  pool?: pg.Pool
}

export interface SettleOptions {
  /** Why, for the reservation row and the journal (e.g. "refund before answer", "reconciled by @admin"). */
  note?: string
}

export interface CommitOptions extends SettleOptions {
  /** Override the configured policy for this commit. */
  overrunPolicy?: OverrunPolicy
}

export type { Actual } from './ledger.model'
export { unavailableRefusal }

export const DEFAULT_TTL_SECONDS = 15 * 60
const SWEEP_NOTE = 'expired by the sweeper: still reserved past its deadline'

/** The operations, the same in both forms. */
export interface LedgerOps {
  /** Admits on every line or on none; see ReserveResult. A replayed request id returns the first decision. */
  reserve(req: ReserveRequest): Promise<ReserveResult>
  /** Moves the hold into used with the actual amount, into the period(s) it was reserved from. */
  commit(requestId: string, actual?: Actual, opts?: CommitOptions): Promise<SettleResult>
  /** Returns the hold (work not done, or known to be unbilled). */
  release(requestId: string, opts?: SettleOptions): Promise<SettleResult>
  /** The outcome is unknown (timeout after sending): the hold stays until a commit or release reconciles it. */
  markUnknown(requestId: string, opts?: SettleOptions): Promise<SettleResult>
  /** Gets or creates the account of a period and adds to it, once per request id (with optional carry-over). */
  grant(req: GrantRequest): Promise<GrantResult>
  /** The account's current numbers (by id, or by key for the period containing `at`), or null. */
  balance(ref: AccountRef, at?: Date): Promise<AccountNumbers | null>
  /** The reservation of a request id, or null. */
  reservation(requestId: string): Promise<ReservationView | null>
}

export class Ledger implements LedgerOps {
  private readonly policy: OverrunPolicy
  private readonly ttl: number
  private readonly log: Logger | undefined
  /** Where the one-statement operations run: the pool when given (prepared statements), else Kysely. */
  private readonly runner: repo.Runner

  constructor(
    private readonly db: Db,
    opts: LedgerOptions = {},
  ) {
    this.policy = opts.overrunPolicy ?? 'allow'
    this.ttl = opts.defaultTtlSeconds ?? DEFAULT_TTL_SECONDS
    this.log = opts.log
    this.runner = opts.pool ?? db
  }

  /** The same operations inside the caller's transaction. */
  in(trx: Trx): LedgerTx {
    return new LedgerTx(trx, this.policy, this.ttl)
  }

  async reserve(req: ReserveRequest): Promise<ReserveResult> {
    const call = reserveCall(req, this.ttl)
    try {
      return counted(await runReserve(this.runner, req, call))
    } catch (err) {
      this.warn('reserve', req.requestId, err)
      return counted(unavailableRefusal(req.requestId))
    }
  }

  async commit(requestId: string, actual?: Actual, opts: CommitOptions = {}): Promise<SettleResult> {
    const actuals = actualsOf(actual)
    checkRequestId(requestId)
    try {
      return await runSettle(
        this.runner,
        requestId,
        'committed',
        actuals,
        opts.overrunPolicy ?? this.policy,
        opts.note,
      )
    } catch (err) {
      this.warn('commit', requestId, err)
      return { ok: false, requestId, reason: 'unavailable', state: null }
    }
  }

  async release(requestId: string, opts: SettleOptions = {}): Promise<SettleResult> {
    checkRequestId(requestId)
    try {
      return await runSettle(this.runner, requestId, 'released', null, this.policy, opts.note)
    } catch (err) {
      this.warn('release', requestId, err)
      return { ok: false, requestId, reason: 'unavailable', state: null }
    }
  }

  async markUnknown(requestId: string, opts: SettleOptions = {}): Promise<SettleResult> {
    checkRequestId(requestId)
    try {
      return await runSettle(this.runner, requestId, 'unknown', null, this.policy, opts.note)
    } catch (err) {
      this.warn('markUnknown', requestId, err)
      return { ok: false, requestId, reason: 'unavailable', state: null }
    }
  }

  async grant(req: GrantRequest): Promise<GrantResult> {
    const call = grantCall(req)
    try {
      return await this.db.transaction().execute((trx) => runGrant(trx, req, call))
    } catch (err) {
      this.warn('grant', req.requestId, err)
      return { ok: false, requestId: req.requestId, reason: 'unavailable', accountId: null }
    }
  }

  /** Throws on a database failure (a read: the caller decides what to show). */
  balance(ref: AccountRef, at?: Date): Promise<AccountNumbers | null> {
    return runBalance(this.db, ref, at)
  }

  /** Throws on a database failure. */
  async reservation(requestId: string): Promise<ReservationView | null> {
    const r = await repo.findReservation(this.db, requestId)
    return r ? reservationView(r) : null
  }

  /** Holds whose outcome is unknown, oldest first: what a person or a reconciliation job must settle. */
  async unknownReservations(limit = 100): Promise<ReservationView[]> {
    return (await repo.listUnknown(this.db, limit)).map(reservationView)
  }

  /**
   * Expires up to `limit` holds still in state reserved past their deadline, each with a journal row; holds whose
   * outcome is unknown are never touched. Safe to run from several workers at once. Throws on database failure.
   */
  expireDue(limit = 500): Promise<string[]> {
    return repo.callExpireDue(this.db, limit, SWEEP_NOTE)
  }

  /** Runs expireDue batches until one comes back short; returns how many holds expired. */
  async sweep(opts: { batchSize?: number; maxBatches?: number } = {}): Promise<number> {
    const size = opts.batchSize ?? 500
    let total = 0
    for (let i = 0; i < (opts.maxBatches ?? 100); i++) {
      const ids = await this.expireDue(size)
      total += ids.length
      if (ids.length < size) break
    }
    return total
  }

  private warn(op: string, requestId: string, err: unknown): void {
    this.log?.warn({ op, requestId, err: errorSummary(err) }, 'ledger unavailable; refused (fail closed)')
  }
}

/** The operations bound to a caller's transaction. Refusals are values; database errors propagate. */
/**
 * Counts a reservation's outcome (replays of an earlier decision are not counted again). A caller that resolves a
 * refusal itself before anyone is refused (the capacity hold that opens the day's account and tries again) reserves
 * with `{ uncounted: true }` and counts the decision it keeps with this.
 */
export function counted(r: ReserveResult): ReserveResult {
  if (r.replayed) return r
  metrics.ledgerReserves.inc({ outcome: r.admitted ? 'reserved' : 'refused' })
  if (!r.admitted) metrics.ledgerRefusals.inc({ reason: r.reason })
  return r
}

export class LedgerTx implements LedgerOps {
  constructor(
    private readonly trx: Trx,
    private readonly policy: OverrunPolicy,
    private readonly ttl: number,
  ) {}

  async reserve(req: ReserveRequest, opts: { uncounted?: boolean } = {}): Promise<ReserveResult> {
    const r = await runReserve(this.trx, req, reserveCall(req, this.ttl))
    return opts.uncounted ? r : counted(r)
  }

  commit(requestId: string, actual?: Actual, opts: CommitOptions = {}): Promise<SettleResult> {
    const actuals = actualsOf(actual)
    checkRequestId(requestId)
    return runSettle(this.trx, requestId, 'committed', actuals, opts.overrunPolicy ?? this.policy, opts.note)
  }

  release(requestId: string, opts: SettleOptions = {}): Promise<SettleResult> {
    checkRequestId(requestId)
    return runSettle(this.trx, requestId, 'released', null, this.policy, opts.note)
  }

  markUnknown(requestId: string, opts: SettleOptions = {}): Promise<SettleResult> {
    checkRequestId(requestId)
    return runSettle(this.trx, requestId, 'unknown', null, this.policy, opts.note)
  }

  grant(req: GrantRequest): Promise<GrantResult> {
    return runGrant(this.trx, req, grantCall(req))
  }

  balance(ref: AccountRef, at?: Date): Promise<AccountNumbers | null> {
    return runBalance(this.trx, ref, at)
  }

  async reservation(requestId: string): Promise<ReservationView | null> {
    const r = await repo.findReservation(this.trx, requestId)
    return r ? reservationView(r) : null
  }

  /**
   * A manual correction (reason `adjust` in the journal). Returns the new numbers, or null when the account does
   * not exist or the change would make granted or used negative (nothing changed).
   */
  async adjust(a: {
    accountId: number
    dGranted?: number
    dUsed?: number
    note: string
    requestId?: string
  }): Promise<SettledAccount | null> {
    const dGranted = a.dGranted ?? 0
    const dUsed = a.dUsed ?? 0
    if (!Number.isSafeInteger(dGranted) || !Number.isSafeInteger(dUsed))
      throw new LedgerInputError('adjustments are integers')
    if (!a.note) throw new LedgerInputError('an adjustment needs a note explaining it')
    const row = await repo.adjustAccount(this.trx, {
      accountId: a.accountId,
      dGranted,
      dUsed,
      requestId: a.requestId ?? null,
      note: a.note,
    })
    return row ? settledAccount({ accountId: row.id, ...row }) : null
  }

  /** Deactivates (e.g. a refunded consultation) or reactivates an account: new reservations refuse `inactive`. */
  async setActive(accountId: number, active: boolean): Promise<boolean> {
    return (await repo.setAccountActive(this.trx, accountId, active)) !== undefined
  }
}

// ---------------------------------------------------------------------------------------------------------------
