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
