import { commandsQueue, handleCommandsJob } from './bot/commands'
import { settleHeld } from './consultations/choice'
import { clientTopicQueue, handleClientTopic } from './consultations/client-topic'
import {
  closingSoonQueue,
  consultationActivatedQueue,
  slaBreachQueue,
  slaRemindQueue,
  windowCloseQueue,
} from './consultations/consultations.jobs'
import { heldSettleQueue } from './consultations/several'
import { runScheduledStart } from './consultations/start.service'
import type { Deps } from './deps'
import {
  disputeCloseTopicQueue,
  disputeNoteQueue,
  disputeRelayQueue,
  disputeTopicQueue,
  handleDisputeCloseTopic,
  handleDisputeNote,
  handleDisputeRelay,
  handleDisputeTopic,
} from './disputes/disputes.jobs'
import { draftRunQueue } from './drafting/drafting.jobs'
import { requestHandoffSummary } from './drafting/handoff'
import { runDraft } from './drafting/run'
import { handleOwnerAlert, ownerAlertQueue } from './experts/alerts'
import { handoffSummaryQueue } from './experts/handoff.jobs'
import type { JobHandler } from './jobs/jobs'
import type { QueueDef } from './jobs/queue'
import { retentionQueue, startRetention } from './jobs/retention'
import { ledgerSweepQueue, startLedgerSweeper } from './ledger/ledger.jobs'
import {
  LIFECYCLE_SWEEP_CRON,
  lifecycleSweepQueue,
  topicCloseQueue,
  transcriptQueue,
} from './lifecycle/lifecycle.jobs'
import { runBreach, runReminder } from './lifecycle/sla.service'
import { runStartReminder } from './lifecycle/start-reminders'
import { sweepLifecycle } from './lifecycle/sweep'
import { runTranscript } from './lifecycle/transcript'
import { runClosingSoon, runTopicClose, runWindowClose } from './lifecycle/window.service'
import { metrics } from './metrics'
import {
  ordersSweepQueue,
  scheduledStartQueue,
  startReminderQueue,
  waitlistHoldQueue,
} from './orders/orders.jobs'
import { sweepOrders } from './orders/orders.service'
import { runWaitlistHoldEnd } from './orders/waitlist'
import { RECONCILE_CRON, reconcileQueue, runReconciliation } from './payments/reconciliation'
import { runExport } from './privacy/export'
import { runForgetTopic } from './privacy/forget'
import { exportQueue, forgetTopicQueue } from './privacy/privacy.jobs'
import { runLane } from './routing/delivery'
import { DESK_SWEEP_CRON, deskInQueue, deskOutQueue, deskSweepQueue } from './routing/routing.jobs'
import { openTopic, sweepLanes } from './routing/routing.workers'
import { GROUPS_CHECK_CRON, groupsCheckQueue, runGroupsCheck } from './setup/setup.jobs'
import { runRefundCharge } from './subscriptions/charge-refusal'
import { runEditSubscription, runLapse } from './subscriptions/lifecycle'
import { runCancelCharge, runCarry, runRenewalReminder } from './subscriptions/renewal-jobs'
import {
  cancelChargeQueue,
  editSubscriptionQueue,
  refundChargeQueue,
  subscriptionCarryQueue,
  subscriptionLapseQueue,
  subscriptionReminderQueue,
} from './subscriptions/subscriptions.jobs'
import { jobSendContext, withSendContext } from './telegram/budget'
import { handleNotify, notifyGroupQueue, notifyPaymentQueue, notifyQueue } from './telegram/notify'
import { DEAD_LETTER_WATCH_CRON, deadLetterWatchQueue, runDeadLetterWatch } from './telegram/private-alerts'

/**
 * The wiring of the outbox: every queue of the app and the handler that works it. Queues are declared by the floor
 * that writes them (a lower floor may write a queue an upper floor works: consultation.activated is written by the
 * activation and worked by the topic lane); which code works which queue is decided here, above every feature.
 */

/** Every queue of the app: all are created at start, so a send to a missing queue cannot happen silently. */
export const QUEUES: readonly QueueDef<any>[] = [
  notifyQueue,
  notifyGroupQueue,
  notifyPaymentQueue,
  consultationActivatedQueue,
  clientTopicQueue,
  heldSettleQueue,
  ledgerSweepQueue,
  // orders, payments and disputes
  scheduledStartQueue,
  startReminderQueue,
  ordersSweepQueue,
  waitlistHoldQueue,
  reconcileQueue,
  disputeTopicQueue,
  disputeNoteQueue,
  disputeRelayQueue,
  disputeCloseTopicQueue,
  // the desk's lanes
  deskInQueue,
  deskOutQueue,
  deskSweepQueue,
  // drafting
  draftRunQueue,
  // a hand-over's summary for the new owner (declared by experts, worked by drafting)
  handoffSummaryQueue,
  // experts: the owner's private alerts
  ownerAlertQueue,
  // SLA and window lifecycle
  slaRemindQueue,
  slaBreachQueue,
  closingSoonQueue,
  windowCloseQueue,
  topicCloseQueue,
  transcriptQueue,
  lifecycleSweepQueue,
  // data rights (/mydata, /forget)
  exportQueue,
  forgetTopicQueue,
  // operations: retention of the tables that only grow; dead letters told to the admins
  retentionQueue,
  deadLetterWatchQueue,
  // subscriptions (issue 12)
  editSubscriptionQueue,
  subscriptionLapseQueue,
  subscriptionCarryQueue,
  subscriptionReminderQueue,
  cancelChargeQueue,
  refundChargeQueue,
  groupsCheckQueue,
  // the command menus, set again when a desk's staff or groups change
  commandsQueue,
]

/** Starts the workers of every queue and the schedules of the sweepers (the `worker` role, or `all`). */
export async function startWorkers(deps: Deps): Promise<void> {
  // Every handler's Telegram calls run in a job's send context: a call that would wait for one chat's window longer
  // than a moment throws BudgetWait, and the job is written again for when the window opens (src/jobs/jobs.ts),
  // so no worker sits on one chat while other chats' jobs queue behind it. The lanes set their own context inside.
  const scale = deps.config.telegramLimits.windowScale
  const jobs = {
    boss: deps.jobs.boss,
    work: <T>(queue: QueueDef<T>, handler: JobHandler<T>) =>
      deps.jobs.work(queue, (data, job) =>
        withSendContext(jobSendContext(queue.name, data, scale), () => handler(data, job)),
      ),
  }
  await jobs.work(notifyQueue, (n) => handleNotify(deps, n))
  await jobs.work(notifyGroupQueue, (n) => handleNotify(deps, n))
  // Payment and activation confirmations: a queue and workers of their own, so nothing anyone else causes (a
  // stranger's refusals, a burst of receipts) is ever ahead of them.
  await jobs.work(notifyPaymentQueue, (n) => handleNotify(deps, n))

  // The desk: the two lanes, the activation job (topic and card right away) and the lane sweeper.
  await jobs.work(consultationActivatedQueue, ({ consultationId }) => openTopic(deps, consultationId))
  await jobs.work(clientTopicQueue, ({ consultationId }) => handleClientTopic(deps, consultationId))
  await jobs.work(heldSettleQueue, async (job) => {
    await settleHeld(deps, job)
  })
  await jobs.work(deskInQueue, ({ consultationId }) => runLane(deps, consultationId, 'in'))
  await jobs.work(deskOutQueue, ({ consultationId }) => runLane(deps, consultationId, 'out'))
  await jobs.work(deskSweepQueue, () => sweepLanes(deps))
  await jobs.boss.schedule(deskSweepQueue.name, DESK_SWEEP_CRON, {}, { tz: 'UTC' })

  // Orders, payments, disputes: the order sweeper every minute, the reconciliation daily.
  await jobs.work(scheduledStartQueue, (d) => runScheduledStart(deps, d))
  await jobs.work(startReminderQueue, (d) => runStartReminder(deps, d))
  await jobs.work(ordersSweepQueue, () => sweepOrders(deps))
  await jobs.work(waitlistHoldQueue, (d) => runWaitlistHoldEnd(deps, d))
  await jobs.work(reconcileQueue, (d) => runReconciliation(deps, d))
  await jobs.work(disputeTopicQueue, (d) => handleDisputeTopic(deps, d))
  await jobs.work(disputeNoteQueue, (d) => handleDisputeNote(deps, d))
  await jobs.work(disputeRelayQueue, (d) => handleDisputeRelay(deps, d))
  await jobs.work(disputeCloseTopicQueue, (d) => handleDisputeCloseTopic(deps, d))
  await jobs.boss.schedule(ordersSweepQueue.name, '* * * * *', {}, { tz: 'UTC' })
  await jobs.boss.schedule(reconcileQueue.name, RECONCILE_CRON, {}, { tz: 'UTC' })

  // Experts: the owner's private alert of each new question.
  await jobs.work(ownerAlertQueue, (a) => handleOwnerAlert(deps, a))
  await jobs.work(commandsQueue, (d) => handleCommandsJob(deps, d))

  // Drafting: one provider call per admitted draft.
  await jobs.work(draftRunQueue, ({ draftId }) => runDraft(deps, draftId))
  await jobs.work(handoffSummaryQueue, async (j) => {
    await requestHandoffSummary(deps, j)
  })

  await startLedgerSweeper(deps.jobs, deps.ledger, { log: deps.log })

  // SLA and window lifecycle, and its sweeper.
  await jobs.work(slaRemindQueue, async (d) => {
    const r = await runReminder(deps, d.appealId)
    if (r === 'reminded') metrics.slaReminders.inc()
    return r
  })
  await jobs.work(slaBreachQueue, async (d) => {
    const r = await runBreach(deps, d.appealId)
    if (r.status === 'breached') metrics.slaBreaches.inc({ outcome: r.outcome })
    return r
  })
  await jobs.work(closingSoonQueue, (d) => runClosingSoon(deps, d))
  await jobs.work(windowCloseQueue, (d) => runWindowClose(deps, d))
  await jobs.work(topicCloseQueue, (d) => runTopicClose(deps, d.consultationId))
  await jobs.work(transcriptQueue, (d) => runTranscript(deps, d))
  await jobs.work(lifecycleSweepQueue, () => sweepLifecycle(deps))
  await jobs.boss.schedule(lifecycleSweepQueue.name, LIFECYCLE_SWEEP_CRON, {}, { tz: 'UTC' })

  // Set-up: a look at every desk's staff groups every few minutes (Topics turned off sends no update).
  await jobs.work(groupsCheckQueue, () => runGroupsCheck(deps))
  await jobs.boss.schedule(groupsCheckQueue.name, GROUPS_CHECK_CRON, {}, { tz: 'UTC' })

  // Data rights.
  await jobs.work(exportQueue, (d) => runExport(deps, d))
  await jobs.work(forgetTopicQueue, (d) => runForgetTopic(deps, d))
  await startRetention(deps.jobs, deps.db, deps.log, deps.config.desks)
  // Operations: a job that went to the dead letters is told privately to the admins, once (issue 25).
  await jobs.work(deadLetterWatchQueue, () => runDeadLetterWatch(deps))
  await jobs.boss.schedule(deadLetterWatchQueue.name, DEAD_LETTER_WATCH_CRON, {}, { tz: 'UTC' })
  // Subscriptions: Telegram told of a cancelled/resumed renewal; the lapse at period end + grace.
  await jobs.work(editSubscriptionQueue, (d) => runEditSubscription(deps, d))
  await jobs.work(subscriptionLapseQueue, (d) => runLapse(deps, d))
  // Issue 22: the carry-over of a period paid ahead, the renewal reminder, a refused first charge cancelled.
  await jobs.work(subscriptionCarryQueue, (d) => runCarry(deps, d))
  await jobs.work(subscriptionReminderQueue, (d) => runRenewalReminder(deps, d))
  await jobs.work(cancelChargeQueue, (d) => runCancelCharge(deps, d))
  await jobs.work(refundChargeQueue, (d) => runRefundCharge(deps, d))
}
