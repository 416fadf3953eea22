import { defineQueue } from '../jobs/queue'

/**
 * Telegram is told of a cancelled or resumed subscription renewal by a job (editUserStarSubscription), written in
 * the same transaction as the change (a Cancel renewal button, or a refund of a plan's payment); the handler
 * (src/subscriptions/lifecycle.ts) sends the subscription's current wish, so jobs that run out of order or twice end
 * in the state chosen last. Declared here, on the lowest floor that writes it (a refund, src/payments).
 */
export const editSubscriptionQueue = defineQueue<{ subscriptionId: number }>('subscriptions.edit')
