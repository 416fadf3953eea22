import { audit } from '../audit/audit'
import type { DeskRuntime } from '../config/load'
import type { Deps } from '../deps'
import { holdCapacity, releaseHold } from '../orders/capacity'
import { lockOrder, moveOrder } from '../orders/order-state'
import { dbNow, setHold } from '../orders/orders.repository'
import { accountForOrder, UNPAID_ORDER_TTL_HOURS } from '../orders/orders.service'
import { findTariff } from '../orders/tariffs'
import { parseOrderPayload } from './payload'

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

export async function decidePreCheckout(
  deps: Deps,
  desk: DeskRuntime,
  q: PreCheckoutInput,
): Promise<PreCheckoutDecision> {
  const orderId = parseOrderPayload(q.payload)
  if (orderId === undefined) return { ok: false, code: 'order-unknown' }
  return deps.db.transaction().execute(async (trx): Promise<PreCheckoutDecision> => {
    const order = await lockOrder(trx, orderId)
    // Another desk's order is as unknown to this bot as a missing one.
    if (!order || order.bot_id !== desk.botId) return { ok: false, code: 'order-unknown' }
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
    if (q.currency !== XTR) return refuse('wrong-currency', { currency: q.currency })
    if (q.totalAmount !== order.price_stars)
      return refuse('wrong-amount', { amount: q.totalAmount, price: order.price_stars })
    if (order.state === 'cancelled') return refuse('order-cancelled')
    if (order.state !== 'created' && order.state !== 'reserved') return refuse('order-paid')
    if (!findTariff(desk, order.tariff_code)) return refuse('tariff-unavailable', { title: order.title })

    const now = await dbNow(trx)
    if (now.getTime() - order.created_at.getTime() > UNPAID_ORDER_TTL_HOURS * 3_600_000)
      return refuse('order-expired')
    if (order.start_mode === 'scheduled' && order.slot_start && order.slot_start.getTime() <= now.getTime())
      return refuse('slot-started')

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
    let capacityKey: string | null = null
    let requestId: string | null = null
    if (order.start_mode !== 'on_request') {
      const account = accountForOrder(desk, order, now)!
      // The query id makes a redelivered query replay the ledger's first decision instead of holding twice.
      requestId = `hold:${order.id}:${q.queryId}`
      const held = await holdCapacity(trx, desk.botId, account, requestId, desk.holdMinutes * 60)
      if (!held.ok) return refuse('capacity-full', held.reason === 'full' ? { capacity: held.capacity } : {})
      capacityKey = account.key
    }
    if (order.state === 'created') await moveOrder(trx, order, 'reserved')
    await setHold(trx, order.id, {
      requestId,
      expiresAt: holdUntil,
      capacityKey,
    })
    await audit(trx, {
      botId: desk.botId,
      actorId: q.fromId,
      action: 'order.reserved',
      subjectType: 'order',
      subjectId: order.id,
      details: { hold: requestId, capacity: capacityKey, until: holdUntil.toISOString() },
    })
    return { ok: true, orderId, holdUntil }
  })
}
