import type { Kysely } from 'kysely'
import type pg from 'pg'
import type { Database, Db, Trx } from '../db/database'
import { errorSummary } from '../jobs/jobs'
import type { Logger } from '../log'
import {
  type AccountNumbers,
  type AccountRef,
  type GrantRequest,
  type GrantResult,
  type InvariantReport,
  type InvariantViolation,
  LedgerInputError,
  type LineDecision,
  type OverrunPolicy,
  type Refusal,
  type RefusalReason,
  type ReservationState,
  type ReservationView,
  type ReserveRequest,
  type ReserveResult,
  type SettledAccount,
  type SettleResult,
} from './ledger.model'
import { isoInZone } from './ledger.periods'
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

/**
 * The actual spent: omitted = each line's reserved amount; a number = the actual of a one-line reservation; an
 * array = per line, in the order of the reserve request.
 */
export type Actual = number | readonly number[] | undefined

export const DEFAULT_TTL_SECONDS = 15 * 60
const SWEEP_NOTE = 'expired by the sweeper: still reserved past its deadline'
const MAX_REQUEST_ID = 200

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
      return await runReserve(this.runner, req, call)
    } catch (err) {
      this.warn('reserve', req.requestId, err)
      return unavailableRefusal(req.requestId)
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
export class LedgerTx implements LedgerOps {
  constructor(
    private readonly trx: Trx,
    private readonly policy: OverrunPolicy,
    private readonly ttl: number,
  ) {}

  reserve(req: ReserveRequest): Promise<ReserveResult> {
    return runReserve(this.trx, req, reserveCall(req, this.ttl))
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

/** The refusal for a failure to reach the ledger (for callers that run it in their own transaction). */
export function unavailableRefusal(
  requestId: string,
  detail = 'the ledger is temporarily unavailable',
): Refusal {
  return {
    admitted: false,
    requestId,
    replayed: false,
    reason: 'unavailable',
    line: null,
    account: null,
    lines: [],
    concurrency: null,
    state: null,
    detail,
  }
}

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

// ---------------------------------------------------------------------------------------------------------------

function checkRequestId(requestId: string): void {
  if (typeof requestId !== 'string' || requestId.length === 0 || requestId.length > MAX_REQUEST_ID)
    throw new LedgerInputError(`a request id is a non-empty string of at most ${MAX_REQUEST_ID} characters`)
}

function refKey(ref: AccountRef): string {
  return 'accountId' in ref ? `#${ref.accountId}` : JSON.stringify([ref.scope, String(ref.subject), ref.unit])
}

function reserveCall(req: ReserveRequest, defaultTtl: number): repo.ReserveCall {
  checkRequestId(req.requestId)
  if (!Array.isArray(req.lines) || req.lines.length === 0)
    throw new LedgerInputError('a reservation needs lines')
  const seen = new Set<string>()
  const call: repo.ReserveCall = {
    requestId: req.requestId,
    accountIds: [],
    scopes: [],
    subjects: [],
    units: [],
    amounts: [],
    at: req.at ?? null,
    lineAts: req.lines.some((l) => l.at) ? req.lines.map((l) => l.at ?? null) : null,
    concurrencyKey: req.concurrency?.key ?? null,
    concurrencyMax: req.concurrency?.max ?? null,
    ttlSeconds: req.ttlSeconds ?? defaultTtl,
    fingerprint: '',
  }
  for (const line of req.lines) {
    if (!Number.isSafeInteger(line.amount) || line.amount <= 0)
      throw new LedgerInputError(`amounts are positive integers (got ${line.amount})`)
    const key = refKey(line.account)
    if (seen.has(key)) throw new LedgerInputError(`account ${key} is listed twice`)
    seen.add(key)
    if ('accountId' in line.account) {
      if (!Number.isSafeInteger(line.account.accountId))
        throw new LedgerInputError('account ids are integers')
      call.accountIds.push(line.account.accountId)
      call.scopes.push(null)
      call.subjects.push(null)
      call.units.push(null)
    } else {
      call.accountIds.push(null)
      call.scopes.push(line.account.scope)
      call.subjects.push(String(line.account.subject))
      call.units.push(line.account.unit)
    }
    call.amounts.push(line.amount)
  }
  if (
    req.concurrency &&
    (!req.concurrency.key || !Number.isSafeInteger(req.concurrency.max) || req.concurrency.max < 0)
  )
    throw new LedgerInputError('a concurrency limit needs a key and a non-negative integer max')
  if (!Number.isFinite(call.ttlSeconds) || call.ttlSeconds < 0)
    throw new LedgerInputError('ttlSeconds is >= 0')
  // What makes a replay the same request: the accounts as given and the amounts (not the instant or the TTL).
  call.fingerprint = JSON.stringify(req.lines.map((l) => [refKey(l.account), l.amount]))
  return call
}

async function runReserve(
  db: repo.Runner,
  req: ReserveRequest,
  call: repo.ReserveCall,
): Promise<ReserveResult> {
  const row = await repo.callReserve(db, call)
  const replayed = row.o_outcome !== 'new'
  if (row.o_outcome === 'duplicate_account') {
    return {
      ...unavailableRefusal(req.requestId),
      reason: 'conflict',
      detail: 'the same account is listed twice',
    }
  }
  const d = row.o_decision!
  const state = row.o_state as ReservationState
  if (row.o_outcome === 'conflict') {
    return {
      admitted: false,
      requestId: req.requestId,
      replayed: true,
      reason: 'conflict',
      line: null,
      account: null,
      lines: d.lines.map((l) => lineDecision(l, false)),
      concurrency: d.concurrency,
      state,
      detail: 'the request id was already used with other accounts or amounts',
    }
  }
  if (d.reason === null) {
    return {
      admitted: true,
      requestId: req.requestId,
      replayed,
      state,
      expiresAt: row.o_expires_at,
      lines: d.lines.map((l) => lineDecision(l, true)),
      concurrency: d.concurrency,
    }
  }
  const lines = d.lines.map((l) => lineDecision(l, false))
  return {
    admitted: false,
    requestId: req.requestId,
    replayed,
    reason: d.reason as RefusalReason,
    line: d.line,
    account: d.line === null ? null : (lines[d.line]?.account ?? null),
    lines,
    concurrency: d.concurrency,
    state,
  }
}

/** Stored numbers are as read before the hold; an admission reports them with its own hold included. */
function lineDecision(l: repo.StoredLine, admitted: boolean): LineDecision {
  const ref =
    l.scope !== null && l.accountId === null
      ? { scope: l.scope, subject: l.subject ?? undefined, unit: l.unit ?? undefined }
      : { accountId: l.accountId ?? undefined }
  if (l.accountId === null || l.granted === undefined) return { ref, amount: l.amount, account: null }
  const reserved = l.reserved! + (admitted ? l.amount : 0)
  const holds = l.holds! + (admitted ? 1 : 0)
  const periodEnd = new Date(l.periodEnd!)
  const timeZone = l.timeZone ?? 'UTC'
  return {
    ref,
    amount: l.amount,
    account: {
      accountId: l.accountId,
      scope: l.scope!,
      subject: l.subject!,
      unit: l.unit!,
      granted: l.granted,
      reserved,
      used: l.used!,
      available: l.granted - reserved - l.used!,
      activeHolds: holds,
      periodStart: new Date(l.periodStart!),
      periodEnd,
      timeZone,
      periodEndLocal: isoInZone(periodEnd, timeZone),
    },
  }
}

function actualsOf(actual: Actual): number[] | null {
  if (actual === undefined) return null
  const list = typeof actual === 'number' ? [actual] : [...actual]
  for (const a of list)
    if (!Number.isSafeInteger(a) || a < 0) throw new LedgerInputError(`actuals are integers >= 0 (got ${a})`)
  return list
}

async function runSettle(
  db: repo.Runner,
  requestId: string,
  to: 'committed' | 'released' | 'unknown',
  actuals: number[] | null,
  policy: OverrunPolicy,
  note: string | undefined,
): Promise<SettleResult> {
  const row = await repo.callSettle(db, requestId, to, actuals, policy, note ?? null)
  const state = (row.o_state as ReservationState | null) ?? null
  switch (row.o_outcome) {
    case 'done':
    case 'replay':
      return {
        ok: true,
        requestId,
        state: state!,
        replayed: row.o_outcome === 'replay',
        amounts: row.o_amounts ?? [],
        actuals: row.o_actuals,
        charged: row.o_charged,
        overrun: row.o_overrun ?? false,
        accounts: (row.o_accounts ?? []).map(settledAccount),
      }
    case 'not_found':
      return { ok: false, requestId, reason: 'not_found', state: null }
    case 'conflict':
      return {
        ok: false,
        requestId,
        reason: 'conflict',
        state,
        actuals: row.o_actuals,
        detail: 'already committed with another actual',
      }
    case 'lines_mismatch':
      return {
        ok: false,
        requestId,
        reason: 'conflict',
        state,
        detail: `the reservation has ${row.o_amounts?.length ?? '?'} line(s); give one actual per line`,
      }
    default:
      return {
        ok: false,
        requestId,
        reason: 'invalid_transition',
        state,
        detail: `a reservation in state ${state} cannot become ${to}`,
      }
  }
}

function reservationView(r: repo.ReservationRow): ReservationView {
  return {
    requestId: r.request_id,
    state: r.state as ReservationState,
    prevState: r.prev_state as ReservationState | null,
    accountIds: r.account_ids,
    amounts: r.amounts,
    actuals: r.actuals,
    charged: r.charged,
    overrun: r.overrun,
    concurrencyKey: r.concurrency_key,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    settledAt: r.settled_at,
    note: r.note,
  }
}

function settledAccount(a: {
  accountId: number
  granted: number
  reserved: number
  used: number
  holds: number
}): SettledAccount {
  return {
    accountId: a.accountId,
    granted: a.granted,
    reserved: a.reserved,
    used: a.used,
    available: a.granted - a.reserved - a.used,
    activeHolds: a.holds,
  }
}

function grantCall(req: GrantRequest): repo.GrantCall {
  checkRequestId(req.requestId)
  if (!Number.isSafeInteger(req.amount) || req.amount < 0)
    throw new LedgerInputError(`a grant is an integer >= 0 (got ${req.amount})`)
  if (!(req.periodEnd.getTime() > req.periodStart.getTime()))
    throw new LedgerInputError('a period ends after it starts')
  if (!req.scope || !req.unit || String(req.subject) === '')
    throw new LedgerInputError('an account needs a scope, a subject and a unit')
  const carry = req.carryOver ?? { kind: 'none' }
  if (carry.kind === 'capped' && (!Number.isSafeInteger(carry.max) || carry.max < 0))
    throw new LedgerInputError('a carry-over cap is an integer >= 0')
  const timeZone = req.timeZone ?? 'UTC'
  const subject = String(req.subject)
  return {
    requestId: req.requestId,
    scope: req.scope,
    subject,
    unit: req.unit,
    periodStart: req.periodStart,
    periodEnd: req.periodEnd,
    timeZone,
    amount: req.amount,
    carryCap: carry.kind === 'capped' ? carry.max : null,
    fingerprint: JSON.stringify([
      req.scope,
      subject,
      req.unit,
      req.periodStart.toISOString(),
      req.periodEnd.toISOString(),
      req.amount,
    ]),
  }
}

async function runGrant(db: Kysely<Database>, req: GrantRequest, call: repo.GrantCall): Promise<GrantResult> {
  const row = await repo.callGrant(db, call)
  if (row.o_outcome === 'conflict' || row.o_outcome === 'period_mismatch') {
    return {
      ok: false,
      requestId: req.requestId,
      reason: row.o_outcome,
      accountId: row.o_account_id,
      detail:
        row.o_outcome === 'conflict'
          ? 'the grant request id was already used for another grant'
          : 'an account for this period start exists with another period end',
    }
  }
  const account = await runBalance(db, { accountId: row.o_account_id! })
  return {
    ok: true,
    requestId: req.requestId,
    replayed: row.o_outcome === 'replay',
    accountId: row.o_account_id!,
    amount: row.o_amount!,
    carried: row.o_carried ?? 0,
    carriedFrom: row.o_carried_from,
    account: account!,
  }
}

async function runBalance(db: Kysely<Database>, ref: AccountRef, at?: Date): Promise<AccountNumbers | null> {
  const a =
    'accountId' in ref
      ? await repo.findAccountById(db, ref.accountId)
      : await repo.findAccountByKey(db, ref.scope, String(ref.subject), ref.unit, at ?? null)
  if (!a) return null
  return {
    accountId: a.id,
    scope: a.scope,
    subject: a.subject,
    unit: a.unit,
    granted: a.granted,
    reserved: a.reserved,
    used: a.used,
    available: a.granted - a.reserved - a.used,
    activeHolds: a.holds,
    periodStart: a.period_start,
    periodEnd: a.period_end,
    timeZone: a.time_zone,
    periodEndLocal: isoInZone(a.period_end, a.time_zone),
  }
}
