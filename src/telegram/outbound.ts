import type { Db } from '../db/database'

/**
 * The once-keys of sends that must not repeat (outbound_message). A job that sends checks its key first and records
 * it after Telegram answered, before the job completes: a retry after the send finds the key and sends nothing twice.
 * The window left (the job dies between the send and the record) is the at-least-once of any external call.
 */

/** What became of a send: sent, or a final answer that makes a retry pointless (blocked, forbidden, gone). */
export interface SendRecord {
  key: string
  botId: number
  chatId: number
  messageId: number | null
  outcome?: string
}

export async function sentBefore(db: Db, key: string): Promise<boolean> {
  const row = await db.selectFrom('outbound_message').select('key').where('key', '=', key).executeTakeFirst()
  return row !== undefined
}

export async function recordSent(db: Db, r: SendRecord): Promise<void> {
  await db
    .insertInto('outbound_message')
    .values({
      key: r.key,
      bot_id: r.botId,
      chat_id: r.chatId,
      message_id: r.messageId,
      outcome: r.outcome ?? 'sent',
    })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute()
}
