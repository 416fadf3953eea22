import type { Kysely } from 'kysely'
import type { Database } from '../db/database'
import type * as model from './ledger.model'
import { LedgerInputError } from './ledger.model'
import { isoInZone } from './ledger.periods'
import * as repo from './ledger.repository'

/**
 * The ledger's calls as the service makes them: a request checked and turned into the arguments of one database
 * function (ledger.repository.ts), and that function's row turned back into a result with its numbers. Shared by
 * both forms of the service (`Ledger`, own transaction; `LedgerTx`, the caller's).
 */

const MAX_REQUEST_ID = 200

/** The refusal for a failure to reach the ledger (for callers that run it in their own transaction). */
export function unavailableRefusal(
  requestId: string,
  detail = 'the ledger is temporarily unavailable',
): model.Refusal {
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

export function checkRequestId(requestId: string): void {
  if (typeof requestId !== 'string' || requestId.length === 0 || requestId.length > MAX_REQUEST_ID)
    throw new LedgerInputError(`a request id is a non-empty string of at most ${MAX_REQUEST_ID} characters`)
}

export function refKey(ref: model.AccountRef): string {
  return 'accountId' in ref ? `#${ref.accountId}` : JSON.stringify([ref.scope, String(ref.subject), ref.unit])
}

export function reserveCall(req: model.ReserveRequest, defaultTtl: number): repo.ReserveCall {
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

export async function runReserve(
  db: repo.Runner,
  req: model.ReserveRequest,
  call: repo.ReserveCall,
): Promise<model.ReserveResult> {
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
  const state = row.o_state as model.ReservationState
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
    reason: d.reason as model.RefusalReason,
    line: d.line,
    account: d.line === null ? null : (lines[d.line]?.account ?? null),
    lines,
    concurrency: d.concurrency,
    state,
  }
}

/** Stored numbers are as read before the hold; an admission reports them with its own hold included. */
export function lineDecision(l: repo.StoredLine, admitted: boolean): model.LineDecision {
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

export function actualsOf(actual: model.Actual): number[] | null {
  if (actual === undefined) return null
  const list = typeof actual === 'number' ? [actual] : [...actual]
  for (const a of list)
    if (!Number.isSafeInteger(a) || a < 0) throw new LedgerInputError(`actuals are integers >= 0 (got ${a})`)
  return list
}

export async function runSettle(
  db: repo.Runner,
  requestId: string,
  to: 'committed' | 'released' | 'unknown',
  actuals: number[] | null,
  policy: model.OverrunPolicy,
  note: string | undefined,
): Promise<model.SettleResult> {
  const row = await repo.callSettle(db, requestId, to, actuals, policy, note ?? null)
  const state = (row.o_state as model.ReservationState | null) ?? null
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

export function reservationView(r: repo.ReservationRow): model.ReservationView {
  return {
    requestId: r.request_id,
    state: r.state as model.ReservationState,
    prevState: r.prev_state as model.ReservationState | null,
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

export function settledAccount(a: {
  accountId: number
  granted: number
  reserved: number
  used: number
  holds: number
}): model.SettledAccount {
  return {
    accountId: a.accountId,
    granted: a.granted,
    reserved: a.reserved,
    used: a.used,
    available: a.granted - a.reserved - a.used,
    activeHolds: a.holds,
  }
}

export function grantCall(req: model.GrantRequest): repo.GrantCall {
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

export async function runGrant(
  db: Kysely<Database>,
  req: model.GrantRequest,
  call: repo.GrantCall,
): Promise<model.GrantResult> {
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

export async function runBalance(
  db: Kysely<Database>,
  ref: model.AccountRef,
  at?: Date,
): Promise<model.AccountNumbers | null> {
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
