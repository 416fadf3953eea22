import { defineQueue } from '../jobs/queue'

/** Activates a consultation at its agreed start (a scheduled slot, or a start agreed after a late payment). */
export const scheduledStartQueue = defineQueue<{ consultationId: number; startsAt: string }>(
  'orders.scheduled-start',
)

/** Every minute: lapsed capacity holds, stale unpaid orders, ended Start periods (see sweepOrders). */
export const ordersSweepQueue = defineQueue<Record<string, never>>('orders.sweep', {
  retryLimit: 1,
  expireInSeconds: 60,
})
