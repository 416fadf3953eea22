import { InputFile } from 'grammy'
import { markBlocked } from '../clients/clients.repository'
import type { Deps } from '../deps'
import { isBlocked } from './api'
import { recordSent, sentBefore } from './outbound'

/** What a file job sends: built only when it was not sent before. */
export interface OutgoingFile {
  body: string
  filename: string
  caption: string
}

/**
 * A job that sends a client one file (a transcript, /mydata): skipped when its key was recorded, the file built and
 * sent, then the result (sent, or blocked by the client) recorded under the key before the job completes — a retry
 * after the send finds the key and sends nothing twice.
 */
export async function sendFileOnce(
  deps: Deps,
  job: { key: string; botId: number; userId: number },
  build: () => Promise<OutgoingFile>,
): Promise<void> {
  if (await sentBefore(deps.db, job.key)) return
  const file = await build()
  let messageId: number | null = null
  let outcome = 'sent'
  try {
    const m = await deps
      .api(job.botId)
      .sendDocument(job.userId, new InputFile(Buffer.from(file.body, 'utf8'), file.filename), {
        caption: file.caption,
      })
    messageId = m.message_id
  } catch (err) {
    if (!isBlocked(err)) throw err
    outcome = 'blocked'
    await markBlocked(deps.db, job.botId, job.userId)
  }
  await recordSent(deps.db, { key: job.key, botId: job.botId, chatId: job.userId, messageId, outcome })
}
