import { defineQueue } from '../jobs/queue'

/**
 * One job per admitted draft: the provider call runs here, never inside a transaction or an update handler.
 *
 * Retries are for the database only: the draft moves queued -> calling in a committed step before the call, so a
 * retried job that finds it in `calling` never calls again (the first attempt may have reached the provider: the
 * hold goes to unknown). Expiry (6 min) is longer than the longest call (llm.timeoutMs <= 5 min), so a running call
 * is never started twice; a worker that died is retried after it, well within the hold's TTL (30 min).
 */
export interface DraftJob {
  draftId: number
}

export const draftRunQueue = defineQueue<DraftJob>(
  'drafting.run',
  { retryLimit: 3, retryDelay: 5, retryBackoff: true, expireInSeconds: 360, retentionDays: 7 },
  4,
)
