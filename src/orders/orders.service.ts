import { createHash } from 'node:crypto'
import type { User } from 'grammy/types'
import { DateTime } from 'luxon'
import { audit } from '../audit/audit'
import { isClientBanned, upsertClient } from '../clients/clients.repository'
import type { DeskRuntime } from '../config/load'
import { RULE_DEFAULTS } from '../config/rules.schema'
import type { TariffConfig } from '../config/schema'
import type { Trx } from '../db/database'
import { claimUpdate } from '../db/once'
import type { Deps } from '../deps'
import type { Outbox } from '../jobs/jobs'
import { jobId } from '../jobs/queue'
import { openForSale } from '../settings/setup'
import { notify } from '../telegram/notify'
import { isOpen, nextOpening } from '../time/business-time'
import { deskSchedule } from '../time/schedule'
import { type CapacityAccount, dayAccount, freePlaces, releaseHold, slotAccount } from './capacity'
import { moveOrder } from './order-state'
import {
  START_DEADLINE_REMINDER_LEAD_MS,
  START_REMINDER_LEAD_MS,
  type StartReminderJob,
  scheduledStartQueue,
  startReminderQueue,
} from './orders.jobs'
import {
  dbNow,
  findOrder,
  insertOrder,
  lockLapsedHolds,
  lockStaleUnpaid,
  type Order,
  type Payment,
  primaryPayment,
  setInvoiceMessage,
  updateOrder,
} from './orders.repository'
import { announcedSlot, findTariff, snapshotTariff } from './tariffs'
import { placeFreed } from './waitlist'

/**
 * Orders: choosing a tariff (an order copies the tariff and pins the terms version), the capacity accounts and free
 * starts of an order, scheduling a start's activation job, and the sweeper that frees lapsed holds. Starting a
 * window (the Start button, an agreed start, the scheduled-start job) is src/consultations/start.service.ts.
 */

/** An order of a bot this deployment no longer serves expires after the rules' default. */
const DEFAULT_UNPAID_ORDER_HOURS = RULE_DEFAULTS.unpaidOrderHours

/** Terms are pinned by a short hash in callback data (64 bytes max); the full version is stored on the order. */
export function termsHash(version: string): string {
  return createHash('sha256').update(version).digest('base64url').slice(0, 8)
}

// ---------------------------------------------------------------------------------------------------------------
// Choosing a tariff

export type CreateOrderRefusal =
  | 'duplicate'
  | 'tariff-unknown'
  | 'tariff-paused'
  | 'terms-changed'
  | 'slot-required'
  | 'slot-unknown'
  | 'slot-started'
  | 'slot-full'
  | 'banned'
  /** An immediate tariff while the desk is closed: the client chooses first, start now or at the opening. */
  | 'choose-start'
  /** "Start when the desk opens" names an opening that is no longer the next one (it came, or the hours changed). */
  | 'opening-changed'
  /** The desk is being set up (no owner or no staff group, src/settings/setup.ts): nothing is sold. */
  | 'not-open'

export type CreateOrderResult =
  | {
      ok: true
      order: Order
      tariff: TariffConfig
      /** An immediate start chosen while the desk is closed: when the first answer can come. */
      closedUntil: Date | undefined
    }
  | { ok: false; code: CreateOrderRefusal }

export interface CreateOrderInput {
  from: User
  lang: string
  tariffCode: string
  /** termsHash() of the terms the client saw. */
  terms: string
  /** scheduled: the announced slot; immediate: the desk's next opening ("start when the desk opens"). */
  slot?: Date
  /** immediate: "start now" chosen explicitly (outside hours the client must choose one or the other). */
  startNow?: boolean
  updateId: number
}

export async function createOrder(
  deps: Deps,
  desk: DeskRuntime,
  input: CreateOrderInput,
): Promise<CreateOrderResult> {
  if (!openForSale(desk)) return { ok: false, code: 'not-open' }
  const tariff = findTariff(desk, input.tariffCode)
  if (!tariff) return { ok: false, code: 'tariff-unknown' }
  if (tariff.paused) return { ok: false, code: 'tariff-paused' }
  if (input.terms !== termsHash(desk.terms.version)) return { ok: false, code: 'terms-changed' }
  if (tariff.startMode === 'scheduled' && !input.slot) return { ok: false, code: 'slot-required' }
  const slot = input.slot && tariff.startMode === 'scheduled' ? announcedSlot(tariff, input.slot) : undefined
  if (input.slot && tariff.startMode !== 'immediate' && !slot) return { ok: false, code: 'slot-unknown' }

  return deps.db.transaction().execute(async (trx): Promise<CreateOrderResult> => {
    if (!(await claimUpdate(trx, desk.botId, input.updateId))) return { ok: false, code: 'duplicate' }
    if (await isClientBanned(trx, desk.botId, input.from.id)) return { ok: false, code: 'banned' }
    const now = await dbNow(trx)
    if (slot) {
      if (slot.getTime() <= now.getTime()) return { ok: false, code: 'slot-started' }
      // A soft check so nobody is invoiced for a full slot; the place itself is held at pre-checkout.
      const [free] = await freePlaces(trx, desk.botId, [accountForSlot(desk, tariff, slot)])
      if ((free ?? 0) <= 0) return { ok: false, code: 'slot-full' }
    }
    const start = tariff.startMode === 'immediate' ? immediateStart(desk, now, input) : undefined
    if (start && !start.ok) return start
    await upsertClient(trx, desk.botId, input.from)
    const order = await insertOrder(trx, {
      bot_id: desk.botId,
      user_id: input.from.id,
      ...snapshotTariff(desk, tariff, input.lang),
      slot_start: slot ?? start?.at ?? null,
    })
    await audit(trx, {
      botId: desk.botId,
      actorId: input.from.id,
      action: 'order.created',
      subjectType: 'order',
      subjectId: order.id,
      details: {
        tariff: tariff.code,
        price: tariff.priceStars,
        terms: desk.terms.version,
        ...(start?.at ? { startsAtOpening: start.at.toISOString() } : {}),
      },
    })
    return { ok: true, order, tariff, closedUntil: start?.closedUntil }
  })
}

/**
 * When an immediate tariff's window starts, as the client chose it. While the desk is open: now (no choice). While
 * it is closed the client chooses before paying: now (the window runs from the payment, the first answer comes at
 * the opening) or at the desk's next opening, which the order keeps in slot_start (payment then leaves it
 * paid_waiting and schedules the activation at that instant, as for a scheduled slot). A button names the opening
 * it was shown with (whole seconds); an opening that is no longer the next one is refused, and the card shown again.
 */
function immediateStart(
  desk: DeskRuntime,
  now: Date,
  input: Pick<CreateOrderInput, 'slot' | 'startNow'>,
):
  | { ok: true; at: Date | undefined; closedUntil: Date | undefined }
  | { ok: false; code: 'choose-start' | 'opening-changed' } {
  const schedule = deskSchedule(desk)
  const open = isOpen(schedule, now)
  if (input.slot) {
    const opening = open ? undefined : nextOpening(schedule, now)
    if (!opening || Math.floor(opening.getTime() / 1000) !== Math.floor(input.slot.getTime() / 1000))
      return { ok: false, code: 'opening-changed' }
    return { ok: true, at: opening, closedUntil: undefined }
  }
  if (open) return { ok: true, at: undefined, closedUntil: undefined }
  if (!input.startNow) return { ok: false, code: 'choose-start' }
  return { ok: true, at: undefined, closedUntil: nextOpening(schedule, now) }
}

export function accountForSlot(desk: DeskRuntime, t: TariffConfig, slot: Date): CapacityAccount {
  return slotAccount(desk, t.code, t.slotCapacity, slot, Math.round(t.windowHours * 60))
}

/**
 * The capacity account an order's start takes from, as of `at` (immediate: the day of `at`, or of the opening the
 * client chose to start at; scheduled: the slot).
 * The capacity comes from the current config; a tariff removed from config keeps its accounts but opens no new ones
 * (capacity 0).
 */
export function accountForOrder(desk: DeskRuntime, order: Order, at: Date): CapacityAccount | undefined {
  const t = findTariff(desk, order.tariff_code)
  if (order.start_mode === 'scheduled') {
    if (!order.slot_start) return undefined
    return slotAccount(desk, order.tariff_code, t?.slotCapacity ?? 0, order.slot_start, order.window_minutes)
  }
  const start = order.start_mode === 'immediate' && order.slot_start ? order.slot_start : at
  return dayAccount(desk, order.tariff_code, t?.dailyCapacity ?? 0, start)
}

// ---------------------------------------------------------------------------------------------------------------
// Free starts (late payments, full days)

export interface StartOption {
  /** When the window would start. */
  at: Date
  account: CapacityAccount
}

/**
 * The next starts with a free place for an order, after `now`: for scheduled tariffs the upcoming slots, otherwise
 * the opening of each following business day (the window then starts with the desk's working hours).
 */
export async function nextFreeStarts(
  trx: Trx | Deps['db'],
  desk: DeskRuntime,
  order: Order,
  now: Date,
  limit = 3,
): Promise<StartOption[]> {
  const t = findTariff(desk, order.tariff_code)
  const candidates: StartOption[] = []
  if (order.start_mode === 'scheduled') {
    if (!t) return []
    for (const s of t.slots) {
      const at = DateTime.fromISO(s, { setZone: true })
      if (!at.isValid || at.toMillis() <= now.getTime()) continue
      candidates.push({ at: at.toJSDate(), account: accountForSlot(desk, t, at.toJSDate()) })
    }
    candidates.sort((a, b) => a.at.getTime() - b.at.getTime())
  } else {
    const schedule = deskSchedule(desk)
    let day = DateTime.fromJSDate(now, { zone: desk.schedule.timezone }).startOf('day')
    for (let i = 0; i < 30 && candidates.length < 14; i++, day = day.plus({ days: 1 })) {
      // Today: from now (the desk may be open now, open later today, or done for the day).
      const from = Math.max(day.toMillis(), now.getTime())
      const at = nextOpening(schedule, new Date(from))
      const atDay = DateTime.fromJSDate(at, { zone: desk.schedule.timezone }).startOf('day')
      if (+atDay !== +day) continue // no working time left that day
      candidates.push({ at, account: dayAccount(desk, order.tariff_code, t?.dailyCapacity ?? 0, at) })
    }
  }
  const free = await freePlaces(
    trx,
    desk.botId,
    candidates.map((c) => c.account),
  )
  return candidates.filter((_, i) => (free[i] ?? 0) > 0).slice(0, limit)
}

/** Why a client's order offers no starts: not theirs (or unknown), or not waiting for a start date. */
export type StartOptionsRefusal = 'order-unknown' | 'not-waiting'

export type StartOptionsResult =
  | { ok: true; order: Order; options: StartOption[] }
  | { ok: false; code: StartOptionsRefusal }

/** The next free starts offered to the client for their paid order that waits for a start date (`ord:opts`). */
export async function startOptions(
  deps: Deps,
  desk: DeskRuntime,
  input: { orderId: number; userId: number },
  limit = 5,
): Promise<StartOptionsResult> {
  const order = await findOrder(deps.db, input.orderId)
  if (!order || order.bot_id !== desk.botId || order.user_id !== input.userId)
    return { ok: false, code: 'order-unknown' }
  if (order.state !== 'paid_waiting' || !order.needs_start_date) return { ok: false, code: 'not-waiting' }
  return { ok: true, order, options: await nextFreeStarts(deps.db, desk, order, await dbNow(deps.db), limit) }
}

/** The client's order with its payment (a refund request opens a /paysupport ticket on it), or undefined. */
export async function paidOrderOf(
  deps: Deps,
  desk: DeskRuntime,
  input: { orderId: number; userId: number },
): Promise<{ order: Order; payment: Payment } | undefined> {
  const order = await findOrder(deps.db, input.orderId)
  const payment =
    order && order.bot_id === desk.botId && order.user_id === input.userId
      ? await primaryPayment(deps.db, order.id)
      : undefined
  return order && payment ? { order, payment } : undefined
}

/** Records the message id of the invoice sent for an order. */
export function recordInvoiceMessage(deps: Deps, orderId: number, messageId: number): Promise<void> {
  return setInvoiceMessage(deps.db, orderId, messageId)
}

// ---------------------------------------------------------------------------------------------------------------
// Scheduled starts

/**
 * The activation job at a future start; its id is made from the consultation and the start, so one scheduled twice
 * is one job (pg-boss ignores a singletonKey on a standard queue).
 * With it, in the same transaction, the client's reminder an hour before (src/lifecycle/start-reminders.ts).
 */
export async function scheduleStart(outbox: Outbox, consultationId: number, at: Date): Promise<void> {
  await outbox.send(
    scheduledStartQueue,
    { consultationId, startsAt: at.toISOString() },
    { startAfter: at, id: jobId(`${scheduledStartQueue.name}:${consultationId}:${at.getTime()}`) },
  )
  await scheduleStartReminder(outbox, consultationId, 'start', at, START_REMINDER_LEAD_MS)
}

/** The reminder a day before an on_request order's Start period ends (its start_by), with the Start button. */
export function scheduleStartDeadlineReminder(outbox: Outbox, consultationId: number, startBy: Date) {
  return scheduleStartReminder(outbox, consultationId, 'deadline', startBy, START_DEADLINE_REMINDER_LEAD_MS)
}

async function scheduleStartReminder(
  outbox: Outbox,
  consultationId: number,
  kind: StartReminderJob['kind'],
  at: Date,
  leadMs: number,
): Promise<void> {
  const data: StartReminderJob = { consultationId, kind, at: at.toISOString() }
  await outbox.send(startReminderQueue, data, {
    startAfter: new Date(at.getTime() - leadMs),
    id: jobId(`${startReminderQueue.name}:${consultationId}:${kind}:${data.at}`),
  })
}

// ---------------------------------------------------------------------------------------------------------------
// Sweeper

export interface SweepResult {
  holdsReleased: number
  cancelled: number
  startPeriodsEnded: number
}

/**
 * Runs every minute (and can be called directly): lapsed holds are released on the ledger (the place is free
 * again) and their orders return to created (the invoice stays payable: a new pre-checkout takes a new hold);
 * orders unpaid for their desk's rules.unpaidOrderHours are cancelled; on_request orders whose Start period ended are flagged
 * for a start date and the client is offered the next free start or a refund. SKIP LOCKED: two sweepers (two
 * worker processes) never handle the same order, and a payment holding an order's lock is never waited for.
 */
export async function sweepOrders(deps: Deps, batch = 100): Promise<SweepResult> {
  const result: SweepResult = { holdsReleased: 0, cancelled: 0, startPeriodsEnded: 0 }
  for (;;) {
    const n = await deps.jobs.transaction(deps.db, async (trx, outbox) => {
      const lapsed = await lockLapsedHolds(trx, batch)
      for (const o of lapsed) {
        if (o.hold_request_id) await releaseHold(trx, o.hold_request_id)
        // A slot's place held and not paid is free again: the first on its waitlist is told.
        const desk = deps.config.desks.find((d) => d.botId === o.bot_id)
        if (desk && o.hold_request_id && o.capacity_key?.startsWith('slot:'))
          await placeFreed(trx, outbox, desk, o.capacity_key)
        await moveOrder(trx, o, 'created')
        await updateOrder(trx, o.id, { hold_request_id: null, hold_expires_at: null })
        await audit(trx, {
          botId: o.bot_id,
          actorId: null,
          action: 'order.hold_lapsed',
          subjectType: 'order',
          subjectId: o.id,
          details: { hold: o.hold_request_id, capacity: o.capacity_key },
        })
      }
      return lapsed.length
    })
    result.holdsReleased += n
    if (n < batch) break
  }
  for (;;) {
    const n = await deps.jobs.transaction(deps.db, async (trx) => {
      const stale = await lockStaleUnpaid(
        trx,
        new Map(deps.config.desks.map((d) => [d.botId, d.rules.unpaidOrderHours])),
        DEFAULT_UNPAID_ORDER_HOURS,
        batch,
      )
      for (const o of stale) {
        await moveOrder(trx, o, 'cancelled')
        await updateOrder(trx, o.id, { cancel_reason: 'unpaid' })
      }
      return stale.length
    })
    result.cancelled += n
    if (n < batch) break
  }
  result.startPeriodsEnded = await deps.jobs.transaction(deps.db, async (trx, outbox) => {
    const due = await trx
      .selectFrom('orders')
      .selectAll()
      .where('state', '=', 'paid_waiting')
      .where('start_mode', '=', 'on_request')
      .where('needs_start_date', '=', false)
      .where('start_by', '<', await dbNow(trx))
      .limit(batch)
      .forUpdate()
      .skipLocked()
      .execute()
    for (const o of due) {
      await updateOrder(trx, o.id, { needs_start_date: true })
      await notify(outbox, {
        botId: o.bot_id,
        chatId: o.user_id,
        lang: o.lang,
        key: 'order-start-period-ended',
        params: { title: o.title, order: String(o.id) },
        replyMarkup: {
          inline_keyboard: [
            [{ text: deps.i18n.t(o.lang, 'btn-pick-start'), callback_data: `ord:opts:${o.id}` }],
            [{ text: deps.i18n.t(o.lang, 'btn-ask-refund'), callback_data: `ord:refund:${o.id}` }],
          ],
        },
        dedupeKey: `order:${o.id}:start-period-ended`,
      })
      const desk = deps.desk(o.bot_id)
      await notify(outbox, {
        botId: o.bot_id,
        chatId: desk.staffChatId,
        lang: desk.defaultLanguage,
        key: 'admin-start-period-ended',
        params: { order: String(o.id), user: String(o.user_id), title: o.title },
        dedupeKey: `order:${o.id}:start-period-ended:staff`,
      })
    }
    return due.length
  })
  return result
}
