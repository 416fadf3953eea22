import type { Outbox } from '../jobs/jobs'
import { defineQueue } from '../jobs/queue'

/**
 * The lifecycle's own queues: closing a finished consultation's topic, the transcript, the sweeper. The SLA and
 * window jobs it works are declared in src/consultations/consultations.jobs.ts, where they are written.
 */

export interface TopicCloseJob {
  consultationId: number
}
export interface TranscriptJob {
  botId: number
  consultationId: number
  userId: number
  lang: string
  /** The idempotency key of this send in outbound_message (one file per request). */
  key: string
}

/** The staff topic of a closed consultation is closed once every accepted appeal is answered. */
export const topicCloseQueue = defineQueue<TopicCloseJob>('lifecycle.topic-close', {
  // At most one queued per consultation (the sweeper and the close job may both ask).
  policy: 'short',
  retryLimit: 8,
})
/** The client asked for the transcript of a closed consultation: a text file built from the stored messages. */
export const transcriptQueue = defineQueue<TranscriptJob>('lifecycle.transcript', {}, 2)
/**
 * Every minute: the safety net. Windows past their end still active, appeals past their due time or reminder
 * instant with nothing done, closed consultations whose topic can close, breached appeals left open at the end.
 * `stately`: one sweep at a time.
 */
export const lifecycleSweepQueue = defineQueue<Record<string, never>>('lifecycle.sweep', {
  policy: 'stately',
  retryLimit: 1,
  expireInSeconds: 120,
  retentionDays: 1,
})
export const LIFECYCLE_SWEEP_CRON = '* * * * *'

/** Ask for the topic of a closed consultation to be closed (after `afterSeconds`). */
export async function requestTopicClose(
  outbox: Pick<Outbox, 'send'>,
  consultationId: number,
  afterSeconds = 0,
) {
  await outbox.send(
    topicCloseQueue,
    { consultationId },
    {
      singletonKey: String(consultationId),
      ...(afterSeconds > 0 ? { startAfter: afterSeconds } : {}),
    },
  )
}
