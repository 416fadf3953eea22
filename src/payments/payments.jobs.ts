import type { Deps } from '../deps'
import { DISPUTE_QUEUES, startDisputeWorkers } from '../disputes/disputes.jobs'
import type { QueueDef } from '../jobs/queue'
import { ordersSweepQueue, scheduledStartQueue } from '../orders/orders.jobs'
import { runScheduledStart, sweepOrders } from '../orders/orders.service'
import { RECONCILE_CRON, reconcileQueue, runReconciliation } from './reconciliation'

/** Every queue of orders, payments and disputes (listed in src/jobs/queues.ts). */
export const PAYMENT_QUEUES: readonly QueueDef<any>[] = [
  scheduledStartQueue,
  ordersSweepQueue,
  reconcileQueue,
  ...DISPUTE_QUEUES,
]

/** Workers and schedules: the order sweeper every minute, the reconciliation daily. */
export async function startPaymentWorkers(deps: Deps): Promise<void> {
  await deps.jobs.work(scheduledStartQueue, (d) => runScheduledStart(deps, d))
  await deps.jobs.work(ordersSweepQueue, () => sweepOrders(deps))
  await deps.jobs.work(reconcileQueue, (d) => runReconciliation(deps, d))
  await startDisputeWorkers(deps)
  await deps.jobs.boss.schedule(ordersSweepQueue.name, '* * * * *', {}, { tz: 'UTC' })
  await deps.jobs.boss.schedule(reconcileQueue.name, RECONCILE_CRON, {}, { tz: 'UTC' })
}
