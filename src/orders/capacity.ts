import { DateTime } from 'luxon'
import type { DeskRuntime } from '../config/load'
import type { Db, Trx } from '../db/database'
import type { ReserveResult } from '../ledger/ledger.model'
import { counted, LedgerTx } from '../ledger/ledger.service'
import { nextOpening } from '../time/business-time'
import { deskSchedule } from '../time/schedule'

/**
 * How many consultations a desk starts, as quota-ledger accounts (issue 3). What a "place" is:
 *
 * - immediate: `day:<tariff>:<YYYY-MM-DD>` — the tariff's `dailyCapacity` starts per desk-local working day. The day
 *   is the one the pre-checkout happens on (the window starts at payment, seconds later), or on a day without
 *   working hours the next working day (see workingDay).
 * - scheduled: `slot:<tariff>:<epoch ms>` — the tariff's `slotCapacity` clients per announced slot.
 * - on_request: nothing is held at pre-checkout (the start day is unknown); pressing Start takes a place of that
 *   day's `day:` account, and is refused with the next free day when the day is full.
 *
 * A hold is a ledger reservation with an expiry (`holdMinutes`): taken at pre-checkout, committed in the
 * successful_payment transaction, released by the hold sweeper when it lapses (which frees the place). Accounts are
 * created on first use and granted the configured capacity; a capacity raised in the settings tops the account up
 * at the next hold (a lowered one applies to days not yet opened — places already sold are never taken back).
 */

export const CAPACITY_SCOPE = 'desk-capacity'
export const CAPACITY_UNIT = 'starts'

export interface CapacityAccount {
  /** 'day:<tariff>:<date>' | 'slot:<tariff>:<epoch ms>' */
  key: string
  capacity: number
  periodStart: Date
  periodEnd: Date
  timeZone: string
}

/** The local day containing `at` in a zone, remembered per zone: every pre-checkout of a day asks for the same one. */
const lastDay = new Map<string, { start: number; end: number; iso: string }>()
function localDay(zone: string, at: Date): { start: number; end: number; iso: string } {
  const t = at.getTime()
  const hit = lastDay.get(zone)
  if (hit && hit.start <= t && t < hit.end) return hit
  const day = DateTime.fromJSDate(at, { zone }).startOf('day')
  const d = { start: day.toMillis(), end: day.plus({ days: 1 }).toMillis(), iso: day.toISODate()! }
  lastDay.set(zone, d)
  return d
}

/** The desk-local working day whose places a start at `at` takes: its start and end instants and its ISO date. */
export function deskDay(desk: DeskRuntime, at: Date): { start: number; end: number; iso: string } {
  return workingDay(desk, at)
}

/**
 * Daily places count working days only (issue 14): a day without working hours (a weekend, a holiday) has no
 * places of its own; a start on it takes a place of the next working day, the day its answers begin. A working day
 * is its own. Remembered per desk schedule for the last day asked (every pre-checkout of a day asks for the same
 * one); a settings change replaces the desk's schedule object, so the new hours are read at once.
 */
const lastWorkingDay = new WeakMap<
  DeskRuntime['schedule'],
  { from: number; to: number; day: ReturnType<typeof localDay> }
>()
function workingDay(desk: DeskRuntime, at: Date): { start: number; end: number; iso: string } {
  const zone = desk.schedule.timezone
  const t = at.getTime()
  const hit = lastWorkingDay.get(desk.schedule)
  if (hit && hit.from <= t && t < hit.to) return hit.day
  const own = localDay(zone, at)
  const day = localDay(zone, nextOpening(deskSchedule(desk), new Date(own.start)))
  lastWorkingDay.set(desk.schedule, { from: own.start, to: own.end, day })
  return day
}

export function dayAccount(
  desk: DeskRuntime,
  tariffCode: string,
  capacity: number,
  at: Date,
): CapacityAccount {
  const day = workingDay(desk, at)
  return {
    key: `day:${tariffCode}:${day.iso}`,
    capacity,
    periodStart: new Date(day.start),
    periodEnd: new Date(day.end),
    timeZone: desk.schedule.timezone,
  }
}

export function slotAccount(
  desk: DeskRuntime,
  tariffCode: string,
  capacity: number,
  slot: Date,
  windowMinutes: number,
): CapacityAccount {
  return {
    key: `slot:${tariffCode}:${slot.getTime()}`,
    capacity,
    periodStart: slot,
    periodEnd: new Date(slot.getTime() + windowMinutes * 60_000),
    timeZone: desk.schedule.timezone,
  }
}

export type HoldResult =
  | { ok: true }
  | { ok: false; reason: 'full'; capacity: number; taken: number; held: number }
  | { ok: false; reason: 'refused'; detail: string }

/**
 * The ledger inside the caller's transaction. The overrun policy does not matter here (a place is committed with
 * its reserved amount, 1); the TTL is given per hold.
 */
function ledger(trx: Trx): LedgerTx {
  return new LedgerTx(trx, 'allow', 0)
}

function subjectOf(botId: number, a: CapacityAccount): string {
  return `${botId}:${a.key}`
}

/**
 * The account of a day or slot, created on first use with the configured capacity. Grants are idempotent by request
 * id, so concurrent first uses create and grant it once. A capacity raised since (a settings change while the desk
 * runs, issue 24) tops the account up by the difference, under the account's row lock, in a grant named by the
 * numbers it moves between (`:from:<granted>:to:<capacity>`): the first grant's id cannot carry a new amount (the
 * same id with other numbers is a conflict), and the lock makes two processes raising it at once add it once. The
 * common case (the account exists with at least the configured capacity) is one indexed read and no grant call:
 * this runs on every pre-checkout.
 */
export async function capacityAccountId(trx: Trx, botId: number, a: CapacityAccount): Promise<number> {
  const subject = subjectOf(botId, a)
  const read = (lock: boolean) => {
    const q = trx
      .selectFrom('ledger_account')
      .select(['id', 'granted'])
      .where('scope', '=', CAPACITY_SCOPE)
      .where('subject', '=', subject)
      .where('unit', '=', CAPACITY_UNIT)
      .where('period_start', '=', a.periodStart)
    return (lock ? q.forUpdate() : q).executeTakeFirst()
  }
  const found = await read(false)
  if (found && found.granted >= a.capacity) return found.id
  const l = ledger(trx)
  const base = {
    scope: CAPACITY_SCOPE,
    subject,
    unit: CAPACITY_UNIT,
    periodStart: a.periodStart,
    periodEnd: a.periodEnd,
    timeZone: a.timeZone,
  }
  if (!found) {
    const g = await l.grant({ ...base, requestId: `cap:${subject}`, amount: a.capacity })
    // A conflict: another process opened it first with another capacity; topped up below if this one is larger.
    if (!g.ok && g.reason !== 'conflict')
      throw new Error(`capacity account ${subject}: grant refused (${g.reason})`)
    if (g.ok && g.account.granted >= a.capacity) return g.accountId
  }
  const locked = await read(true)
  if (!locked) throw new Error(`capacity account ${subject}: not found after its grant`)
  if (locked.granted < a.capacity) {
    const g = await l.grant({
      ...base,
      requestId: `cap:${subject}:from:${locked.granted}:to:${a.capacity}`,
      amount: a.capacity - locked.granted,
    })
    if (!g.ok) throw new Error(`capacity account ${subject}: top-up refused (${g.reason})`)
  }
  return locked.id
}

function fullOf(r: ReserveResult, capacity: number): HoldResult {
  if (r.admitted) return { ok: true }
  if ((r.reason === 'exhausted' || r.reason === 'held_by_active') && r.account)
    return { ok: false, reason: 'full', capacity, taken: r.account.used, held: r.account.reserved }
  return { ok: false, reason: 'refused', detail: `${r.reason}${r.detail ? `: ${r.detail}` : ''}` }
}

/**
 * Reserves one place on a day's or slot's account, named by its key (the ledger resolves it), in one statement.
 * This locks the account row until the caller's transaction ends, and every pre-checkout of that day or slot
 * wants the row: call it as the last statement before the commit. `needs-grant` means the account does not exist
 * yet or holds less than the configured capacity: grant it (capacityAccountId) in a transaction of its own and try
 * again.
 */
export async function reservePlace(
  trx: Trx,
  botId: number,
  account: CapacityAccount,
  requestId: string,
  ttlSeconds: number,
): Promise<HoldResult | { ok: false; reason: 'needs-grant' }> {
  const r = await ledger(trx).reserve(
    {
      requestId,
      lines: [
        {
          account: { scope: CAPACITY_SCOPE, subject: subjectOf(botId, account), unit: CAPACITY_UNIT },
          amount: 1,
        },
      ],
      ttlSeconds,
      at: account.periodStart,
    },
    // Not a refusal yet: the caller opens the account and asks again; the decision it keeps is counted below.
    { uncounted: true },
  )
  if (!r.admitted && r.reason === 'no_account') return { ok: false, reason: 'needs-grant' }
  if (!r.admitted && r.account && r.account.granted < account.capacity)
    return { ok: false, reason: 'needs-grant' }
  return fullOf(counted(r), account.capacity)
}

/**
 * Holds one place for `ttlSeconds` (a ledger reservation with that TTL; the ledger's sweeper expires it).
 * `requestId` makes a replay return the first decision. The reservation is taken at the account's period start (a
 * slot's period lies in the future).
 */
export async function holdCapacity(
  trx: Trx,
  botId: number,
  account: CapacityAccount,
  requestId: string,
  ttlSeconds: number,
): Promise<HoldResult> {
  const accountId = await capacityAccountId(trx, botId, account)
  const r = await ledger(trx).reserve({
    requestId,
    lines: [{ account: { accountId }, amount: 1 }],
    ttlSeconds,
    at: account.periodStart,
  })
  return fullOf(r, account.capacity)
}

/** Commits a hold taken at pre-checkout; false when it is no longer held (lapsed and expired/released, or unknown). */
export async function commitHold(trx: Trx, requestId: string): Promise<boolean> {
  const r = await ledger(trx).commit(requestId, undefined, { note: 'paid' })
  return r.ok && r.state === 'committed'
}

/** Releases a hold (lapsed, or refunded before use); a hold already settled stays as it is. */
export async function releaseHold(trx: Trx, requestId: string, note = 'hold lapsed'): Promise<void> {
  await ledger(trx).release(requestId, { note })
}

/** Takes a place outright (reserve and commit in one step): a late payment, a Start press, an agreed start. */
export async function takeCapacity(
  trx: Trx,
  botId: number,
  account: CapacityAccount,
  requestId: string,
): Promise<HoldResult> {
  const held = await holdCapacity(trx, botId, account, requestId, 60)
  if (!held.ok) return held
  const committed = await commitHold(trx, requestId)
  return committed ? held : { ok: false, reason: 'refused', detail: 'commit refused' }
}

/**
 * Gives a place taken for good back to its day or slot (a start moved elsewhere, or refunded before it began): one
 * more unit granted on the account, idempotent by `requestId`.
 */
export async function returnPlace(trx: Trx, botId: number, account: CapacityAccount, requestId: string) {
  const g = await ledger(trx).grant({
    requestId,
    scope: CAPACITY_SCOPE,
    subject: subjectOf(botId, account),
    unit: CAPACITY_UNIT,
    periodStart: account.periodStart,
    periodEnd: account.periodEnd,
    timeZone: account.timeZone,
    amount: 1,
  })
  if (!g.ok) throw new Error(`capacity ${account.key}: place not returned (${g.reason})`)
}

/** Free places per account (the configured capacity for an account not opened yet). */
export async function freePlaces(q: Db | Trx, botId: number, accounts: CapacityAccount[]): Promise<number[]> {
  if (accounts.length === 0) return []
  const rows = await q
    .selectFrom('ledger_account')
    .select(['subject', 'granted', 'reserved', 'used'])
    .where('scope', '=', CAPACITY_SCOPE)
    .where('unit', '=', CAPACITY_UNIT)
    .where(
      'subject',
      'in',
      accounts.map((a) => subjectOf(botId, a)),
    )
    .execute()
  const bySubject = new Map(rows.map((r) => [r.subject, r]))
  return accounts.map((a) => {
    const r = bySubject.get(subjectOf(botId, a))
    if (!r) return a.capacity
    return Math.max(0, Math.max(r.granted, a.capacity) - r.reserved - r.used)
  })
}
