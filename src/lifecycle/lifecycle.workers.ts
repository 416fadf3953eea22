import type { Deps } from '../deps'
import {
  closingSoonQueue,
  LIFECYCLE_SWEEP_CRON,
  lifecycleSweepQueue,
  slaBreachQueue,
  slaRemindQueue,
  topicCloseQueue,
  transcriptQueue,
  windowCloseQueue,
} from './lifecycle.jobs'
import { runBreach, runReminder } from './sla.service'
import { sweepLifecycle } from './sweep'
import { runTranscript } from './transcript'
import { runClosingSoon, runTopicClose, runWindowClose } from './window.service'

/** The SLA and lifecycle workers, and the sweeper's schedule (src/jobs/queues.ts starts them). */
export async function startLifecycleWorkers(deps: Deps): Promise<void> {
  await deps.jobs.work(slaRemindQueue, (d) => runReminder(deps, d.appealId))
  await deps.jobs.work(slaBreachQueue, (d) => runBreach(deps, d.appealId))
  await deps.jobs.work(closingSoonQueue, (d) => runClosingSoon(deps, d))
  await deps.jobs.work(windowCloseQueue, (d) => runWindowClose(deps, d))
  await deps.jobs.work(topicCloseQueue, (d) => runTopicClose(deps, d.consultationId))
  await deps.jobs.work(transcriptQueue, (d) => runTranscript(deps, d))
  await deps.jobs.work(lifecycleSweepQueue, () => sweepLifecycle(deps))
  await deps.jobs.boss.schedule(lifecycleSweepQueue.name, LIFECYCLE_SWEEP_CRON, {}, { tz: 'UTC' })
}
