import {
  outboxOf,
  scheduleAppealSla,
  slaBreachQueue,
  slaRemindQueue,
  windowCloseQueue,
} from '../consultations/consultations.jobs'
import { refreshTopic } from '../consultations/desk.service'
import { clockNow } from '../db/clock'
import type { Deps } from '../deps'
import { errorSummary } from '../jobs/jobs'
import { lockConsultationKey } from '../routing/desk-consultation.repository'
import { reminderAt } from '../time/instants'
import { requestTopicClose } from './lifecycle.jobs'
import {
  overdueAppeals,
  overdueWindows,
  staleBreachTitles,
  topicsToClose,
  unflaggedBreachedAtEnd,
  unremindedAppeals,
  unscheduledAppeals,
} from './lifecycle.repository'
import { flagIfUnanswered } from './sla.refund-flag'

/**
 * The safety net behind the scheduled jobs, every minute: a job can be lost for good (dead-lettered after long
 * trouble) or never written (an appeal opened before this code ran). The sweeper writes the SLA jobs of open
 * appeals that have none, finds what is overdue and writes the same jobs again (a fresh id: the first may be
 * archived), which decide under their locks as always; so a sweep racing a job is just one more harmless run.
 * GRACE_SECONDS leaves the scheduled jobs time to run first.
 */
export const GRACE_SECONDS = 30
/** The desk's breach mark in topic names (src/routing/topics.ts). */
const BREACHED_ICON = '🔴'
const BATCH = 200

export interface SweepCounts {
  scheduled: number
  titles: number
  windows: number
  breaches: number
  reminders: number
  refundFlags: number
  topics: number
}

export async function sweepLifecycle(deps: Deps): Promise<SweepCounts> {
  const out = outboxOf(deps.jobs, deps.db)
  const counts: SweepCounts = {
    scheduled: 0,
    titles: 0,
    windows: 0,
    breaches: 0,
    reminders: 0,
    refundFlags: 0,
    topics: 0,
  }

  // One short transaction per row, each taking the consultation's key lock first (the desk's lock order).
  for (const a of await unscheduledAppeals(deps.db, BATCH)) {
    await deps.jobs.transaction(deps.db, async (trx, outbox) => {
      await lockConsultationKey(trx, a.consultation_id)
      await scheduleAppealSla(trx, outbox, deps.desk(a.bot_id), a)
    })
    counts.scheduled++
  }

  for (const w of await overdueWindows(deps.db, GRACE_SECONDS, BATCH)) {
    await out.send(windowCloseQueue, { consultationId: w.id, accessUntil: w.access_until.toISOString() })
    counts.windows++
  }
  for (const id of await overdueAppeals(deps.db, GRACE_SECONDS, BATCH)) {
    await out.send(slaBreachQueue, { appealId: id })
    counts.breaches++
  }
  const now = await clockNow(deps.db)
  for (const a of await unremindedAppeals(deps.db, BATCH)) {
    const at = reminderAt(deps.desk(a.bot_id), a)
    if (!at || at.getTime() > now.getTime() - GRACE_SECONDS * 1000) continue
    await out.send(slaRemindQueue, { appealId: a.id })
    counts.reminders++
  }
  for (const id of await unflaggedBreachedAtEnd(deps.db, BATCH)) {
    try {
      if (await flagIfUnanswered(deps, id)) counts.refundFlags++
    } catch (err) {
      deps.log.warn({ appeal: id, err: errorSummary(err) }, 'refund flag failed; next sweep retries')
    }
  }
  // The desk renames a topic when asked; an answer to a breached appeal does not ask, so the 🔴 is cleared here.
  for (const c of await staleBreachTitles(deps.db, BREACHED_ICON, BATCH)) {
    await deps.jobs.transaction(deps.db, (trx, outbox) => refreshTopic(trx, outbox, c, { title: true }))
    counts.titles++
  }

  for (const id of await topicsToClose(deps.db, BATCH)) {
    await requestTopicClose(out, id)
    counts.topics++
  }
  for (const q of [windowCloseQueue, slaBreachQueue, slaRemindQueue]) deps.jobs.nudge(q)
  return counts
}
