/**
 * The ledger's domain vocabulary: what callers pass in and what they get back. A refusal is a value with a reason
 * code and the numbers behind it, so the bot's text ("0 of 3 questions left; 1 is held by a question awaiting an
 * answer; resets on 14 Dec") comes from the same numbers as the admission.
 */

/** A reservation's state. `refused` is a stored refusal (so a replay returns the same numbers); it never moves. */
export type ReservationState = 'reserved' | 'committed' | 'released' | 'expired' | 'unknown' | 'refused'

/**
 * The allowed moves (the migration writes the same pairs into `ledger_transition`, which the database functions
 * check before every state change). `unknown` never expires by itself: only a commit or a release reconciles it.
 */
export const RESERVATION_TRANSITIONS: Readonly<Record<ReservationState, readonly ReservationState[]>> =
  Object.freeze({
    reserved: ['committed', 'released', 'expired', 'unknown'],
    unknown: ['committed', 'released'],
    committed: [],
    released: [],
    expired: [],
    refused: [],
  })

export type RefusalReason =
  /** Not enough left, and releasing every hold would not make room either. */
  | 'exhausted'
  /** Not enough left now, but open holds (requests awaiting their outcome) would make room if released. */
  | 'held_by_active'
  /** The concurrency key already has `max` reservations in state reserved. */
  | 'over_concurrency'
  /** No account for the scope/subject/unit whose period contains the instant (or no account with that id). */
  | 'no_account'
  /** The account is deactivated (e.g. refunded) or its period does not contain the instant. */
  | 'inactive'
  /** The request id was already used with other accounts or amounts (or lists one account twice). */
  | 'conflict'
  /** The database could not be reached or the transaction failed: nothing was admitted (fail closed). */
  | 'unavailable'

/** What happens when a commit's actual exceeds the reserved amount (config `ledger.overrunPolicy`). */
export type OverrunPolicy = 'allow' | 'cap'

/**
 * An account: by id (e.g. a consultation's window account), or by key, resolved to the account whose period
 * contains the reservation's instant (e.g. the desk's monthly budget). A reservation is pinned to the resolved id.
 */
export type AccountRef = { accountId: number } | { scope: string; subject: string | number; unit: string }

export interface ReserveLine {
  account: AccountRef
  /** A positive integer in the account's unit (an upper bound for tokens or money; settle the actual on commit). */
  amount: number
  /**
   * The instant whose period this line is taken from, when it is not the request's: e.g. a draft for a question
   * accepted in a consultation's window, asked for after the window closed, is charged to that window's account.
   */
  at?: Date
}

export interface ConcurrencyLimit {
  /** What is limited, e.g. `drafts:expert:42`; at most `max` reservations in state reserved share it. */
  key: string
  max: number
}

export interface ReserveRequest {
  /** Stable per admission attempt (e.g. derived from the Telegram update): a replay returns the first decision. */
  requestId: string
  /** Admitted on all of these accounts or on none. */
  lines: readonly ReserveLine[]
  concurrency?: ConcurrencyLimit
  /** How long the hold may stay in state reserved before the sweeper expires it (per class of work). */
  ttlSeconds?: number
  /** The instant whose period applies (default: the database's now() of the transaction). */
  at?: Date
}

/** An account's numbers at the moment of a decision. */
export interface AccountNumbers {
  accountId: number
  scope: string
  subject: string
  unit: string
  granted: number
  reserved: number
  used: number
  /** granted - reserved - used (negative only after an overrun under the `allow` policy). */
  available: number
  /** Open reservations (reserved or outcome unknown) holding part of `reserved`. */
  activeHolds: number
  periodStart: Date
  periodEnd: Date
  timeZone: string
  /** periodEnd as an ISO timestamp in the account's time zone, e.g. 2026-12-14T00:00:00.000+03:00. */
  periodEndLocal: string
}

export interface LineDecision {
  /** The line as requested. */
  ref: { accountId?: number; scope?: string; subject?: string; unit?: string }
  amount: number
  /** Null when no account matched. For an admission: the numbers after the hold; for a refusal: as found. */
  account: AccountNumbers | null
}

export interface ConcurrencyNumbers {
  key: string
  active: number
  max: number
}

export interface Admission {
  admitted: true
  requestId: string
  /** True when this is a replay of an earlier decision (nothing was created this time). */
  replayed: boolean
  /** The reservation's current state (a replay may find it committed already). */
  state: ReservationState
  expiresAt: Date | null
  lines: LineDecision[]
  concurrency: ConcurrencyNumbers | null
}

export interface Refusal {
  admitted: false
  requestId: string
  replayed: boolean
  reason: RefusalReason
  /** Index of the line that refused (null for over_concurrency, conflict, unavailable). */
  line: number | null
  /** The refusing line's account numbers, as they were when it refused. */
  account: AccountNumbers | null
  lines: LineDecision[]
  concurrency: ConcurrencyNumbers | null
  /** The stored reservation's state (refused, or the original's state for a conflict); null if none. */
  state: ReservationState | null
  detail?: string
}

export type ReserveResult = Admission | Refusal

/** Counters of an account right after a settle. */
export interface SettledAccount {
  accountId: number
  granted: number
  reserved: number
  used: number
  available: number
  activeHolds: number
}

export interface Settled {
  ok: true
  requestId: string
  state: ReservationState
  /** True when the reservation was already in this state (same actual for a commit): nothing changed. */
  replayed: boolean
  amounts: number[]
  /** What was actually spent, as reported (commit only). */
  actuals: number[] | null
  /** What was charged to `used` (equals actuals under `allow`; capped at the amounts under `cap`). */
  charged: number[] | null
  /** An actual exceeded its reserved amount (recorded under either policy). */
  overrun: boolean
  /** Counters after this settle (empty for a replay or a mark-unknown, which change no counter). */
  accounts: SettledAccount[]
}

export type SettleRefusalReason =
  /** No reservation with this request id (or it was refused: nothing to settle). */
  | 'not_found'
  /** A second commit with another actual, or actuals that do not match the reservation's lines. */
  | 'conflict'
  /** The move is not in the transition table (e.g. commit after release or expiry). */
  | 'invalid_transition'
  | 'unavailable'

export interface SettleRefusal {
  ok: false
  requestId: string
  reason: SettleRefusalReason
  state: ReservationState | null
  /** For a conflicting second commit: what the first one recorded. */
  actuals?: number[] | null
  detail?: string
}

export type SettleResult = Settled | SettleRefusal

/** A reservation as stored (for reconciliation screens and jobs). */
export interface ReservationView {
  requestId: string
  state: ReservationState
  /** The state it came from (null for reserved and refused, which are first states). */
  prevState: ReservationState | null
  accountIds: (number | null)[]
  amounts: number[]
  actuals: number[] | null
  charged: number[] | null
  overrun: boolean
  concurrencyKey: string | null
  createdAt: Date
  expiresAt: Date | null
  settledAt: Date | null
  note: string | null
}

/** Carry-over of the previous period's unused units when granting a new period (once per previous period). */
export type CarryOver = { kind: 'none' } | { kind: 'capped'; max: number }

export interface GrantRequest {
  /** Stable id of the grant (e.g. the payment's charge id + unit): a replay does not add again. */
  requestId: string
  scope: string
  subject: string | number
  unit: string
  periodStart: Date
  periodEnd: Date
  /** May be 0: gets or creates the account without adding. */
  amount: number
  /** The zone the period was cut in (shown in refusals). Default UTC. */
  timeZone?: string
  carryOver?: CarryOver
}

export interface Granted {
  ok: true
  requestId: string
  replayed: boolean
  accountId: number
  amount: number
  carried: number
  carriedFrom: number | null
  account: AccountNumbers
}

export interface GrantRefusal {
  ok: false
  requestId: string
  /** conflict: the request id was used for another grant; period_mismatch: the period exists with another end. */
  reason: 'conflict' | 'period_mismatch' | 'unavailable'
  accountId: number | null
  detail?: string
}

export type GrantResult = Granted | GrantRefusal

export interface InvariantViolation {
  kind:
    | 'counters_vs_journal'
    | 'reserved_vs_open_reservations'
    | 'holds_vs_open_reservations'
    | 'slot_vs_reserved'
  accountId?: number
  slotKey?: string
  expected: number | Record<string, number>
  actual: number | Record<string, number>
}

export interface InvariantReport {
  ok: boolean
  accounts: number
  reservations: number
  journalRows: number
  violations: InvariantViolation[]
  /** Accounts with reserved + used > granted (possible only through an overrun under `allow`). */
  overGrant: number[]
}

/** A caller's programming error (bad amount, empty request id): thrown before any SQL runs. */
export class LedgerInputError extends Error {
  override name = 'LedgerInputError'
}

/**
 * The actual spent: omitted = each line's reserved amount; a number = the actual of a one-line reservation; an
 * array = per line, in the order of the reserve request.
 */
export type Actual = number | readonly number[] | undefined
