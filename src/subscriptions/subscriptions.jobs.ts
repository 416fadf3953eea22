import { defineQueue } from '../jobs/queue'

/**
 * Telegram is told of a cancelled or resumed renewal by a job (editUserStarSubscription), written in the same
 * transaction as the change; the handler sends the subscription's current wish, so jobs that run out of order or
 * twice end in the state the client chose last.
 */
export const editSubscriptionQueue = defineQueue<{ subscriptionId: number }>('subscriptions.edit')

/**
 * At a period's end plus the grace: no renewal arrived, the plan lapses (the client is told; new questions are
 * refused; open ones are still answered). Keyed by the period's end: a renewal moves the end, the old job finds it
 * moved and does nothing.
 */
export const subscriptionLapseQueue = defineQueue<{ subscriptionId: number; periodEnd: string }>(
  'subscriptions.lapse',
)
