import { defineQueue } from '../jobs/queue'

/** The renewal's wish sent to Telegram (declared on the orders floor: a refund writes it too). */
export { editSubscriptionQueue } from '../orders/plan.jobs'

/**
 * At a period's end plus the grace: no renewal arrived, the plan lapses (the client is told; new questions are
 * refused; open ones are still answered). Keyed by the period's end: a renewal moves the end, the old job finds it
 * moved and does nothing.
 */
export const subscriptionLapseQueue = defineQueue<{ subscriptionId: number; periodEnd: string }>(
  'subscriptions.lapse',
)

/**
 * A period paid ahead of its start (a change of plan starts when the old paid time ends, so its charges arrive
 * before the periods they buy): at the period's start the unused questions of the period before move in, by the
 * plan's carry-over, once (the ledger's grant request id).
 */
export const subscriptionCarryQueue = defineQueue<{ subscriptionId: number; number: number }>(
  'subscriptions.carry',
)

/**
 * A day before Telegram charges the next renewal: the client is told when and how much, with Cancel renewal. Keyed
 * by the charge that scheduled it: a later charge, a cancelled renewal, a change of plan or a lapse make it a no-op.
 */
export const subscriptionReminderQueue = defineQueue<{ subscriptionId: number; charge: string }>(
  'subscriptions.remind',
)

/**
 * A first charge that grants nothing (its amount is not the link's price, or the change it pays is void): its Star
 * subscription is cancelled with Telegram so it does not renew (there is no subscription row to ask the wish of).
 */
export const cancelChargeQueue = defineQueue<{ botId: number; userId: number; charge: string }>(
  'subscriptions.cancel-charge',
)

/**
 * A first charge for a plan deleted before it arrived (charge-refusal.ts): refunded in full without waiting for an
 * admin, through the one refund path (src/payments/refunds.ts: claimed, refundStarPayment, applied once), so the
 * Stars go back even when nobody is looking. A failed attempt throws and is retried; after the retries the staff
 * alert's Refund button is still there.
 */
export const refundChargeQueue = defineQueue<{ botId: number; paymentId: number }>(
  'subscriptions.refund-charge',
)
