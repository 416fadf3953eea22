import { sql } from 'kysely'
import type { Trx } from '../db/database'
import type { OrderState } from './orders.tables'

/**
 * The one table of allowed order moves. Every transition locks the order row and is checked here, so two racing
 * handlers (a late payment and the hold sweeper, two refunds) cannot both move the same order.
 */
export const ORDER_TRANSITIONS: Readonly<Record<OrderState, readonly OrderState[]>> = Object.freeze({
  created: ['reserved', 'cancelled', 'paid_waiting', 'active'],
  reserved: ['paid_waiting', 'active', 'cancelled', 'created'],
  paid_waiting: ['active', 'refunded'],
  active: ['closed', 'refunded'],
  closed: ['refunded', 'active'],
  cancelled: ['paid_waiting', 'active'],
  refunded: [],
})
// created/reserved -> paid_waiting|active: a successful_payment is never rejected, even for an order whose hold we
// never saw or that was cancelled meanwhile (Telegram took the client's Stars; we honour it and sort the start out).
// reserved -> created: a lapsed hold returns the order to payable; a new pre-checkout takes a new hold.
// closed -> active: a support plan renewed after its window closed (a late renewal, src/subscriptions/payment.ts) opens
// its order again with its consultation. Nothing else reaches it: activation starts only waiting consultations of
// paid orders, and a one-off order's payment is taken once, by its charge id, before any move.

export class InvalidTransitionError extends Error {
  constructor(
    readonly orderId: number,
    readonly from: OrderState,
    readonly to: OrderState,
  ) {
    super(`order ${orderId}: ${from} -> ${to} is not allowed`)
    this.name = 'InvalidTransitionError'
  }
}

export function canTransition(from: OrderState, to: OrderState): boolean {
  return ORDER_TRANSITIONS[from].includes(to)
}

/** Locks the order row for the rest of the transaction. */
export function lockOrder(trx: Trx, orderId: number) {
  return trx.selectFrom('orders').selectAll().where('id', '=', orderId).forUpdate().executeTakeFirst()
}

/** Moves a locked order; throws InvalidTransitionError if the move is not in the table. */
export async function moveOrder(
  trx: Trx,
  order: { id: number; state: OrderState },
  to: OrderState,
): Promise<void> {
  if (!canTransition(order.state, to)) throw new InvalidTransitionError(order.id, order.state, to)
  await trx
    .updateTable('orders')
    .set({ state: to, updated_at: sql`now()` })
    .where('id', '=', order.id)
    .execute()
  order.state = to
}
