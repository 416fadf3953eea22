import { GrammyError } from 'grammy'
import { sql } from 'kysely'
import { homeChat } from '../config/staff-groups'
import type { Deps } from '../deps'
import { defineQueue } from '../jobs/queue'
import { listUserOrders } from '../orders/orders.repository'
import { isBlocked, isTopicUnusable } from '../telegram/api'
import { recordSent, sentBefore } from '../telegram/outbound'
import { cut, TOPIC_NAME_MAX } from '../text'
import { formatInstant, staffZone } from '../time/format'

/**
 * Jobs of the dispute desk. Each is idempotent: a send is recorded in outbound_message under its key before the
 * job completes, and the topic id is stored with a conditional update.
 */

/** Creates the ticket's staff topic (once) and posts the client card with the action buttons. */
export const disputeTopicQueue = defineQueue<{ disputeId: number }>('disputes.topic')
/** A client's later text for an open ticket, posted into its topic. */
export const disputeNoteQueue = defineQueue<{ disputeId: number; seq: number; text: string }>('disputes.note')
/** A staff message in a ticket's topic, copied to the client. */
export const disputeRelayQueue = defineQueue<{ disputeId: number; fromChatId: number; messageId: number }>(
  'disputes.relay',
)
/** A resolved ticket: a closing line in the topic, then the topic is closed. */
export const disputeCloseTopicQueue = defineQueue<{ disputeId: number }>('disputes.close-topic')

/** Topic icon: red for payment problems (one of the colours Telegram allows). */
const TOPIC_COLOR = 16478047

function loadDispute(deps: Deps, id: number) {
  return deps.db.selectFrom('dispute').selectAll().where('id', '=', id).executeTakeFirst()
}

export async function handleDisputeTopic(deps: Deps, data: { disputeId: number }): Promise<void> {
  let d = await loadDispute(deps, data.disputeId)
  if (!d) return
  const desk = deps.desk(d.bot_id)
  const api = deps.api(d.bot_id)
  const lang = desk.defaultLanguage
  const client = await deps.db
    .selectFrom('client')
    .selectAll()
    .where('bot_id', '=', d.bot_id)
    .where('user_id', '=', d.user_id)
    .executeTakeFirst()
  const name = client ? [client.first_name, client.last_name].filter(Boolean).join(' ') : String(d.user_id)

  if (!d.thread_id) {
    // A crash between createForumTopic and this update leaves an empty topic behind and the retry creates another;
    // the ticket only ever points at one.
    const topic = await api.createForumTopic(
      homeChat(desk),
      cut(deps.i18n.t(lang, 'dispute-topic-name', { ticket: String(d.id), name }), TOPIC_NAME_MAX, {
        ellipsis: '…',
      }),
      { icon_color: TOPIC_COLOR },
    )
    await deps.db
      .updateTable('dispute')
      .set({ thread_id: topic.message_thread_id, updated_at: sql`now()` })
      .where('id', '=', d.id)
      .where('thread_id', 'is', null)
      .execute()
    d = (await loadDispute(deps, d.id))!
  }

  const key = `dispute:${d.id}:card`
  if (await sentBefore(deps.db, key)) return
  const t = (k: string, p?: Record<string, string | number>) => deps.i18n.t(lang, k, p)
  const zone = staffZone(desk)
  const lines: string[] = [
    t('dispute-card-title', { ticket: String(d.id) }),
    t('dispute-card-client', {
      name,
      username: client?.username ? `@${client.username}` : '—',
      id: String(d.user_id),
      lang: d.lang,
    }),
    t('dispute-card-reason', { reason: d.reason }),
  ]
  if (d.payment_id) {
    const p = await deps.db
      .selectFrom('payment')
      .selectAll()
      .where('id', '=', d.payment_id)
      .executeTakeFirst()
    if (p)
      lines.push(
        t('dispute-card-payment', {
          amount: p.total_amount,
          charge: p.telegram_payment_charge_id,
          at: formatInstant(p.created_at, zone, lang),
          kind: p.kind,
          refunded: p.refunded_at ? formatInstant(p.refunded_at, zone, lang) : '—',
        }),
      )
  } else lines.push(t('dispute-card-no-payment'))
  const orders = await listUserOrders(deps.db, d.bot_id, d.user_id, 5)
  if (orders.length) {
    lines.push(t('dispute-card-orders'))
    for (const o of orders)
      lines.push(
        t('dispute-card-order', {
          order: String(o.id),
          title: o.title,
          state: o.state,
          price: o.price_stars,
          consultation: o.consultation_state ?? '—',
          until: o.access_until ? formatInstant(o.access_until, zone, lang) : '—',
        }),
      )
  }
  lines.push(t('dispute-card-promised', { by: formatInstant(d.reply_by, zone, lang) }))
  lines.push(t('dispute-card-help', { prefix: desk.internalNotePrefix }))
  const m = await api.sendMessage(homeChat(desk), lines.join('\n'), {
    message_thread_id: d.thread_id!,
    reply_markup: {
      inline_keyboard: [
        [
          { text: t('btn-refund'), callback_data: `dp:refund:${d.id}` },
          { text: t('btn-decline'), callback_data: `dp:decline:${d.id}` },
          { text: t('btn-close'), callback_data: `dp:close:${d.id}` },
        ],
      ],
    },
  })
  await recordSent(deps.db, { key, botId: d.bot_id, chatId: homeChat(desk), messageId: m.message_id })
}

export async function handleDisputeNote(
  deps: Deps,
  data: { disputeId: number; seq: number; text: string },
): Promise<void> {
  const d = await loadDispute(deps, data.disputeId)
  if (!d) return
  const key = `dispute:${d.id}:note:${data.seq}`
  if (await sentBefore(deps.db, key)) return
  // The topic job has not run yet: fail and retry (pg-boss backs off) rather than post into General.
  if (!d.thread_id) throw new Error(`dispute ${d.id}: topic not created yet`)
  const desk = deps.desk(d.bot_id)
  const m = await deps
    .api(d.bot_id)
    .sendMessage(
      homeChat(desk),
      deps.i18n.t(desk.defaultLanguage, 'dispute-client-added', { text: data.text }),
      {
        message_thread_id: d.thread_id,
      },
    )
  await recordSent(deps.db, { key, botId: d.bot_id, chatId: homeChat(desk), messageId: m.message_id })
}

export async function handleDisputeRelay(
  deps: Deps,
  data: { disputeId: number; fromChatId: number; messageId: number },
): Promise<void> {
  const d = await loadDispute(deps, data.disputeId)
  if (!d) return
  const key = `dispute:${d.id}:relay:${data.messageId}`
  if (await sentBefore(deps.db, key)) return
  try {
    const m = await deps.api(d.bot_id).copyMessage(d.user_id, data.fromChatId, data.messageId)
    await recordSent(deps.db, { key, botId: d.bot_id, chatId: d.user_id, messageId: m.message_id })
  } catch (err) {
    if (!isBlocked(err)) throw err
    await recordSent(deps.db, {
      key,
      botId: d.bot_id,
      chatId: d.user_id,
      messageId: null,
      outcome: 'blocked',
    })
  }
}

export async function handleDisputeCloseTopic(deps: Deps, data: { disputeId: number }): Promise<void> {
  const d = await loadDispute(deps, data.disputeId)
  if (!d?.thread_id) return
  const desk = deps.desk(d.bot_id)
  const api = deps.api(d.bot_id)
  const key = `dispute:${d.id}:resolved-note`
  try {
    if (!(await sentBefore(deps.db, key))) {
      const m = await api.sendMessage(
        homeChat(desk),
        deps.i18n.t(desk.defaultLanguage, 'dispute-topic-resolved', {
          ticket: String(d.id),
          state: d.state,
          by: String(d.resolved_by ?? '—'),
          resolution: d.resolution ?? '',
        }),
        { message_thread_id: d.thread_id },
      )
      await recordSent(deps.db, { key, botId: d.bot_id, chatId: homeChat(desk), messageId: m.message_id })
    }
    await api.closeForumTopic(homeChat(desk), d.thread_id)
  } catch (err) {
    // Already closed, or deleted by a person: nothing left to do.
    if (isTopicUnusable(err) || (err instanceof GrammyError && /TOPIC_NOT_MODIFIED/.test(err.description)))
      return
    throw err
  }
}
