import { GrammyError } from 'grammy'
import { findClient } from '../clients/clients.repository'
import type { DeskRuntime } from '../config/load'
import type { Trx } from '../db/database'
import type { Deps } from '../deps'
import type { Outbox } from '../jobs/jobs'
import { defineQueue } from '../jobs/queue'
import { mediaKind, preview } from '../routing/content'
import { activeRoute } from '../routing/routes.repository'
import type { StoredContent } from '../routing/routing.tables'
import { recordSent, sentBefore } from '../telegram/outbound'
import { currentAssignment, isMuted } from './experts.repository'

/**
 * The owner's private alert: one message from the bot for each new question (appeal) of their consultations, not
 * one per message, with a button that opens the topic. The admission writes the job in the transaction that opens
 * the appeal; the job sends once the topic exists (it retries until the topic lane has created it). An owner who
 * muted the consultation (/mute) gets nothing; an owner who never started the bot (403) is recorded, not retried.
 */

export interface OwnerAlert {
  botId: number
  consultationId: number
  appealId: number
  expertId: number
}

export const ownerAlertQueue = defineQueue<OwnerAlert>('experts.alert', { retryLimit: 8 }, 2)

/** The alert's once-key in outbound_message. */
export const alertKey = (a: Pick<OwnerAlert, 'appealId' | 'expertId'>) =>
  `experts:alert:${a.appealId}:${a.expertId}`

/** In the admission's transaction, when an appeal opens: the owner's alert, unless there is none or it is muted. */
export async function queueOwnerAlert(
  trx: Trx,
  outbox: Outbox,
  a: { botId: number; consultationId: number; appealId: number },
): Promise<boolean> {
  const owner = await currentAssignment(trx, a.consultationId)
  if (!owner || (await isMuted(trx, a.consultationId, owner.expert_id))) return false
  await outbox.send(ownerAlertQueue, { ...a, expertId: owner.expert_id })
  return true
}

/** t.me link to a forum topic of a supergroup: the chat id without -100, then the thread id. */
export function topicLink(chatId: number, threadId: number): string {
  return `https://t.me/c/${String(chatId).replace(/^-100/, '')}/${threadId}`
}

export class TopicNotReady extends Error {}

export type AlertOutcome = 'sent' | 'done' | 'muted' | 'forbidden'

export async function handleOwnerAlert(deps: Deps, a: OwnerAlert): Promise<AlertOutcome> {
  const key = alertKey(a)
  if (await sentBefore(deps.db, key)) return 'done'
  if (await isMuted(deps.db, a.consultationId, a.expertId)) return 'muted'
  const route = await activeRoute(deps.db, a.consultationId)
  // The topic lane creates the topic right after activation; until then the button has nowhere to point.
  if (!route) throw new TopicNotReady(`consultation ${a.consultationId} has no topic yet`)
  const desk = deps.desk(a.botId)
  const text = await alertText(deps, desk, a)
  let messageId: number | null = null
  let outcome: 'sent' | 'forbidden' = 'sent'
  try {
    const m = await deps.api(a.botId).sendMessage(a.expertId, text, {
      reply_markup: {
        inline_keyboard: [
          [
            {
              text: deps.i18n.t(desk.defaultLanguage, 'experts-alert-open'),
              url: topicLink(route.support_chat_id, route.message_thread_id),
            },
          ],
        ],
      },
      link_preview_options: { is_disabled: true },
    })
    messageId = m.message_id
  } catch (err) {
    // Never started the bot, or blocked it: nothing to retry; the topic and the reminders still reach them.
    if (!(err instanceof GrammyError) || err.error_code !== 403) throw err
    outcome = 'forbidden'
    deps.log.info({ expert: a.expertId, consultation: a.consultationId }, 'owner alert: private chat closed')
  }
  await recordSent(deps.db, { key, botId: a.botId, chatId: a.expertId, messageId, outcome })
  return outcome
}

async function alertText(deps: Deps, desk: DeskRuntime, a: OwnerAlert): Promise<string> {
  const appeal = await deps.db
    .selectFrom('desk_appeal as a')
    .innerJoin('consultation as c', 'c.id', 'a.consultation_id')
    .innerJoin('orders as o', 'o.id', 'c.order_id')
    .select(['a.number', 'a.due_at', 'c.user_id', 'o.title'])
    .where('a.id', '=', a.appealId)
    .executeTakeFirstOrThrow()
  const first = await deps.db
    .selectFrom('desk_message')
    .select(['content_type', 'content'])
    .where('appeal_id', '=', a.appealId)
    .where('direction', '=', 'in')
    .orderBy('id')
    .executeTakeFirst()
  const client = await findClient(deps.db, a.botId, appeal.user_id)
  const name = client
    ? [client.first_name, client.last_name].filter(Boolean).join(' ')
    : String(appeal.user_id)
  return deps.i18n.t(desk.defaultLanguage, 'experts-alert', {
    number: appeal.number,
    id: String(a.consultationId),
    client: name,
    title: appeal.title,
    text: first
      ? preview(
          first.content_type,
          first.content as StoredContent | null,
          mediaKind(deps.i18n, desk.defaultLanguage),
          200,
        )
      : '—',
  })
}
