import type { DeskRuntime } from '../config/load'
import type { Db, Trx } from '../db/database'
import type { Jobs, Outbox } from '../jobs/jobs'
import { defineQueue, jobId } from '../jobs/queue'
import { closingSoonAt, reminderAt } from '../time/instants'

/**
 * Written by the payment transaction (or the Start button / scheduled start) in the same transaction that makes a
 * consultation active; its handler opens the staff topic and tells the client. Handlers must be idempotent.
 */
export const consultationActivatedQueue = defineQueue<{ consultationId: number }>('consultation.activated')

/**
 * The SLA and window queues, and the functions that schedule their jobs at the right instants. They are declared
 * here, on the floor that writes them (an activation, an admission that opens an appeal, an /extend), and worked by
 * src/lifecycle (registered in src/workers.ts): a lower floor starts work above it through the outbox.
 *
 * A scheduled job has a deterministic id derived from what it is about (`sla.breach` of appeal 12, `lifecycle.close`
 * of consultation 7 for the window ending at T). pg-boss inserts jobs with ON CONFLICT DO NOTHING on (queue, id),
 * so writing the same job twice (a replayed activation, an /extend retried, the sweeper) leaves one job. That is the
 * dedupe we rely on for scheduling: pg-boss 10's singletonKey only dedupes under the short/singleton/stately
 * policies, and only while a job is queued or active. Whatever still runs twice (a retry after a crash, a job
 * written again after the first was archived) is harmless because every handler decides under a lock with a
 * conditional UPDATE, and every notification is deduplicated by its key in outbound_message.
 *
 * Jobs carry the instant they were scheduled for; handlers re-read the current one (an /extend moves
 * access_until) and re-schedule themselves for it instead of acting early.
 */

export interface AppealJob {
  appealId: number
}
export interface WindowJob {
  consultationId: number
  /** ISO instant of access_until the job was scheduled for. */
  accessUntil: string
}
/** The topic is reminded before an appeal's due time (desk reminders.beforeDueBusinessMinutes). */
export const slaRemindQueue = defineQueue<AppealJob>('sla.remind', {}, 2)
/** At the due time: an unanswered appeal is breached and the tariff's breach policy applied, once. */
export const slaBreachQueue = defineQueue<AppealJob>('sla.breach', {}, 2)
/** Before access_until (desk reminders.beforeCloseMinutes): the client is told the window closes soon. */
export const closingSoonQueue = defineQueue<WindowJob>('lifecycle.closing-soon', {}, 2)
/** At access_until: the consultation (and its order) close; the client and the topic are told. */
export const windowCloseQueue = defineQueue<WindowJob>('lifecycle.close', {}, 2)
/** A UUID (v5 layout) from a key: the same key always names the same job (src/jobs/queue.ts). */
export { jobId } from '../jobs/queue'

type Sender = Pick<Outbox, 'send'>

/** An outbox over a plain connection or transaction (job handlers that re-schedule outside a use case). */
export function outboxOf(jobs: Jobs, q: Db | Trx): Sender {
  return { send: (queue, data, options) => jobs.send(q, queue, data, options) }
}

/**
 * The SLA jobs of an appeal that has just opened (written by the admission's transaction, or by the sweeper for an
 * appeal it finds without them): the reminder at its instant (none when the SLA is not longer than the reminder
 * lead) and the breach check at the due time. The appeal's appeal_sla row is the mark that they were written.
 */
export async function scheduleAppealSla(
  trx: Trx,
  outbox: Sender,
  desk: DeskRuntime,
  appeal: {
    id: number
    bot_id: number
    consultation_id: number
    accepted_at: Date
    sla_minutes: number
    due_at: Date
  },
): Promise<void> {
  await trx
    .insertInto('appeal_sla')
    .values({ appeal_id: appeal.id, bot_id: appeal.bot_id, consultation_id: appeal.consultation_id })
    .onConflict((oc) => oc.column('appeal_id').doNothing())
    .execute()
  const remind = reminderAt(desk, appeal)
  if (remind)
    await outbox.send(
      slaRemindQueue,
      { appealId: appeal.id },
      { startAfter: remind, id: jobId(`sla.remind:${appeal.id}`) },
    )
  await outbox.send(
    slaBreachQueue,
    { appealId: appeal.id },
    { startAfter: appeal.due_at, id: jobId(`sla.breach:${appeal.id}`) },
  )
}

/**
 * The window's jobs for its current end (written by the activation's transaction and by every change of
 * access_until): "closes soon" before the end, "closed" at the end. Keyed by the end instant, so a window moved by
 * /extend gets new jobs and the old ones find the window moved and do nothing.
 */
export async function scheduleWindowJobs(
  outbox: Sender,
  desk: DeskRuntime,
  c: { id: number; starts_at: Date | null; access_until: Date | null },
): Promise<void> {
  if (!c.starts_at || !c.access_until) return
  const data = { consultationId: c.id, accessUntil: c.access_until.toISOString() }
  const soon = closingSoonAt(desk, { starts_at: c.starts_at, access_until: c.access_until })
  if (soon)
    await outbox.send(closingSoonQueue, data, {
      startAfter: soon,
      id: jobId(`lifecycle.closing-soon:${c.id}:${data.accessUntil}`),
    })
  await outbox.send(windowCloseQueue, data, {
    startAfter: c.access_until,
    id: jobId(`lifecycle.close:${c.id}:${data.accessUntil}`),
  })
}
