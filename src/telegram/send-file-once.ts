import { InputFile } from 'grammy'
import { markBlocked } from '../clients/clients.repository'
import type { Deps } from '../deps'
import { isBlocked } from './api'

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
  const done = await deps.db
    .selectFrom('outbound_message')
    .select('key')
    .where('key', '=', job.key)
    .executeTakeFirst()
  if (done) return
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
  await deps.db
    .insertInto('outbound_message')
    .values({ key: job.key, bot_id: job.botId, chat_id: job.userId, message_id: messageId, outcome })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute()
}
