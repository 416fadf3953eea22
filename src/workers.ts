import { consultationActivatedQueue } from './consultations/consultations.jobs'
import type { Deps } from './deps'
import { DRAFTING_QUEUES } from './drafting/drafting.jobs'
import { startDraftingWorkers } from './drafting/drafting.workers'
import type { QueueDef } from './jobs/queue'
import { ledgerSweepQueue, startLedgerSweeper } from './ledger/ledger.jobs'
import { LIFECYCLE_QUEUES } from './lifecycle/lifecycle.jobs'
import { startLifecycleWorkers } from './lifecycle/lifecycle.workers'
import { PAYMENT_QUEUES, startPaymentWorkers } from './payments/payments.jobs'
import { DESK_QUEUES } from './routing/routing.jobs'
import { startDeskWorkers } from './routing/routing.workers'
import { handleNotify, notifyGroupQueue, notifyQueue } from './telegram/notify'

/** Every queue of the app: all are created at start, so a send to a missing queue cannot happen silently. */
export const QUEUES: readonly QueueDef<any>[] = [
  notifyQueue,
  notifyGroupQueue,
  consultationActivatedQueue,
  ledgerSweepQueue,
  ...PAYMENT_QUEUES,
  ...DESK_QUEUES,
  ...DRAFTING_QUEUES,
  ...LIFECYCLE_QUEUES,
]

/** Starts the workers of every queue (the `worker` role, or `all`). */
export async function startWorkers(deps: Deps): Promise<void> {
  await deps.jobs.work(notifyQueue, (n) => handleNotify(deps, n))
  await deps.jobs.work(notifyGroupQueue, (n) => handleNotify(deps, n))
  await startDeskWorkers(deps)
  await startPaymentWorkers(deps)
  await startDraftingWorkers(deps)
  await startLedgerSweeper(deps.jobs, deps.ledger, { log: deps.log })
  await startLifecycleWorkers(deps)
}
