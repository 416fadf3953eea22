import { type Api, GrammyError } from 'grammy'
import { sql } from 'kysely'
import { findClient } from '../clients/clients.repository'
import type { DeskRuntime } from '../config/load'
import { staffChatOf } from '../config/staff-groups'
import type { Deps } from '../deps'
import { Ledger } from '../ledger/ledger.service'
import { APPEALS_UNIT, CONSULTATION_SCOPE } from '../orders/allowances'
import { consultationView, type DeskConsultationView, listUserPayments } from '../orders/orders.repository'
import { cut, TOPIC_NAME_MAX, textLength } from '../text'
import { formatInstant, staffZone } from '../time/format'
import { mediaKind, preview } from './content'
import {
  countTopicCreated,
  findDeskConsultation,
  listAppeals,
  lockConsultationKey,
} from './desk-consultation.repository'
import { conversation } from './messages.repository'
import { ownerLabel } from './owner'
import { activeRoute, insertRoute, type Route, replaceActiveRoute, updateRoute } from './routes.repository'

/**
 * A consultation's forum topic: its name, the pinned client card, creation, and recreation when the topic is gone.
 * Every function here that calls Telegram is called by the topic lane only (src/routing/delivery.ts), which holds
 * the consultation's lease: that is what keeps it to one topic per consultation.
 */

/** Telegram's icon colours for topics; one for every consultation topic keeps the list calm. */
export const TOPIC_ICON_COLOR = 7322096

const STATE_ICON: Record<DeskConsultationView['state'], string> = {
  waiting: '⏳',
  active: '🟢',
  closed: '⚪',
  revoked: '↩️',
}
const BREACHED_ICON = '🔴'

/** The client's display name. */
function personName(
  c: { first_name: string; last_name: string | null } | undefined,
  fallback: string,
): string {
  if (!c) return fallback
  return [c.first_name, c.last_name].filter(Boolean).join(' ').trim() || fallback
}

/**
 * "<status icon> <client name> · <tariff> · #<consultation id>[ · 👤 <owner>]", at most 128 characters (Telegram's
 * limit): the client name is shortened first. The icon shows the consultation's state, or 🔴 while an appeal is
 * breached.
 */
export function topicName(
  v: Pick<DeskConsultationView, 'id' | 'state' | 'title'>,
  clientName: string,
  breached: boolean,
  owner?: string,
): string {
  const icon = breached && v.state !== 'revoked' ? BREACHED_ICON : STATE_ICON[v.state]
  const tail = ` · ${v.title} · #${v.id}${owner ? ` · 👤 ${cut(owner, 24)}` : ''}`
  const room = TOPIC_NAME_MAX - textLength(icon) - 1 - textLength(tail)
  if (room < 4) return cut(`${icon} #${v.id} · ${v.title}`, TOPIC_NAME_MAX)
  const name = cut(clientName.replace(/\s+/g, ' ').trim(), room, { ellipsis: '…' })
  return `${icon} ${name}${tail}`
}

export async function currentTopicName(deps: Deps, v: DeskConsultationView): Promise<string> {
  const client = await findClient(deps.db, v.bot_id, v.user_id)
  const appeals = await listAppeals(deps.db, v.id)
  const breached = appeals.some((a) => a.state === 'open' && a.breached_at !== null)
  const owner = await ownerLabel(deps.db, deps.desk(v.bot_id), v.id)
  return topicName(v, personName(client, String(v.user_id)), breached, owner)
}

/**
 * The appeals account's numbers for the card: the account whose period holds now (a subscription's current period,
 * src/subscriptions), else the window's account; null before the window starts.
 */
async function appealNumbers(deps: Deps, v: DeskConsultationView) {
  if (!v.starts_at) return null
  const ledger = new Ledger(deps.db)
  const key = { scope: CONSULTATION_SCOPE, subject: v.id, unit: APPEALS_UNIT }
  return (await ledger.balance(key)) ?? ledger.balance(key, v.starts_at)
}

/**
 * A subscription's current period for the card (the one holding now, else the latest; src/subscriptions), or
 * undefined for a one-off consultation. After a change of plan the consultation carries two subscriptions: the
 * period's own one names the plan and its price.
 */
async function planPeriod(deps: Deps, consultationId: number) {
  return deps.db
    .selectFrom('subscription as s')
    .innerJoin('subscription_period as p', 'p.subscription_id', 's.id')
    .innerJoin('orders as o', 'o.id', 's.order_id')
    .select([
      's.plan_code',
      's.state',
      's.renewal_cancelled',
      's.price_stars',
      'o.title',
      'p.number',
      'p.period_start',
      'p.period_end',
    ])
    .where('s.consultation_id', '=', consultationId)
    .orderBy(sql`(p.period_start <= now() and now() < p.period_end)`, 'desc')
    .orderBy('p.number', 'desc')
    .limit(1)
    .executeTakeFirst()
}

/** The client card: who the client is, what they bought, their window, appeals left, payments, history. */
export async function renderCard(deps: Deps, desk: DeskRuntime, v: DeskConsultationView): Promise<string> {
  const lang = desk.defaultLanguage
  // Staff read the card in the desk's zone, their own: no zone named (src/time/format.ts staffZone).
  const zone = staffZone(desk)
  const t = (key: string, params?: Record<string, string | number>) => deps.i18n.t(lang, key, params)
  const [client, appeals, acc, payments, dc, earlier, plan] = await Promise.all([
    findClient(deps.db, v.bot_id, v.user_id),
    listAppeals(deps.db, v.id),
    appealNumbers(deps, v),
    listUserPayments(deps.db, v.bot_id, v.user_id, 20),
    findDeskConsultation(deps.db, v.id),
    deps.db
      .selectFrom('consultation')
      .select(['id', 'state'])
      .where('bot_id', '=', v.bot_id)
      .where('user_id', '=', v.user_id)
      .where('id', '<>', v.id)
      .orderBy('id', 'desc')
      .limit(10)
      .execute(),
    planPeriod(deps, v.id),
  ])
  const open = appeals.filter((a) => a.state === 'open').length
  const left = acc
    ? Math.max(0, acc.granted - acc.reserved - acc.used)
    : Math.max(0, v.appeals - appeals.length)
  const paid = payments.filter((p) => p.kind === 'payment')
  const paymentsText = paid.length
    ? paid
        .map(
          (p) =>
            `${p.total_amount} ⭐ ${formatInstant(p.created_at, zone, lang)}${p.refunded_at ? ' ↩️' : ''}`,
        )
        .join(', ')
    : t('desk-card-none')
  const lines = [
    t('desk-card', {
      id: String(v.id),
      state: t(`desk-card-state-${v.state}`),
      name: personName(client, String(v.user_id)),
      username: client?.username ? ` (@${client.username})` : '',
      userId: String(v.user_id),
      language: client?.language_code ?? '—',
      tariff: plan?.title ?? v.title,
      price: plan?.price_stars ?? v.price_stars,
      start: v.starts_at ? formatInstant(v.starts_at, zone, lang) : '—',
      end: v.access_until ? formatInstant(v.access_until, zone, lang) : '—',
      left,
      total: acc?.granted ?? v.appeals,
      open,
      payments: paymentsText,
      earlier: earlier.length
        ? earlier.map((e) => `#${e.id} (${t(`desk-card-state-${e.state}`)})`).join(', ')
        : t('desk-card-none'),
    }),
  ]
  const owner = await ownerLabel(deps.db, desk, v.id)
  lines.push(t('desk-card-owner', { owner: owner ?? t('desk-card-unassigned') }))
  if (plan)
    lines.push(
      t('desk-card-plan', {
        number: plan.number,
        start: formatInstant(plan.period_start, zone, lang),
        end: formatInstant(plan.period_end, zone, lang),
        renewal: t(
          plan.state !== 'active'
            ? `desk-card-plan-${plan.state}`
            : plan.renewal_cancelled
              ? 'desk-card-plan-cancelled'
              : 'desk-card-plan-renews',
        ),
      }),
    )
  if (dc?.client_blocked_at) lines.push(t('desk-card-blocked'))
  if (client?.banned_at) lines.push(t('desk-card-banned'))
  return lines.join('\n')
}

/** The summary posted at the top of a recreated topic: counts and the last few messages. */
export async function renderSummary(
  deps: Deps,
  desk: DeskRuntime,
  v: DeskConsultationView,
  reason: string,
): Promise<string> {
  const lang = desk.defaultLanguage
  const t = (key: string, params?: Record<string, string | number>) => deps.i18n.t(lang, key, params)
  const items = (await conversation(deps.db, v.id)).filter((i) => i.kind === 'copy')
  const appeals = await listAppeals(deps.db, v.id)
  const lines = [
    t('desk-note-recreated', {
      reason,
      inCount: items.filter((i) => i.direction === 'in').length,
      outCount: items.filter((i) => i.direction === 'out').length,
      appeals: appeals.length
        ? appeals.map((a) => `#${a.number} ${a.state === 'open' ? '⏳' : '✅'}`).join(', ')
        : '—',
    }),
  ]
  for (const i of items.slice(-6))
    lines.push(
      t('desk-note-recreated-line', {
        who: t(i.direction === 'in' ? 'desk-note-recreated-client' : 'desk-note-recreated-staff'),
        text: preview(i.content_type, i.content, mediaKind(deps.i18n, lang), 120),
      }),
    )
  return lines.join('\n')
}

/** Creates the consultation's topic and records the route. The caller holds the topic lane. */
export async function createTopic(
  deps: Deps,
  desk: DeskRuntime,
  api: Api,
  v: DeskConsultationView,
): Promise<Route> {
  const dc = await findDeskConsultation(deps.db, v.id)
  const recreated = (dc?.topics_created ?? 0) > 0
  const name = await currentTopicName(deps, v)
  // A crash between this call and the insert below leaves one empty topic behind and the next run creates
  // another: Telegram cannot be asked "did this call happen", and an empty extra topic is the cheap side.
  // The consultation's group (chosen at activation; src/config/staff-groups.ts): every later call uses the route's.
  const chat = staffChatOf(desk, v)
  const topic = await api.createForumTopic(chat, name, { icon_color: TOPIC_ICON_COLOR })
  return deps.db.transaction().execute(async (trx) => {
    await lockConsultationKey(trx, v.id)
    await countTopicCreated(trx, v.id)
    return insertRoute(trx, {
      botId: desk.botId,
      supportChatId: chat,
      threadId: topic.message_thread_id,
      consultationId: v.id,
      userId: v.user_id,
      topicName: name,
      summaryPending: recreated,
    })
  })
}

/** The topic is gone: the route moves off it (the next ensureTopic creates the new one). */
export async function retireTopic(deps: Deps, consultationId: number, reason: string): Promise<void> {
  await deps.db.transaction().execute((trx) => replaceActiveRoute(trx, consultationId, reason))
}

/**
 * Posts the card in the route's topic and pins it: two steps, each recorded right after Telegram answered, so a
 * worker that dies between them leaves the pin owed (card_pinned_message_id differs) and the next lane run pins.
 */
export async function postCard(deps: Deps, desk: DeskRuntime, api: Api, route: Route): Promise<void> {
  const v = await consultationView(deps.db, route.consultation_id)
  if (!v) return
  const m = await api.sendMessage(route.support_chat_id, await renderCard(deps, desk, v), {
    message_thread_id: route.message_thread_id,
    link_preview_options: { is_disabled: true },
  })
  await updateRoute(deps.db, route, { card_message_id: m.message_id })
  route.card_message_id = m.message_id
  await pinCard(deps, api, route)
}

/**
 * Pins the route's card (idempotent: pinning a pinned message changes nothing). Telegram down or rate limits:
 * the error goes up and the lane retries. A refusal (no pin rights, the message gone) settles it: the card is
 * still there, at the top of the topic, and retrying would not change Telegram's mind.
 */
export async function pinCard(deps: Deps, api: Api, route: Route): Promise<void> {
  const card = route.card_message_id
  if (card === null || route.card_pinned_message_id === card) return
  try {
    await api.pinChatMessage(route.support_chat_id, card, { disable_notification: true })
  } catch (err) {
    if (!(err instanceof GrammyError) || err.error_code >= 500 || err.error_code === 429) throw err
    deps.log.warn({ consultation_id: route.consultation_id, err: err.description }, 'could not pin the card')
  }
  await updateRoute(deps.db, route, { card_pinned_message_id: card })
  route.card_pinned_message_id = card
}

export async function postSummary(deps: Deps, desk: DeskRuntime, api: Api, route: Route): Promise<void> {
  const v = await consultationView(deps.db, route.consultation_id)
  if (!v) return
  const reason = await previousTopicReason(deps, route)
  await api.sendMessage(route.support_chat_id, await renderSummary(deps, desk, v, reason), {
    message_thread_id: route.message_thread_id,
    link_preview_options: { is_disabled: true },
  })
  await updateRoute(deps.db, route, { summary_pending: false })
  route.summary_pending = false
}

async function previousTopicReason(deps: Deps, route: Route): Promise<string> {
  const prev = await deps.db
    .selectFrom('desk_route')
    .select('replaced_reason')
    .where('consultation_id', '=', route.consultation_id)
    .where('state', '=', 'replaced')
    .orderBy('replaced_at', 'desc')
    .executeTakeFirst()
  return prev?.replaced_reason ?? '—'
}

/** Re-renders the pinned card in place; posts a new one if it is gone. */
export async function refreshCard(deps: Deps, desk: DeskRuntime, api: Api, route: Route): Promise<void> {
  const v = await consultationView(deps.db, route.consultation_id)
  if (!v) return
  if (route.card_message_id === null) return postCard(deps, desk, api, route)
  try {
    await api.editMessageText(route.support_chat_id, route.card_message_id, await renderCard(deps, desk, v), {
      link_preview_options: { is_disabled: true },
    })
  } catch (err) {
    const d = (err as { description?: string }).description ?? ''
    if (/message is not modified/i.test(d)) return
    if (/message to edit not found|message can't be edited/i.test(d)) return postCard(deps, desk, api, route)
    throw err
  }
}

/** Renames the topic when its name (status icon, client name) changed. */
export async function refreshTitle(deps: Deps, api: Api, route: Route): Promise<void> {
  const v = await consultationView(deps.db, route.consultation_id)
  if (!v) return
  const name = await currentTopicName(deps, v)
  if (name === route.topic_name) return
  try {
    await api.editForumTopic(route.support_chat_id, route.message_thread_id, { name })
  } catch (err) {
    if (!/TOPIC_NOT_MODIFIED/i.test((err as { description?: string }).description ?? '')) throw err
  }
  await updateRoute(deps.db, route, { topic_name: name })
  route.topic_name = name
}

export { activeRoute }
