import { sql } from 'kysely'
import { audit } from '../audit/audit'
import type { DeskRuntime } from '../config/load'
import { homeChat } from '../config/staff-groups'
import { claimUpdate } from '../db/once'
import type { Deps } from '../deps'
import { errorSummary } from '../jobs/jobs'
import { isTopicUnusable } from '../telegram/api'
import { recordSent, sentBefore } from '../telegram/outbound'
import { type ForgetTopicJob, forgetTopicQueue } from './privacy.jobs'

/**
 * /forget (issue 18), after the client confirmed with the button: erases or anonymises what this desk holds about
 * them, in one transaction, audited, with the note + close of each of their staff topics queued in the same
 * transaction (the outbox). Kept, because accounting must keep it: orders (tariff, price, dates, state), payments
 * (charge ids, amounts, dates, refunds), consultations (dates, state), questions' timing, the ledger, the audit log.
 * Erased: name, username, language, time zone (the client row stays, anonymised, with forgotten_at); the content of
 * every message of their consultations and of their private chat (text, captions, media ids; bot notes stay: they
 * are templates); the staff's AI drafts' prompts, instructions and texts; dispute reasons and resolutions; the
 * topic names (the consultation id instead); the payment conversation state; stored updates of their chat already
 * handled. A ban stays (it is the desk's protection, not the client's data). Only this desk (bot_id).
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
      .where('kind', '<>', 'note')
      .where((eb) =>
        eb.or([eb('chat_id', '=', userId), ...(ids.length ? [eb('consultation_id', 'in', ids)] : [])]),
      )
      .executeTakeFirst()
    const topics: ForgetTopicJob[] = []
    if (ids.length) {
      await sql`update draft set instruction = null, prompt = null, text = null
                  where bot_id = ${botId} and consultation_id = any(${ids}::bigint[])`.execute(trx)
      const routes = await trx
        .selectFrom('desk_route')
        .select(['consultation_id', 'support_chat_id', 'message_thread_id'])
        .where('bot_id', '=', botId)
        .where('consultation_id', 'in', ids)
        .where('state', '=', 'active')
        .execute()
      await sql`update desk_route set topic_name = '#' || consultation_id
                  where bot_id = ${botId} and consultation_id = any(${ids}::bigint[])`.execute(trx)
      for (const r of routes)
        topics.push({
          botId,
          consultationId: r.consultation_id,
          chatId: r.support_chat_id,
          threadId: r.message_thread_id,
          // One note per topic ever: a second /forget, or two confirmations at once, find it sent (the queue is
          // stately per key, so two jobs of one topic never run at the same time).
          key: `forget:${botId}:${r.consultation_id}:${r.message_thread_id}`,
        })
    }
    await sql`update dispute set reason = '', resolution = null
                where bot_id = ${botId} and user_id = ${userId}`.execute(trx)
    await sql`delete from conversation_state where bot_id = ${botId} and chat_id = ${userId}`.execute(trx)
    // Stored updates already handled: their private chat, and the staff's messages in their topics (the answers).
    const keys = [String(userId)]
    if (ids.length)
      for (const r of await trx
        .selectFrom('desk_route')
        .select(['support_chat_id', 'message_thread_id'])
        .where('bot_id', '=', botId)
        .where('consultation_id', 'in', ids)
        .execute())
        keys.push(`${r.support_chat_id}:${r.message_thread_id}`)
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

/**
 * The job: a note in the topic (in the desk's language; reopening the topic when it was closed), the topic's card
 * (name, username) replaced by the note, the topic renamed to its anonymised name, then closed (unless a question is
 * still open: the lifecycle closes it after the answer). Recorded under the job's key, so a retry after the note does not repeat it.
 * A topic that is gone has nothing left to do.
 */
export async function runForgetTopic(deps: Deps, job: ForgetTopicJob): Promise<void> {
  if (await sentBefore(deps.db, job.key)) return
  const desk = deps.desk(job.botId)
  const api = deps.api(job.botId)
  const chat = job.chatId ?? homeChat(desk)
  const text = deps.i18n.t(desk.defaultLanguage, 'privacy-topic-forgotten', {
    id: String(job.consultationId),
  })
  let messageId: number | null = null
  let outcome = 'sent'
  let reopened = false
  try {
    try {
      messageId = (await api.sendMessage(chat, text, { message_thread_id: job.threadId })).message_id
    } catch (err) {
      if (!/TOPIC_CLOSED/i.test(description(err))) throw err
      await api.reopenForumTopic(chat, job.threadId)
      reopened = true
      messageId = (await api.sendMessage(chat, text, { message_thread_id: job.threadId })).message_id
    }
    // The topic's card showed the client's name and username: it now says only what happened.
    const route = await deps.db
      .selectFrom('desk_route')
      .select('card_message_id')
      .where('bot_id', '=', job.botId)
      .where('support_chat_id', '=', chat)
      .where('message_thread_id', '=', job.threadId)
      .executeTakeFirst()
    if (route?.card_message_id)
      await api
        .editMessageText(chat, route.card_message_id, `📋 #${job.consultationId}\n${text}`)
        .catch((err) => {
          if (!/message is not modified|message to edit not found/i.test(description(err))) throw err
        })
    await api.editForumTopic(chat, job.threadId, { name: `#${job.consultationId}` }).catch((err) => {
      if (!/TOPIC_NOT_MODIFIED/i.test(description(err))) throw err
    })
    // Closed, unless a question of theirs is still open: staff answer it there, and the lifecycle closes the topic
    // after that answer as it always does. A topic reopened for the note was closed already: closed again.
    const open = await deps.db
      .selectFrom('desk_appeal')
      .select('id')
      .where('consultation_id', '=', job.consultationId)
      .where('state', '=', 'open')
      .executeTakeFirst()
    if (reopened || !open)
      await api.closeForumTopic(chat, job.threadId).catch((err) => {
        if (!/TOPIC_NOT_MODIFIED/i.test(description(err))) throw err
      })
  } catch (err) {
    if (!isTopicUnusable(err)) throw err
    outcome = 'gone'
    deps.log.info({ consultation_id: job.consultationId, err: errorSummary(err) }, 'forget: topic gone')
  }
  await recordSent(deps.db, { key: job.key, botId: job.botId, chatId: chat, messageId, outcome })
}
