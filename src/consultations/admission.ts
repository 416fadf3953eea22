import type { Message } from 'grammy/types'
import { clientZone } from '../clients/clients.service'
import type { DeskRuntime } from '../config/load'
import type { Trx } from '../db/database'
import type { Deps } from '../deps'
import { queueOwnerAlert } from '../experts/alerts'
import type { Outbox } from '../jobs/jobs'
import { LedgerTx } from '../ledger/ledger.service'
import { APPEALS_UNIT, CONSULTATION_SCOPE } from '../orders/allowances'
import { consultationPlan, deskHasPlanWith, planSlaMinutes } from '../orders/plan-features'
import { topUpButtons } from '../orders/topups'
import { type ContentType, contentTypeOf, storedContent } from '../routing/content'
import { clearClientBlocked, ensureDeskConsultation } from '../routing/desk-consultation.repository'
import { insertItem, requeueBlocked } from '../routing/messages.repository'
import { insertNote } from '../routing/notes'
import { wakeLane } from '../routing/routing.jobs'
import { notify } from '../telegram/notify'
import { formatHours, formatInstant } from '../time/format'
import { scheduleAppealSla } from './consultations.jobs'
import { type AdmitRow, callAdmit, insertAppeal } from './desk.repository'
import { planRefusalText } from './plan-refusals'
import { claimRefusalTelling, refusalTopic } from './refusal-told'
import { type AdmissionRefusal, accessRefusal, ledgerRefusal, refusalText } from './refusals'
import { retryConflicts } from './retry'
import { consultationLabel, holdBehind, holdForChoice, labelParams } from './several'
import { appealDueAt } from './sla'

/**
 * Admission of a client's message: one short transaction that
 *   1. locks the client's consultation row (every admission and every change of access takes the same lock),
 *   2. reads the database clock after the lock is granted (checked_at) with everything else it needs,
 *   3. admits only if state = active, not revoked, starts_at <= checked_at < access_until, the client is not banned,
 *   4. opens an appeal if none is open, reserving one unit of the consultation's appeals on the ledger (request id
 *      derived from the message), or joins the open one,
 *   5. stores the message (UNIQUE(bot_id, chat_id, message_id), so a redelivered update changes nothing) with
 *      accepted_at = checked_at and writes the topic lane's job to the outbox.
 * Steps 1-3 and, when the message joins an open appeal, the insert of step 5 are one database function (desk_admit,
 * src/consultations/sql/desk_admit.sql): one round trip with cached plans for the path almost every message takes.
 * A refused message is stored too (state refused, with the numbers) and the client is told why, from the same
 * numbers. No network call happens inside: the copy and every reply leave through the outbox.
 *
 * accepted_at is the instant that decides: a message accepted at 17:59 for a window ending 18:00 and copied to the
 * topic at 18:02 is an accepted question; nothing later re-checks the window.
 *
 * (About 460 lines on purpose: the admission and the paths out of it — the refusal, the plan that takes no
 * attachments, the client back after blocking the bot, the top-up offer — share one transaction's locks and numbers;
 * the refusal words live in refusals.ts, the routing and step 1-3 in sql/desk_admit.sql.)
 */

export type { AdmissionRefusal, RefusalReason } from './refusals'

export type AdmissionResult =
  | {
      status: 'accepted'
      consultationId: number
      itemId: number
      appealId: number
      /** True when this message opened the appeal (it reserved a unit and got the receipt text). */
      openedAppeal: boolean
      acceptedAt: Date
    }
  | { status: 'refused'; consultationId: number | null; refusal: AdmissionRefusal }
  | { status: 'duplicate' }
  /** Several live consultations and nothing named one: kept until the client chooses (src/consultations/several.ts). */
  | { status: 'held' }
  /** Not something a client asks with (a service message, or a type that cannot be copied). */
  | { status: 'ignored' }

export interface ClientMessageInput {
  message: Message
  /** The client's language as the bot speaks it (refusals and receipts are written in it). */
  lang: string
  /** The consultation the client chose for it (a held message released, src/consultations/choice.ts). */
  target?: number
}

/** The appeal's ledger request id: one per message, so a replayed admission replays the ledger's decision too. */
export function appealRequestId(botId: number, chatId: number, messageId: number): string {
  return `appeal:${botId}:${chatId}:${messageId}`
}

/**
 * An appeal hold lasts until the expert's first answer commits it, which may be days after the window (answers to
 * accepted questions are owed after it closes); the ledger's sweeper must not expire it before anyone decided.
 */
export const APPEAL_HOLD_TTL_SECONDS = 365 * 24 * 3600

class DuplicateMessage extends Error {}
/** The consultation the message was routed to serves a plan without attachments: the admission is undone. */
class NotInPlan extends Error {
  constructor(
    readonly consultationId: number,
    readonly code: string,
  ) {
    super('not in plan')
  }
}

export async function admitClientMessage(
  deps: Deps,
  desk: DeskRuntime,
  input: ClientMessageInput,
): Promise<AdmissionResult> {
  const m = input.message
  const type = contentTypeOf(m)
  if (!type || !m.from) return { status: 'ignored' }
  const args = admitArgs(desk, m, type, input.target)
  // A plan without attachments (src/subscriptions) is checked on the consultation the routing chose (a reply, a
  // topic, the client's choice), so such a message takes the full admission, which knows it; checked only when the
  // config has such a plan.
  const mediaChecked = type !== 'text' && (desk.plans ?? []).some((p) => !p.features.attachments)
  if (!mediaChecked) {
    // The common case in one statement (a burst of messages joining an open appeal whose lane job is queued);
    // anything else comes back untouched and takes the full transaction.
    const fast = await retryConflicts(() => callAdmit(deps.db, true, args))
    if (fast.o_outcome === 'duplicate') return { status: 'duplicate' }
    if (fast.o_outcome === 'accepted')
      return {
        status: 'accepted',
        consultationId: fast.o_consultation_id!,
        itemId: fast.o_item_id!,
        appealId: fast.o_open_appeal_id!,
        openedAppeal: false,
        acceptedAt: fast.o_checked_at!,
      }
  }
  try {
    return await retryConflicts(() =>
      deps.jobs.transaction(deps.db, (trx, outbox) =>
        admit(trx, outbox, deps, desk, m, type, input.lang, args, mediaChecked),
      ),
    )
  } catch (err) {
    if (err instanceof DuplicateMessage) return { status: 'duplicate' }
    if (!(err instanceof NotInPlan)) throw err
    // Rolled back (desk_admit may have stored the message already): refused on the chosen consultation instead.
    const plan = err
    return deps.jobs.transaction(deps.db, (trx, outbox) =>
      refuse(trx, outbox, deps, desk, m, type, input.lang, planRow(plan.consultationId), {
        reason: 'not_in_plan',
        numbers: { feature: 'attachments', plan: plan.code },
      }),
    )
  }
}

type AdmitArgs = Parameters<typeof callAdmit>[2]

/** The plan of the consultation, when it serves a subscription whose plan excludes attachments. */
async function planWithoutAttachments(
  trx: Trx,
  desk: DeskRuntime,
  consultationId: number,
): Promise<{ consultationId: number; code: string } | undefined> {
  const plan = await consultationPlan(trx, desk, consultationId)
  return plan && !plan.features.attachments ? { consultationId, code: plan.code } : undefined
}

/**
 * The SLA of a question opened now: the order's (the tariff's or plan's standard), or a priority plan's shorter one
 * (src/orders/plan-features.ts), read only when the desk sells such a plan.
 */
async function questionSlaMinutes(
  trx: Trx,
  desk: DeskRuntime,
  consultationId: number,
  orderMinutes: number,
): Promise<number> {
  if (!deskHasPlanWith(desk, 'prioritySla', true)) return orderMinutes
  const plan = await consultationPlan(trx, desk, consultationId)
  return plan?.features.prioritySla ? planSlaMinutes(plan) : orderMinutes
}

function planRow(consultationId: number): AdmitRow {
  return {
    o_consultation_id: consultationId,
    o_start_mode: null,
    o_needs_start_date: null,
  } as unknown as AdmitRow
}

function admitArgs(desk: DeskRuntime, m: Message, type: ContentType, target: number | undefined): AdmitArgs {
  return {
    botId: desk.botId,
    userId: m.from!.id,
    chatId: m.chat.id,
    messageId: m.message_id,
    mediaGroupId: m.media_group_id ?? null,
    replyTo: m.reply_to_message?.message_id ?? null,
    type,
    content: JSON.stringify(storedContent(m)),
    // A topic of the client's private chat (Bot API 9.3+) names its consultation.
    thread: m.chat.type === 'private' && m.message_thread_id ? m.message_thread_id : null,
    target: target ?? null,
  }
}

async function admit(
  trx: Trx,
  outbox: Outbox,
  deps: Deps,
  desk: DeskRuntime,
  m: Message,
  type: ContentType,
  lang: string,
  args: AdmitArgs,
  mediaChecked: boolean,
): Promise<AdmissionResult> {
  const userId = m.from!.id
  const content = args.content
  const a = await callAdmit(trx, false, args)
  if (a.o_outcome === 'none')
    return refuse(trx, outbox, deps, desk, m, type, lang, a, { reason: 'no_consultation', numbers: {} })
  if (a.o_outcome === 'duplicate' || a.o_outcome === 'retry') return { status: 'duplicate' }
  if (a.o_outcome === 'choose')
    return {
      status: (await holdForChoice(trx, outbox, deps, desk, m, lang)) === 'held' ? 'held' : 'duplicate',
    }
  if (a.o_outcome === 'behind')
    return { status: (await holdBehind(trx, outbox, desk, m, lang)) === 'held' ? 'held' : 'duplicate' }
  if (a.o_outcome === 'refused') return refuse(trx, outbox, deps, desk, m, type, lang, a, accessRefusal(a))
  const c = { id: a.o_consultation_id!, bot_id: desk.botId, user_id: userId }
  const checkedAt = a.o_checked_at!
  if (mediaChecked) {
    const plan = await planWithoutAttachments(trx, desk, c.id)
    if (plan) throw new NotInPlan(plan.consultationId, plan.code)
  }

  if (a.o_outcome === 'accepted') {
    // Stored by desk_admit; the topic lane's job commits with it, unless one is queued already.
    if (a.o_wake) await wakeLane(outbox, c.id, 'in')
    return {
      status: 'accepted',
      consultationId: c.id,
      itemId: a.o_item_id!,
      appealId: a.o_open_appeal_id!,
      openedAppeal: false,
      acceptedAt: checkedAt,
    }
  }

  // outcome "open": a new appeal, the desk's first message, or a client back after blocking the bot.
  let appealId = a.o_open_appeal_id
  let opened: { number: number; dueAt: Date; slaMinutes: number } | undefined
  if (appealId === null) {
    const requestId = appealRequestId(desk.botId, m.chat.id, m.message_id)
    const r = await new LedgerTx(trx, deps.config.ledger.overrunPolicy, APPEAL_HOLD_TTL_SECONDS).reserve({
      requestId,
      lines: [{ account: { scope: CONSULTATION_SCOPE, subject: c.id, unit: APPEALS_UNIT }, amount: 1 }],
      at: checkedAt,
      ttlSeconds: APPEAL_HOLD_TTL_SECONDS,
    })
    if (!r.admitted) return refuse(trx, outbox, deps, desk, m, type, lang, a, ledgerRefusal(deps, c.id, r))
    const slaMinutes = await questionSlaMinutes(trx, desk, c.id, a.o_sla_minutes!)
    const dueAt = appealDueAt(desk, checkedAt, slaMinutes)
    const number = (a.o_last_appeal_number ?? 0) + 1
    const appeal = await insertAppeal(trx, {
      botId: desk.botId,
      consultationId: c.id,
      number,
      requestId,
      openedByMessageId: m.message_id,
      acceptedAt: checkedAt,
      slaMinutes,
      dueAt,
    })
    appealId = appeal.id
    opened = { number, dueAt, slaMinutes }
    // Its reminder and breach jobs at their instants (src/lifecycle), committed with the appeal.
    await scheduleAppealSla(trx, outbox, desk, appeal)
  }
  if (!a.o_desk_row) await ensureDeskConsultation(trx, c)
  if (a.o_client_blocked_at) await clientIsBack(trx, outbox, c)

  await wakeLane(outbox, c.id, 'in')
  const row = await insertItem(trx, {
    bot_id: desk.botId,
    consultation_id: c.id,
    direction: 'in',
    kind: 'copy',
    chat_id: m.chat.id,
    message_id: m.message_id,
    from_id: userId,
    media_group_id: m.media_group_id ?? null,
    reply_to_message_id: m.reply_to_message?.message_id ?? null,
    appeal_id: appealId,
    content_type: type,
    content,
    state: 'pending',
    accepted_at: checkedAt,
  })
  // Another instance stored the same message first (the lock makes this nearly impossible): undo everything.
  if (!row) throw new DuplicateMessage()

  if (opened) {
    const zone = await clientZone(trx, desk, userId)
    // The receipt names its consultation, and a reply to it goes there (issue 26); with several live, it offers to
    // send the next messages there too.
    const named = await consultationLabel(trx, desk.botId, userId, c.id)
    await notify(outbox, {
      botId: desk.botId,
      chatId: userId,
      lang,
      key: 'desk-receipt',
      params: {
        number: opened.number,
        accepted: formatInstant(checkedAt, zone, lang),
        due: formatInstant(opened.dueAt, zone, lang),
        sla: formatHours(opened.slaMinutes, lang),
      },
      ...(named ? { more: [{ key: 'several-receipt-for', params: labelParams(named, zone, lang) }] } : {}),
      ...((a.o_live ?? 0) >= 2
        ? {
            replyMarkup: {
              inline_keyboard: [
                [{ text: deps.i18n.t(lang, 'several-here-button'), callback_data: `sw:${c.id}` }],
              ],
            },
          }
        : {}),
      consultationId: c.id,
      // The deadline in the reader's own zone (Telegram renders it); the text above is the fallback.
      dates: { due: Math.floor(opened.dueAt.getTime() / 1000) },
      dedupeKey: `desk:appeal:${appealId}:receipt`,
    })
    // The owner's private alert: one per question (src/experts), not one per message.
    await queueOwnerAlert(trx, outbox, { botId: desk.botId, consultationId: c.id, appealId: appealId! })
  }
  return {
    status: 'accepted',
    consultationId: c.id,
    itemId: row.id,
    appealId,
    openedAppeal: opened !== undefined,
    acceptedAt: checkedAt,
  }
}

/**
 * A refused message: stored with its reason and numbers (the same message redelivered stays refused once; a
 * stranger's without its content) and the client told why, in their language and time zone: once per refusal in
 * REFUSAL_QUIET_SECONDS (src/consultations/refusal-told.ts), not once per message.
 */
async function refuse(
  trx: Trx,
  outbox: Outbox,
  deps: Deps,
  desk: DeskRuntime,
  m: Message,
  type: ContentType,
  lang: string,
  a: AdmitRow,
  refusal: AdmissionRefusal,
): Promise<AdmissionResult> {
  const row = await insertItem(trx, {
    bot_id: desk.botId,
    consultation_id: a.o_consultation_id,
    direction: 'in',
    kind: 'copy',
    chat_id: m.chat.id,
    message_id: m.message_id,
    from_id: m.from!.id,
    media_group_id: m.media_group_id ?? null,
    reply_to_message_id: null,
    appeal_id: null,
    content_type: type,
    // A stranger's message (no consultation) is kept without its content: the row is the refusal's record (counted
    // by /report) and makes a redelivered update a no-op; what they wrote is nobody's business here. The update
    // itself stays in the inbox for its 48 h (README "Retention").
    content: a.o_consultation_id === null ? null : JSON.stringify(storedContent(m)),
    state: 'refused',
    refusal: JSON.stringify(refusal),
  })
  if (!row) return { status: 'duplicate' }
  // Told once per chat and refusal in a few minutes, not once per message: a flood costs one send, and the rest of
  // it nothing more than this row (decided before the text is built).
  const tell = await claimRefusalTelling(trx, {
    botId: desk.botId,
    chatId: m.chat.id,
    topic: refusalTopic(refusal.reason, a.o_consultation_id),
  })
  if (!tell) return { status: 'refused', consultationId: a.o_consultation_id, refusal }
  const zone = await clientZone(trx, desk, m.from!.id)
  const text =
    (a.o_consultation_id !== null
      ? await planRefusalText(trx, a.o_consultation_id, refusal, zone, lang)
      : undefined) ??
    refusalText(
      a.o_start_mode ? { start_mode: a.o_start_mode, needs_start_date: a.o_needs_start_date ?? false } : null,
      refusal,
      zone,
      lang,
    )
  // No questions left: the tariff's top-ups are offered with the refusal (src/orders/topups.ts).
  const offer =
    refusal.reason === 'no_appeals' && a.o_consultation_id
      ? await topUpOffer(trx, deps, desk, a.o_consultation_id, lang)
      : []
  await notify(outbox, {
    botId: desk.botId,
    chatId: m.chat.id,
    lang,
    key: text.key,
    params: text.params,
    ...(text.more || offer.length
      ? { more: [...(text.more ?? []), ...(offer.length ? [{ key: 'topup-offer' }] : [])] }
      : {}),
    ...(offer.length ? { replyMarkup: { inline_keyboard: offer } } : {}),
    ...(a.o_consultation_id !== null ? { consultationId: a.o_consultation_id } : {}),
    dedupeKey: `desk:refused:${desk.botId}:${m.chat.id}:${m.message_id}`,
  })
  return { status: 'refused', consultationId: a.o_consultation_id, refusal }
}

/** The client wrote after blocking the bot: clear the mark and send what could not be delivered. */
async function clientIsBack(
  trx: Trx,
  outbox: Outbox,
  c: { id: number; bot_id: number; user_id: number },
): Promise<void> {
  await clearClientBlocked(trx, c.id)
  const again = await requeueBlocked(trx, c.id)
  if (again.length === 0) return
  await wakeLane(outbox, c.id, 'out')
  await insertNote(
    trx,
    c,
    'in',
    'desk-note-client-back',
    { count: again.length },
    `desk:note:back:${c.id}:${again[0]!.id}`,
  )
}

/** The buttons of the consultation's tariff's top-ups (none when it offers none). */
async function topUpOffer(trx: Trx, deps: Deps, desk: DeskRuntime, consultationId: number, lang: string) {
  const o = await trx
    .selectFrom('consultation as c')
    .innerJoin('orders as o', 'o.id', 'c.order_id')
    .select('o.tariff_code')
    .where('c.id', '=', consultationId)
    .executeTakeFirst()
  if (!o) return []
  return topUpButtons((l, k, p) => deps.i18n.t(l, k, p), desk, o.tariff_code, lang, consultationId)
}

export type { ContentType }

/**
 * Whether the client has an active consultation here, where their messages are questions for an expert. A
 * conversation waiting for the client's text (a rating comment, a /paysupport reason) lets such messages through
 * unless they reply to its prompt.
 */
export async function hasActiveConsultation(deps: Deps, desk: DeskRuntime, userId: number): Promise<boolean> {
  const c = await deps.db
    .selectFrom('consultation')
    .select('id')
    .where('bot_id', '=', desk.botId)
    .where('user_id', '=', userId)
    .where('state', '=', 'active')
    .limit(1)
    .executeTakeFirst()
  return c !== undefined
}
