import { sql } from 'kysely'
import { audit } from '../audit/audit'
import type { DeskRuntime } from '../config/load'
import { homeChat } from '../config/staff-groups'
import { claimUpdate } from '../db/once'
import type { Deps } from '../deps'
import { errorSummary } from '../jobs/jobs'
import { isTopicUnusable } from '../telegram/api'
import { recordSent, sentBefore } from '../telegram/outbound'
import { eraseElsewhere } from './erase'
import { type ForgetTopicJob, forgetTopicQueue } from './privacy.jobs'

/**
 * /forget (issues 18, 26), after the client confirmed with the button: erases or anonymises what this desk holds
 * about them, in one transaction, audited, with the deletion of each of their staff topics (consultations' and
 * disputes') queued in the same transaction (the outbox). Kept, because accounting must keep it: orders (tariff,
 * price, dates, state), payments (charge ids, amounts, dates, refunds), consultations (dates, state), questions'
 * timing, the rating's score, the ledger, the audit log's rows. Erased: name, username, language, time zone (the
 * client row stays, anonymised, with forgotten_at); the content of every message of their consultations and of their
 * private chat, the bot's notes included (a note holds an AI draft that answered them); the staff's AI drafts'
 * prompts, instructions, texts and errors; the rating's comment; dispute reasons and resolutions; the words in audit
 * details and pg-boss job payloads (src/privacy/erase.ts); the topic names (the consultation id instead); the payment
 * conversation state; stored updates of their chat (handled ones emptied, pending ones - this very press - without
 * the names). A ban stays (it is the desk's protection, not the client's data). Only this desk (bot_id).
 *
 * Refused while a consultation is waiting or active, an order is paid and not started, or a dispute is open: those
 * need the data to be served; the client is told when they can ask again.
 */

export type ForgetResult =
  | { status: 'done'; consultations: number; messages: number; topics: number }
  | { status: 'duplicate' }
  | { status: 'busy'; reason: 'consultation' | 'dispute' }

export async function forgetClient(
  deps: Deps,
  desk: DeskRuntime,
  input: { userId: number; updateId: number },
): Promise<ForgetResult> {
  const botId = desk.botId
  const userId = input.userId
  return deps.jobs.transaction(deps.db, async (trx, outbox): Promise<ForgetResult> => {
    // The client row first: a concurrent /forget, or a message of theirs, waits here.
    await sql`select 1 from client where bot_id = ${botId} and user_id = ${userId} for update`.execute(trx)
    const live = await trx
      .selectFrom('consultation')
      .select('id')
      .where('bot_id', '=', botId)
      .where('user_id', '=', userId)
      .where('state', 'in', ['waiting', 'active'])
      .executeTakeFirst()
    const paid = await trx
      .selectFrom('orders')
      .select('id')
      .where('bot_id', '=', botId)
      .where('user_id', '=', userId)
      .where('state', 'in', ['paid_waiting', 'active'])
      .executeTakeFirst()
    if (live || paid) return { status: 'busy', reason: 'consultation' }
    const open = await trx
      .selectFrom('dispute')
      .select('id')
      .where('bot_id', '=', botId)
      .where('user_id', '=', userId)
      .where('state', '=', 'open')
      .executeTakeFirst()
    if (open) return { status: 'busy', reason: 'dispute' }
    if (!(await claimUpdate(trx, botId, input.updateId))) return { status: 'duplicate' }

    const ids = (
      await trx
        .selectFrom('consultation')
        .select('id')
        .where('bot_id', '=', botId)
        .where('user_id', '=', userId)
        .execute()
    ).map((c) => c.id)
    await trx
      .updateTable('client')
      .set({
        first_name: '—',
        last_name: null,
        username: null,
        language_code: null,
        time_zone: null,
        forgotten_at: sql<Date>`now()`,
        updated_at: sql<Date>`now()`,
      })
      .where('bot_id', '=', botId)
      .where('user_id', '=', userId)
      .execute()
    const erased = await trx
      .updateTable('desk_message')
      .set({ content: null, refusal: null, error: null })
      .where('bot_id', '=', botId)
      .where((eb) =>
        eb.or([eb('chat_id', '=', userId), ...(ids.length ? [eb('consultation_id', 'in', ids)] : [])]),
      )
      .executeTakeFirst()
    const topics: ForgetTopicJob[] = []
    if (ids.length) {
      await sql`update draft set instruction = null, prompt = null, text = null, error = null, refusal = null
                  where bot_id = ${botId} and consultation_id = any(${ids}::bigint[])`.execute(trx)
      const routes = await trx
        .selectFrom('desk_route')
        .select(['consultation_id', 'support_chat_id', 'message_thread_id'])
        .where('bot_id', '=', botId)
        .where('consultation_id', 'in', ids)
        .execute()
      // The topics are deleted by the job: the routes are retired now, so no lane recreates or edits them, and the
      // items still pending (their content is erased) are not sent: nothing is left to say.
      await sql`update desk_route set topic_name = '#' || consultation_id, state = 'replaced',
                  replaced_reason = coalesce(replaced_reason, 'forgotten'), replaced_at = coalesce(replaced_at, now())
                  where bot_id = ${botId} and consultation_id = any(${ids}::bigint[])`.execute(trx)
      await sql`update desk_consultation set topic_wanted = false, card_dirty = false, title_dirty = false
                  where consultation_id = any(${ids}::bigint[])`.execute(trx)
      await sql`update desk_message set state = 'withheld'
                  where consultation_id = any(${ids}::bigint[]) and state = 'pending'`.execute(trx)
      for (const r of routes)
        topics.push({
          botId,
          consultationId: r.consultation_id,
          chatId: r.support_chat_id,
          threadId: r.message_thread_id,
          // One deletion per topic ever: a second /forget, or two confirmations at once, find it recorded (the
          // queue is stately per key, so two jobs of one topic never run at the same time).
          key: `forget:${botId}:${r.consultation_id}:${r.message_thread_id}`,
        })
    }
    const disputes = await trx
      .selectFrom('dispute')
      .select(['id', 'thread_id'])
      .where('bot_id', '=', botId)
      .where('user_id', '=', userId)
      .execute()
    for (const d of disputes)
      if (d.thread_id)
        topics.push({
          botId,
          consultationId: 0,
          disputeId: d.id,
          chatId: desk.staffChatId,
          threadId: d.thread_id,
          key: `forget:${botId}:dispute:${d.id}:${d.thread_id}`,
        })
    await eraseElsewhere(trx, { botId, userId, consultationIds: ids, disputeIds: disputes.map((d) => d.id) })
    await sql`update dispute set reason = '', resolution = null
                where bot_id = ${botId} and user_id = ${userId}`.execute(trx)
    await sql`delete from conversation_state where bot_id = ${botId} and chat_id = ${userId}`.execute(trx)
    // Messages held for a choice of consultation never made (issue 26) hold the client's words whole.
    await sql`delete from held_message where bot_id = ${botId} and user_id = ${userId}`.execute(trx)
    await sql`delete from client_route where bot_id = ${botId} and user_id = ${userId}`.execute(trx)
    // Stored updates already handled: their private chat, and the staff's messages in their topics (the answers).
    // Their private chat, and their updates without a chat (a pre-checkout query, keyed by the sender).
    const keys = [String(userId), `u${userId}`]
    if (ids.length)
      for (const r of await trx
        .selectFrom('desk_route')
        .select(['support_chat_id', 'message_thread_id'])
        .where('bot_id', '=', botId)
        .where('consultation_id', 'in', ids)
        .execute())
        keys.push(`${r.support_chat_id}:${r.message_thread_id}`)
    // And the staff's messages in their dispute topics.
    for (const d of disputes) if (d.thread_id) keys.push(`${desk.staffChatId}:${d.thread_id}`)
    await sql`update inbox_update set payload = '{}'::json
                where bot_id = ${botId} and chat_key = any(${keys}::text[]) and state <> 'pending'`.execute(
      trx,
    )
    for (const t of topics) await outbox.send(forgetTopicQueue, t, { singletonKey: t.key })
    const messages = Number(erased.numUpdatedRows)
    await audit(trx, {
      botId,
      actorId: userId,
      action: 'client.forgotten',
      subjectType: 'client',
      subjectId: userId,
      details: { consultations: ids.length, messages, topics: topics.length },
    })
    return { status: 'done', consultations: ids.length, messages, topics: topics.length }
  })
}

const description = (err: unknown) => (err as { description?: string }).description ?? ''
const code = (err: unknown) => (err as { error_code?: number }).error_code ?? 0
/** The bot may not delete topics there (the right was taken away): the topic is anonymised and closed instead. */
const noRight = (err: unknown) =>
  code(err) === 403 ||
  /not enough rights|CHAT_ADMIN_REQUIRED|can't delete|RIGHT_FORBIDDEN/i.test(description(err))

/**
 * The job (issue 26): the topic is deleted with all its messages (deleteForumTopic; the bot has the delete right it
 * needs for topics), then the private alerts that quoted the client's first message to an expert, and the staff
 * group's message with a low rating's comment, are deleted where their message ids were recorded (outbound_message).
 * Telegram lets a bot delete a message only within 48 hours of sending it: older alerts stay in the experts' chats
 * (/privacy says so). A topic the bot may no longer delete is anonymised instead as before: a note, the card
 * replaced, the anonymised name, closed. Recorded under the job's key, so a retry after it does nothing.
 * A topic that is gone has nothing left to do.
 */
export async function runForgetTopic(deps: Deps, job: ForgetTopicJob): Promise<void> {
  if (await sentBefore(deps.db, job.key)) return
  const desk = deps.desk(job.botId)
  const api = deps.api(job.botId)
  const chat = job.chatId ?? homeChat(desk)
  let outcome = 'deleted'
  try {
    await api.deleteForumTopic(chat, job.threadId)
  } catch (err) {
    if (isTopicUnusable(err)) outcome = 'gone'
    else if (noRight(err)) {
      outcome = 'anonymised'
      deps.log.warn({ chat, err: errorSummary(err) }, 'forget: topic cannot be deleted, anonymised instead')
      await anonymiseTopic(deps, job, chat)
    } else throw err
  }
  if (job.consultationId) await deleteQuotes(deps, job)
  await recordSent(deps.db, { key: job.key, botId: job.botId, chatId: chat, messageId: null, outcome })
}

/** The bot's own messages elsewhere that quoted the client: the experts' alerts, a low rating's comment. */
async function deleteQuotes(deps: Deps, job: ForgetTopicJob): Promise<void> {
  const appeals = await deps.db
    .selectFrom('desk_appeal')
    .select('id')
    .where('consultation_id', '=', job.consultationId)
    .execute()
  const prefixes = [
    ...appeals.map((a) => `experts:alert:${a.id}:%`),
    `rating:${job.consultationId}:comment:%`,
  ]
  const sent = await deps.db
    .selectFrom('outbound_message')
    .select(['chat_id', 'message_id'])
    .where('bot_id', '=', job.botId)
    .where('message_id', 'is not', null)
    .where('outcome', '=', 'sent')
    .where((eb) => eb.or(prefixes.map((p) => eb('key', 'like', p))))
    .execute()
  const api = deps.api(job.botId)
  for (const m of sent)
    await api.deleteMessage(m.chat_id, m.message_id!).catch((err) => {
      // Older than 48 hours, or deleted already by its reader: nothing more the bot can do.
      if (code(err) !== 400 && code(err) !== 403) throw err
      deps.log.info({ consultation_id: job.consultationId, err: errorSummary(err) }, 'forget: quote stays')
    })
}

/** The fallback without the delete right: a note, the card replaced by it, the anonymised name, closed. */
async function anonymiseTopic(deps: Deps, job: ForgetTopicJob, chat: number): Promise<void> {
  const desk = deps.desk(job.botId)
  const api = deps.api(job.botId)
  const id = String(job.disputeId ?? job.consultationId)
  const text = deps.i18n.t(desk.defaultLanguage, 'privacy-topic-forgotten', { id })
  try {
    try {
      await api.sendMessage(chat, text, { message_thread_id: job.threadId })
    } catch (err) {
      if (!/TOPIC_CLOSED/i.test(description(err))) throw err
      await api.reopenForumTopic(chat, job.threadId)
      await api.sendMessage(chat, text, { message_thread_id: job.threadId })
    }
    const route = await deps.db
      .selectFrom('desk_route')
      .select('card_message_id')
      .where('bot_id', '=', job.botId)
      .where('support_chat_id', '=', chat)
      .where('message_thread_id', '=', job.threadId)
      .executeTakeFirst()
    if (route?.card_message_id)
      await api.editMessageText(chat, route.card_message_id, `📋 #${id}\n${text}`).catch((err) => {
        if (!/message is not modified|message to edit not found/i.test(description(err))) throw err
      })
    await api.editForumTopic(chat, job.threadId, { name: `#${id}` }).catch((err) => {
      if (!/TOPIC_NOT_MODIFIED/i.test(description(err))) throw err
    })
    await api.closeForumTopic(chat, job.threadId).catch((err) => {
      if (!/TOPIC_NOT_MODIFIED/i.test(description(err))) throw err
    })
  } catch (err) {
    if (!isTopicUnusable(err)) throw err
  }
}
