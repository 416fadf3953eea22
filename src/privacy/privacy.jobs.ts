import { defineQueue } from '../jobs/queue'

/**
 * The data-rights jobs (issue 18): the export file for /mydata, and the deletion of each staff topic of a client
 * who used /forget (issue 26; the note + close when the bot may not delete it). Both talk to Telegram, so they run after the transaction that decided them.
 */

export interface ExportJob {
  botId: number
  userId: number
  lang: string
  /** Idempotency key in outbound_message: one file per request. */
  key: string
}

export interface ForgetTopicJob {
  botId: number
  /** The consultation of the topic (0: a dispute's topic, see disputeId). */
  consultationId: number
  /** A dispute's topic (issue 26): deleted like a consultation's. */
  disputeId?: number
  /** The topic's staff group (absent in jobs queued before several groups: the desk's home group). */
  chatId?: number
  threadId: number
  /** Idempotency key in outbound_message: one note per topic. */
  key: string
}

export const exportQueue = defineQueue<ExportJob>('privacy.export', {}, 1)
/**
 * Staff-group calls (a deletion, or a note, a rename, a close): the group's budget is small, one at a time. `stately` with the job's
 * key as singletonKey: one queued and one running per topic, so a repeat runs after the first recorded its outcome.
 */
export const forgetTopicQueue = defineQueue<ForgetTopicJob>(
  'privacy.forget-topic',
  { policy: 'stately', retryLimit: 8 },
  1,
)
