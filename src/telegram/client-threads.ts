import { GrammyError } from 'grammy'
import type { Db } from '../db/database'

/**
 * A consultation's place in the client's private chat (issue 26): the bot's messages sent for it (so a reply to one
 * goes to that consultation) and, when the bot has private-chat topics, its topic there. Telegram has broken
 * private-chat topics in rollouts (a send with message_thread_id refused with "message thread not found", topic
 * creation refused with BOT_FORUM_CREATE_FORBIDDEN): such a refusal marks the topic broken and the message goes to
 * the plain chat, where the client's replies and the choice of consultation still route it.
 */

/** The consultation's private topic, while it is usable. */
export async function clientThread(db: Db, consultationId: number): Promise<number | undefined> {
  const r = await db
    .selectFrom('client_topic')
    .select('thread_id')
    .where('consultation_id', '=', consultationId)
    .where('state', '=', 'open')
    .executeTakeFirst()
  return r?.thread_id ?? undefined
}

export async function markClientThreadBroken(db: Db, consultationId: number): Promise<void> {
  await db
    .updateTable('client_topic')
    .set({ state: 'broken', updated_at: new Date() })
    .where('consultation_id', '=', consultationId)
    .execute()
}

/** A refusal that says the private chat's topic cannot be used (rather than the message being wrong). */
export function isClientThreadRefused(err: unknown): boolean {
  return (
    err instanceof GrammyError &&
    err.error_code === 400 &&
    /message thread not found|TOPIC_DELETED|TOPIC_CLOSED|TOPIC_ID_INVALID|thread.*archived|BOT_FORUM/i.test(
      err.description,
    )
  )
}

/**
 * Sends into the consultation's private topic when it has a usable one, else into the plain chat; a topic Telegram
 * refuses is marked broken and the same send goes to the plain chat at once (nothing was sent the first time).
 */
export async function sendForConsultation<T>(
  db: Db,
  consultationId: number,
  send: (thread: number | undefined) => Promise<T>,
): Promise<T> {
  const thread = await clientThread(db, consultationId)
  if (thread === undefined) return send(undefined)
  try {
    return await send(thread)
  } catch (err) {
    if (!isClientThreadRefused(err)) throw err
    await markClientThreadBroken(db, consultationId)
    return send(undefined)
  }
}

/** Remember that the bot's message `messageId` in the client's chat belongs to the consultation. */
export async function recordConsultationMessage(
  db: Db,
  r: { botId: number; chatId: number; messageId: number; consultationId: number },
): Promise<void> {
  await db
    .insertInto('consultation_client_message')
    .values({
      bot_id: r.botId,
      chat_id: r.chatId,
      message_id: r.messageId,
      consultation_id: r.consultationId,
    })
    .onConflict((oc) => oc.doNothing())
    .execute()
}
