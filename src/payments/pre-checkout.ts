import { sql } from 'kysely'
import { isClientBanned } from '../clients/clients.repository'
import type { DeskRuntime } from '../config/load'
import type { Deps } from '../deps'
import {
  type CapacityAccount,
  capacityAccountId,
  deskDay,
  releaseHold,
  reservePlace,
} from '../orders/capacity'
import { canTransition, InvalidTransitionError } from '../orders/order-state'
import { setHold } from '../orders/orders.repository'
import { accountForOrder } from '../orders/orders.service'
import { sellableTariffs } from '../orders/tariffs'
import { parseOrderPayload } from './payload'
import { topUpConsultationActive } from './topup'

/**
 * pre_checkout_query: Telegram asks whether it may take the client's Stars for an invoice, and waits at most
 * 10 seconds (time spent in our own queue included) for the answer. One short transaction checks the order and
 * holds a place for its start; the handler answers right after the commit.
 *
 * Nothing is granted here: a pre-checkout accepted is not a payment (the client can still cancel, or have too few
 * Stars). The consultation exists only after successful_payment.
 */

export const XTR = 'XTR'

export type PreCheckoutRefusal =
  | 'order-unknown'
  | 'order-foreign'
  | 'wrong-currency'
  | 'wrong-amount'
  | 'order-cancelled'
  | 'order-paid'
  | 'order-expired'
  | 'tariff-unavailable'
  | 'slot-started'
  | 'capacity-full'
  | 'banned'
  | 'topup-ended'
  | 'unavailable'

export type PreCheckoutDecision =
  | { ok: true; orderId: number; holdUntil: Date | null }
  | { ok: false; code: PreCheckoutRefusal; orderId?: number; params?: Record<string, string | number> }

export interface PreCheckoutInput {
  queryId: string
  fromId: number
  currency: string
  totalAmount: number
  payload: string
}

/** Thrown inside the transaction to roll back the order's move when no place is left. */
class NoPlace extends Error {
  constructor(readonly decision: PreCheckoutDecision) {
    super('no place left')
  }
}

/** Thrown inside the transaction when the day's or slot's account must be opened (or topped up) first. */
class NeedsGrant extends Error {
  constructor(readonly account: CapacityAccount) {
    super('capacity account needs a grant')
  }
}

/**
 * The decision, in one round trip in the common case: `pre_checkout_hold` (src/payments/sql/pre_checkout_hold.sql) runs the
 * checks and the hold below as one statement. What it leaves to the full path (the first pre-checkout of a day or
 * slot, whose account must be opened first; the database clock on another desk-local day than ours) it returns
 * having changed nothing, and the full path decides.
 */
export async function decidePreCheckout(
  deps: Deps,
  desk: DeskRuntime,
  q: PreCheckoutInput,
): Promise<PreCheckoutDecision> {
  const fast = await decidePreCheckoutInOneStatement(deps, desk, q)
  return fast ?? decidePreCheckoutInTransaction(deps, desk, q)
}

const CAN_RESERVE = canTransition('created', 'reserved')

const HOLD_SQL = `select o_outcome, o_code, o_hold_until, o_title, o_price, o_capacity from pre_checkout_hold(
  $1::bigint, $2::bigint, $3::bigint, $4::text, $5::integer, $6::text, $7::text[], $8::integer[], $9::integer[],
  $10::text, $11::timestamptz, $12::timestamptz, $13::double precision, $14::integer, $15::boolean)`

/**
 * Run as a named prepared statement: each pooled connection parses and plans it once instead of on every
 * pre-checkout (about 0.1 ms of PostgreSQL CPU per call).
 */
const HOLD_STATEMENT_NAME = 'pre_checkout_hold_v1'

interface HoldRow {
  o_outcome: 'ok' | 'refused' | 'retry'
  o_code: PreCheckoutRefusal | null
  o_hold_until: Date | null
  o_title: string | null
  o_price: number | null
  o_capacity: number | null
}

/** The decision in one statement, or undefined when the full path must decide (nothing was changed then). */
export async function decidePreCheckoutInOneStatement(
  deps: Deps,
  desk: DeskRuntime,
  q: PreCheckoutInput,
): Promise<PreCheckoutDecision | undefined> {
  const orderId = parseOrderPayload(q.payload)
  if (orderId === undefined) return { ok: false, code: 'order-unknown' }
  // Tariffs are read from the desk on every call (a settings change replaces them in place, src/settings/cache.ts).
  // A paused tariff is not among them: its open invoices are refused as no longer sold (tariff-unavailable).
  const tariffs = sellableTariffs(desk)
  const day = deskDay(desk, new Date())
  let row: HoldRow
  try {
    const r = await deps.pool.query<HoldRow>({
      name: HOLD_STATEMENT_NAME,
      text: HOLD_SQL,
      values: [
        desk.botId,
        orderId,
        q.fromId,
        q.currency,
        q.totalAmount,
        q.queryId,
        tariffs.map((t) => t.code),
        tariffs.map((t) => t.dailyCapacity),
        tariffs.map((t) => t.slotCapacity),
        day.iso,
        new Date(day.start),
        new Date(day.end),
        desk.holdMinutes * 60,
        desk.rules.unpaidOrderHours,
        CAN_RESERVE,
      ],
    })
    row = r.rows[0]!
  } catch (e) {
    const code = (e as { code?: string }).code
    // No place left: the statement rolled back (the order's move included), as the full path's transaction does.
    if (code === 'PC002') {
      const capacity = (e as { detail?: string }).detail
      return {
        ok: false,
        code: 'capacity-full',
        orderId,
        ...(capacity ? { params: { capacity: Number(capacity) } } : {}),
      }
    }
    // The account must be opened or topped up first: the full path does that and decides.
    if (code === 'PC001') return undefined
    throw e
  }
  if (row.o_outcome === 'retry') return undefined
  if (row.o_outcome === 'ok') return { ok: true, orderId, holdUntil: row.o_hold_until }
  const code = row.o_code!
  if (code === 'order-unknown') return { ok: false, code }
  const params: Record<string, string | number> | undefined =
    code === 'wrong-currency'
      ? { currency: q.currency }
      : code === 'wrong-amount'
        ? { amount: q.totalAmount, price: row.o_price! }
        : code === 'tariff-unavailable'
          ? { title: row.o_title! }
          : undefined
  return { ok: false, code, orderId, ...(params ? { params } : {}) }
}

/**
 * The full path: one short transaction, statement by statement. Used when the one-statement path hands over, and
 * kept as the reference the statement follows rule by rule.
 */
export async function decidePreCheckoutInTransaction(
  deps: Deps,
  desk: DeskRuntime,
  q: PreCheckoutInput,
  retried = false,
): Promise<PreCheckoutDecision> {
  const orderId = parseOrderPayload(q.payload)
  if (orderId === undefined) return { ok: false, code: 'order-unknown' }
  const run = deps.db.transaction().execute(async (trx): Promise<PreCheckoutDecision> => {
    // A hold lost to a crash right after this commit costs nothing (successful_payment takes a free place or
    // agrees a start), so this transaction does not wait for its WAL flush: the commit ends the section during
    // which the day's capacity row is locked, so it must be short. (set_config(..., true) = SET LOCAL, folded into
    // the first statement to save a round trip.)
    const locked = await trx
      .selectFrom('orders')
      .selectAll()
      .select(sql<Date>`now()`.as('db_now'))
      .select(sql<string>`set_config('synchronous_commit', 'off', true)`.as('sync'))
      .where('id', '=', orderId)
      .forUpdate()
      .executeTakeFirst()
    // Another desk's order is as unknown to this bot as a missing one.
    if (!locked || locked.bot_id !== desk.botId) return { ok: false, code: 'order-unknown' }
    const { db_now: now, sync: _sync, ...order } = locked
    const refuse = (
      code: PreCheckoutRefusal,
      params?: Record<string, string | number>,
    ): PreCheckoutDecision => ({
      ok: false,
      code,
      orderId,
      ...(params ? { params } : {}),
    })
    if (order.user_id !== q.fromId) return refuse('order-foreign')
    // An invoice issued before the client was banned must not go through either.
    if (await isClientBanned(trx, desk.botId, q.fromId)) return refuse('banned')
    if (q.currency !== XTR) return refuse('wrong-currency', { currency: q.currency })
    if (q.totalAmount !== order.price_stars)
      return refuse('wrong-amount', { amount: q.totalAmount, price: order.price_stars })
    if (order.state === 'cancelled') return refuse('order-cancelled')
    if (order.state !== 'created' && order.state !== 'reserved') return refuse('order-paid')
    // A paused tariff (src/settings, /settings) is not sold, as in the one-statement path.
    if (!sellableTariffs(desk).some((t) => t.code === order.tariff_code))
      return refuse('tariff-unavailable', { title: order.title })
    if (now.getTime() - order.created_at.getTime() > desk.rules.unpaidOrderHours * 3_600_000)
      return refuse('order-expired')
    if (order.start_mode === 'scheduled' && order.slot_start && order.slot_start.getTime() <= now.getTime())
      return refuse('slot-started')
    // A top-up takes no place: its consultation must still be active (src/payments/topup.ts).
    if (order.kind === 'topup') {
      if (!(await topUpConsultationActive(trx, order))) return refuse('topup-ended')
      const until = new Date(now.getTime() + desk.holdMinutes * 60_000)
      if (order.state === 'created') {
        if (!canTransition(order.state, 'reserved'))
          throw new InvalidTransitionError(order.id, order.state, 'reserved')
        await setHold(trx, order.id, {
          state: 'reserved',
          requestId: null,
          expiresAt: until,
          capacityKey: null,
        })
      }
      return { ok: true, orderId, holdUntil: null }
    }

    // A redelivered query, or the client retrying after a failed payment, while the hold still runs.
    if (
      order.state === 'reserved' &&
      order.hold_expires_at &&
      order.hold_expires_at.getTime() > now.getTime()
    )
      return { ok: true, orderId, holdUntil: order.hold_expires_at }

    const holdUntil = new Date(now.getTime() + desk.holdMinutes * 60_000)
    // A lapsed hold the sweeper has not released yet is released here, so the order never holds two places.
    if (order.hold_request_id) await releaseHold(trx, order.hold_request_id)
    const account = order.start_mode === 'on_request' ? undefined : accountForOrder(desk, order, now)
    // The query id makes a redelivered query replay the ledger's first decision instead of holding twice.
    const requestId = account ? `hold:${order.id}:${q.queryId}` : null

    // created -> reserved (or reserved again with a new hold), checked against the table, in one UPDATE. The hold
    // itself is recorded by the ledger (reservation and journal, under the request id kept on the order).
    if (order.state === 'created' && !canTransition(order.state, 'reserved'))
      throw new InvalidTransitionError(order.id, order.state, 'reserved')
    await setHold(trx, order.id, {
      state: 'reserved',
      requestId,
      expiresAt: holdUntil,
      capacityKey: account?.key ?? null,
    })
    // The place last: the account row it locks is shared by every pre-checkout of that day or slot.
    if (account && requestId) {
      const held = await reservePlace(trx, desk.botId, account, requestId, desk.holdMinutes * 60)
      if (!held.ok && held.reason === 'needs-grant') throw new NeedsGrant(account)
      if (!held.ok)
        throw new NoPlace(refuse('capacity-full', held.reason === 'full' ? { capacity: held.capacity } : {}))
    }
    return { ok: true, orderId, holdUntil }
  })
  return run.catch(async (e) => {
    if (e instanceof NoPlace) return e.decision
    if (!(e instanceof NeedsGrant) || retried) throw e
    // The first pre-checkout of a day or slot (or after a capacity raise): open the account, then decide again.
    await deps.db.transaction().execute((trx) => capacityAccountId(trx, desk.botId, e.account))
    return decidePreCheckoutInTransaction(deps, desk, q, true)
  })
}
