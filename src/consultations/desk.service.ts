import type { InlineKeyboardMarkup } from 'grammy/types'
import { sql } from 'kysely'
import { audit } from '../audit/audit'
import { clientZone } from '../clients/clients.service'
import { mayActOn } from '../config/access'
import type { DeskRuntime } from '../config/load'
import type { Db, Trx } from '../db/database'
import { claimUpdate } from '../db/once'
import type { Deps } from '../deps'
import type { Outbox } from '../jobs/jobs'
import { CONSULTATION_SCOPE } from '../orders/allowances'
import { canTransition, lockOrder, moveOrder } from '../orders/order-state'
import { lockConsultationView } from '../orders/orders.repository'
import {
  ensureDeskConsultation,
  lockConsultationKey,
  setDeskFlags,
} from '../routing/desk-consultation.repository'
import { insertNote } from '../routing/notes'
import { activeRoute, findRouteByThread, type Route } from '../routing/routes.repository'
import { wakeLane } from '../routing/routing.jobs'
import { isAdminOnNow, isDeskAdminNow } from '../settings/settings'
import { notify } from '../telegram/notify'
import { formatInstant, staffZone } from '../time/format'
import { scheduleWindowJobs } from './consultations.jobs'
import { openAppeal } from './desk.repository'
import { ratingKeyboard } from './ratings'
import { settleHeldAfterEnd } from './several'

/**
 * The desk's service API: what staff commands do, and what the SLA, lifecycle and drafting code calls. Everything
 * that changes a consultation locks it (order row first where the order changes too, the order every writer uses);
 * everything that reaches Telegram goes through a lane or the notify outbox. (About 450 lines: the staff commands'
 * use cases together, each admin-only one re-checking the role in its write; the next one added should take the
 * commands to a file of their own.)
 */

// -------------------------------------------------------------------------------------------------------------
// Looking things up

/** The consultation a forum topic belongs to (also a topic that was since replaced), or undefined. */
export async function consultationOfTopic(
  q: Db | Trx,
  botId: number,
  supportChatId: number,
  threadId: number,
): Promise<ConsultationTopic | undefined> {
  return findRouteByThread(q, botId, supportChatId, threadId)
}

/** A consultation's forum topic: its thread in the staff group and the consultation and client it belongs to. */
export type ConsultationTopic = Route

/** Where the consultation's topic is now (undefined until the topic lane has created it). */
export function topicOf(q: Db | Trx, consultationId: number) {
  return activeRoute(q, consultationId)
}

export { openAppeal }

// -------------------------------------------------------------------------------------------------------------
// Writing into a topic

/** A locale key with parameters, queued once per dedupe key on one of the consultation's two delivery lanes. */
export interface DeskNote {
  consultationId: number
  botId: number
  key: string
  params?: Record<string, string | number>
  dedupeKey: string
}

async function postNote(
  trx: Trx,
  outbox: Outbox,
  direction: 'in' | 'out',
  n: DeskNote,
  markup?: InlineKeyboardMarkup,
): Promise<boolean> {
  const consultation = { id: n.consultationId, bot_id: n.botId }
  const added = await insertNote(trx, consultation, direction, n.key, n.params ?? {}, n.dedupeKey, markup)
  if (added) await wakeLane(outbox, n.consultationId, direction)
  return added
}

/**
 * Posts a text into the consultation's topic, after everything already queued there, once per dedupe key (e.g.
 * `sla:reminder:<appeal id>`). It survives the topic being deleted (it goes to the recreated one). `key` is a
 * locale key rendered in the desk's language when sent; `markup` an optional inline keyboard.
 */
export function postToTopic(
  trx: Trx,
  outbox: Outbox,
  n: DeskNote & { markup?: InlineKeyboardMarkup },
): Promise<boolean> {
  return postNote(trx, outbox, 'in', n, n.markup)
}

/**
 * Sends a text to the client in order with the staff's messages (after everything already queued for them), once
 * per dedupe key: a locale key rendered in the consultation's language when sent. It is not an answer (no appeal
 * is touched). A 403 parks it with the rest until the client writes again. For texts that need no ordering, the
 * notify outbox (src/telegram/notify.ts) is simpler.
 */
export function postToClient(trx: Trx, outbox: Outbox, n: DeskNote): Promise<boolean> {
  return postNote(trx, outbox, 'out', n)
}

/**
 * Re-render the topic's name (status icon, breach mark) and/or its pinned card, e.g. after a state change or a
 * breach. Cheap to call: the lane renames only when the name changed, and every rename counts against the group's
 * 20 messages a minute.
 */
export async function refreshTopic(
  trx: Trx,
  outbox: Outbox,
  c: { id: number; bot_id: number; user_id: number },
  what: { title?: boolean; card?: boolean } = { title: true, card: true },
): Promise<void> {
  await ensureDeskConsultation(trx, c)
  await setDeskFlags(trx, c.id, {
    ...(what.title ? { title_dirty: true } : {}),
    ...(what.card ? { card_dirty: true } : {}),
  })
  await wakeLane(outbox, c.id, 'in')
}

// -------------------------------------------------------------------------------------------------------------
// Staff actions

export type ExtendResult =
  | { status: 'extended'; accessUntil: Date; previous: Date }
  | { status: 'not-active'; state: string }

/**
 * Extends an active consultation's window by `hours` (an admin's /extend, or a breach policy): access_until and the
 * period of the consultation's ledger accounts move together, audited, the client and the topic are told.
 * Idempotency is the caller's (a breach policy applies once per appeal by its own key).
 */
export async function extendWindow(
  trx: Trx,
  outbox: Outbox,
  desk: DeskRuntime,
  input: {
    consultationId: number
    hours: number
    actorId: number | null
    /** How the topic names who did it (a staff member's name); default: their id. */
    actorLabel?: string
    reason: string
    /** Default true; false when the caller tells the client itself (a breach policy says why). */
    notifyClient?: boolean
  },
): Promise<ExtendResult> {
  const head = await trx
    .selectFrom('consultation')
    .select('order_id')
    .where('id', '=', input.consultationId)
    .executeTakeFirst()
  if (!head) return { status: 'not-active', state: 'unknown' }
  await lockOrder(trx, head.order_id)
  const c = await lockConsultationView(trx, input.consultationId)
  if (c?.state !== 'active' || !c.access_until || !c.starts_at)
    return { status: 'not-active', state: c?.state ?? 'unknown' }
  const previous = c.access_until
  const until = new Date(previous.getTime() + Math.round(input.hours * 3_600_000))
  await trx
    .updateTable('consultation')
    .set({ access_until: until, updated_at: sql`now()` })
    .where('id', '=', c.id)
    .execute()
  // The window's ledger accounts (appeals, drafts) have the window as their period: it moves with the window, or
  // an admission after the old end would find no account for the instant.
  await trx
    .updateTable('ledger_account')
    .set({ period_end: until })
    .where('scope', '=', CONSULTATION_SCOPE)
    .where('subject', '=', String(c.id))
    .where('period_start', '=', c.starts_at)
    .execute()
  await audit(trx, {
    botId: desk.botId,
    actorId: input.actorId,
    action: 'consultation.extended',
    subjectType: 'consultation',
    subjectId: c.id,
    details: {
      hours: input.hours,
      reason: input.reason,
      from: previous.toISOString(),
      to: until.toISOString(),
    },
  })
  // The window's closing jobs for the new end, in this transaction (src/lifecycle: the old ones see the move).
  await scheduleWindowJobs(outbox, desk, { id: c.id, starts_at: c.starts_at, access_until: until })
  const zone = await clientZone(trx, desk, c.user_id)
  if (input.notifyClient !== false)
    await notify(outbox, {
      botId: desk.botId,
      chatId: c.user_id,
      lang: c.lang,
      key: 'desk-window-extended',
      params: { hours: input.hours, end: formatInstant(until, zone, c.lang) },
      consultationId: c.id,
      dedupeKey: `desk:extended:${c.id}:${until.getTime()}`,
    })
  await postToTopic(trx, outbox, {
    consultationId: c.id,
    botId: desk.botId,
    key: 'desk-cmd-extended',
    params: {
      by: input.actorLabel ?? actorName(input.actorId),
      hours: input.hours,
      end: formatInstant(until, staffZone(desk), desk.defaultLanguage),
    },
    dedupeKey: `desk:note:extended:${c.id}:${until.getTime()}`,
  })
  await setDeskFlags(trx, c.id, { card_dirty: true })
  return { status: 'extended', accessUntil: until, previous }
}

/**
 * A staff command that changes something runs once per update, whatever Telegram redelivers: true for the first
 * delivery (the update id is claimed in its own transaction).
 */
export function claimStaffCommand(deps: Deps, botId: number, updateId: number): Promise<boolean> {
  return deps.db.transaction().execute((trx) => claimUpdate(trx, botId, updateId))
}

/**
 * The actor's admin right, checked again in a write's transaction against the desk's committed staff, first (the
 * desk row's share lock before any other row lock, as src/consultations/admin-tools.ts does): on a consultation in its
 * own group (an anonymous admin of that group counts where the desk allows), else of the desk. An admin demoted
 * after the command arrived (the in-memory desk still says admin) changes nothing.
 */
async function isAdminNow(
  trx: Trx,
  desk: DeskRuntime,
  actorId: number,
  consultationId?: number,
): Promise<boolean> {
  if (consultationId === undefined) return isDeskAdminNow(trx, desk.botId, actorId)
  const c = await trx
    .selectFrom('consultation')
    .select('staff_chat_id')
    .where('id', '=', consultationId)
    .where('bot_id', '=', desk.botId)
    .executeTakeFirst()
  return !!c && (await isAdminOnNow(trx, desk.botId, c, actorId))
}

/**
 * An admin's /extend in a topic: the update is claimed with the extension, so a redelivery extends nothing; an actor
 * no longer an admin in the write changes nothing ('forbidden').
 */
export async function extendWindowOnce(
  deps: Deps,
  desk: DeskRuntime,
  input: { updateId: number; consultationId: number; hours: number; actorId: number; actorLabel?: string },
): Promise<ExtendResult | { status: 'forbidden' } | undefined> {
  return deps.jobs.transaction(deps.db, async (trx, outbox) => {
    if (!(await isAdminNow(trx, desk, input.actorId, input.consultationId)))
      return { status: 'forbidden' as const }
    if (!(await claimUpdate(trx, desk.botId, input.updateId))) return undefined
    return extendWindow(trx, outbox, desk, {
      consultationId: input.consultationId,
      hours: input.hours,
      actorId: input.actorId,
      actorLabel: input.actorLabel,
      reason: 'admin',
    })
  })
}

export type CloseResult =
  | { status: 'closed' }
  | { status: 'not-active'; state: string }
  /** The consultation lives in a staff group where this person may not act: nothing was done. */
  | { status: 'other-group' }

/**
 * Ends an active consultation now (/close after confirmation): no new questions; accepted ones are still answered
 * and delivered. The order moves to closed; audited; the client and the topic are told.
 */
export async function closeEarly(
  deps: Deps,
  desk: DeskRuntime,
  input: { consultationId: number; actorId: number; actorLabel?: string },
): Promise<CloseResult> {
  return deps.jobs.transaction(deps.db, async (trx, outbox) => {
    const head = await trx
      .selectFrom('consultation')
      .select(['order_id', 'staff_chat_id'])
      .where('id', '=', input.consultationId)
      // Only this desk's consultation: a button with another desk's id (tenant isolation) finds nothing.
      .where('bot_id', '=', desk.botId)
      .executeTakeFirst()
    if (!head) return { status: 'not-active', state: 'unknown' }
    // Judged in the consultation's own group, not in the chat where the button was pressed.
    if (!mayActOn(desk, head, input.actorId)) return { status: 'other-group' }
    const order = await lockOrder(trx, head.order_id)
    const c = await lockConsultationView(trx, input.consultationId)
    if (!c || !order || c.state !== 'active') return { status: 'not-active', state: c?.state ?? 'unknown' }
    await trx
      .updateTable('consultation')
      .set({ state: 'closed', closed_at: sql`now()`, updated_at: sql`now()` })
      .where('id', '=', c.id)
      .execute()
    if (canTransition(order.state, 'closed')) await moveOrder(trx, order, 'closed')
    const open = await openAppeal(trx, c.id)
    await audit(trx, {
      botId: desk.botId,
      actorId: input.actorId,
      action: 'consultation.closed_early',
      subjectType: 'consultation',
      subjectId: c.id,
      details: { accessUntil: c.access_until?.toISOString() ?? null, openAppeal: open?.number ?? null },
    })
    await notify(outbox, {
      botId: desk.botId,
      chatId: c.user_id,
      lang: c.lang,
      key: 'desk-closed-early',
      more: [{ key: 'rating-ask' }],
      replyMarkup: ratingKeyboard((l, k, p) => deps.i18n.t(l, k, p), c.lang, c.id),
      consultationId: c.id,
      dedupeKey: `desk:closed-early:${c.id}`,
    })
    await postToTopic(trx, outbox, {
      consultationId: c.id,
      botId: desk.botId,
      key: 'desk-cmd-closed',
      params: { by: input.actorLabel ?? actorName(input.actorId) },
      dedupeKey: `desk:note:closed-early:${c.id}`,
    })
    await refreshTopic(trx, outbox, c)
    await settleHeldAfterEnd(outbox, { botId: desk.botId, userId: c.user_id }, `closed:${c.id}`)
    return { status: 'closed' }
  })
}

/**
 * Bans or unbans a client of the desk (audited): a banned client's messages are refused and not relayed. Only an
 * admin may: the actor's right is checked again in this transaction (isAdminNow: on the topic's consultation when
 * one is named, else of the desk); 'forbidden' changes nothing.
 */
export async function setClientBan(
  deps: Deps,
  desk: DeskRuntime,
  input: {
    userId: number
    actorId: number
    actorLabel?: string
    banned: boolean
    consultationId?: number
  },
): Promise<'done' | 'already' | 'forbidden'> {
  return deps.jobs.transaction(deps.db, async (trx, outbox) => {
    if (!(await isAdminNow(trx, desk, input.actorId, input.consultationId))) return 'forbidden'
    if (input.consultationId) await lockConsultationKey(trx, input.consultationId)
    const r = await trx
      .updateTable('client')
      .set(
        input.banned
          ? { banned_at: sql`now()`, banned_by: input.actorId, updated_at: sql`now()` }
          : { banned_at: null, banned_by: null, updated_at: sql`now()` },
      )
      .where('bot_id', '=', desk.botId)
      .where('user_id', '=', input.userId)
      .where('banned_at', input.banned ? 'is' : 'is not', null)
      .returning(['user_id'])
      .executeTakeFirst()
    if (!r) return 'already'
    await audit(trx, {
      botId: desk.botId,
      actorId: input.actorId,
      action: input.banned ? 'client.banned' : 'client.unbanned',
      subjectType: 'client',
      subjectId: input.userId,
      details: { consultationId: input.consultationId ?? null },
    })
    if (input.consultationId) {
      const at = Date.now()
      await postToTopic(trx, outbox, {
        consultationId: input.consultationId,
        botId: desk.botId,
        key: input.banned ? 'desk-cmd-banned' : 'desk-cmd-unbanned',
        params: { by: input.actorLabel ?? actorName(input.actorId) },
        dedupeKey: `desk:note:ban:${input.consultationId}:${input.banned}:${at}`,
      })
      await setDeskFlags(trx, input.consultationId, { card_dirty: true })
    }
    return 'done'
  })
}

/** An internal note on the consultation (/note): kept in the audit log, never sent to the client. */
export async function addInternalNote(
  deps: Deps,
  desk: DeskRuntime,
  input: { consultationId: number; actorId: number; text: string; messageId: number },
): Promise<void> {
  await deps.jobs.transaction(deps.db, async (trx, outbox) => {
    await audit(trx, {
      botId: desk.botId,
      actorId: input.actorId,
      action: 'consultation.note',
      subjectType: 'consultation',
      subjectId: input.consultationId,
      details: { text: input.text, messageId: input.messageId },
    })
    await postToTopic(trx, outbox, {
      consultationId: input.consultationId,
      botId: desk.botId,
      key: 'desk-cmd-note-saved',
      dedupeKey: `desk:note:note-saved:${desk.botId}:${input.messageId}`,
    })
  })
}

/** /card: re-render the pinned card. */
export async function requestCard(
  deps: Deps,
  c: { id: number; bot_id: number; user_id: number },
): Promise<void> {
  await deps.jobs.transaction(deps.db, (trx, outbox) => refreshTopic(trx, outbox, c, { card: true }))
}

/** A reply in the topic from the bot, through the lane (e.g. a command's usage or refusal), once per message. */
export async function replyInTopic(
  deps: Deps,
  c: { id: number; bot_id: number },
  key: string,
  params: Record<string, string | number>,
  dedupeKey: string,
  markup?: InlineKeyboardMarkup,
): Promise<void> {
  await deps.jobs.transaction(deps.db, (trx, outbox) =>
    postToTopic(trx, outbox, {
      consultationId: c.id,
      botId: c.bot_id,
      key,
      params,
      dedupeKey,
      ...(markup ? { markup } : {}),
    }),
  )
}

/** How an actor is named in topic notes: their Telegram id (a tg://user link needs no name we may not have). */
function actorName(id: number | null): string {
  if (id === null) return 'system'
  return id < 0 ? 'anonymous admin' : `id ${id}`
}
