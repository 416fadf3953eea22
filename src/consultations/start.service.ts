import { audit } from '../audit/audit'
import { clientZone } from '../clients/clients.service'
import type { DeskRuntime } from '../config/load'
import type { Trx } from '../db/database'
import type { Deps } from '../deps'
import { capacityAccountId, dayAccount, freePlaces, returnPlace, takeCapacity } from '../orders/capacity'
import { lockOrder } from '../orders/order-state'
import { scheduledStartQueue } from '../orders/orders.jobs'
import {
  dbNow,
  findConsultationByOrder,
  type Order,
  refundInFlight,
  updateOrder,
} from '../orders/orders.repository'
import {
  accountForOrder,
  accountForSlot,
  nextFreeStarts,
  type StartOption,
  scheduleStart,
} from '../orders/orders.service'
import { findTariff } from '../orders/tariffs'
import { isDeskAdminNow } from '../settings/settings'
import { notify } from '../telegram/notify'
import { isOpen, nextOpening } from '../time/business-time'
import { formatInstant } from '../time/format'
import { deskSchedule } from '../time/schedule'
import { activateConsultation } from './activation'

/**
 * Starting a paid consultation's window later than its payment: the client's Start button (on_request tariffs), a
 * start agreed after a late payment (the client's or an admin's pick among the free starts), and the scheduled-start
 * job that activates at the agreed instant. Each takes its capacity place and activates in one transaction.
 */

export type StartRefusal =
  | 'order-unknown'
  | 'not-waiting'
  | 'already-active'
  | 'refunded'
  /** The client's cancel of this order is being refunded (src/payments/change-start.ts): no start meanwhile. */
  | 'refund-in-flight'
  | 'desk-closed'
  | 'start-expired'
  | 'day-full'
  | 'needs-start-date'
  | 'option-gone'
  /** An admin's start, and the actor is no longer the desk's owner or an admin (checked in the write). */
  | 'not-admin'

export type StartResult =
  | { ok: true; status: 'activated' | 'scheduled'; startsAt: Date }
  | { ok: false; code: StartRefusal; params?: Record<string, string | number> }

/**
 * The client presses Start on an on_request order: only while the desk is open and before start_by, and only if
 * today has a free place. Activates in the same transaction.
 */
export async function startOnRequest(
  deps: Deps,
  desk: DeskRuntime,
  input: { orderId: number; userId: number; updateId: number },
): Promise<StartResult> {
  return deps.jobs.transaction(deps.db, async (trx, outbox): Promise<StartResult> => {
    const order = await lockOrder(trx, input.orderId)
    if (!order || order.bot_id !== desk.botId || order.user_id !== input.userId)
      return { ok: false, code: 'order-unknown' }
    if (order.state === 'active' || order.state === 'closed') return { ok: false, code: 'already-active' }
    if (order.state === 'refunded') return { ok: false, code: 'refunded' }
    if (order.state !== 'paid_waiting') return { ok: false, code: 'not-waiting' }
    if (order.needs_start_date) return { ok: false, code: 'needs-start-date' }
    if (order.start_mode !== 'on_request') return { ok: false, code: 'not-waiting' }
    // Under the order's lock, like the cancel's refund claim: a cancel claimed first wins (the start refused while
    // its refund is in flight; a refund that fails lets Start work again), a start first makes the cancel refuse.
    if (await refundInFlight(trx, order.id)) return { ok: false, code: 'refund-in-flight' }
    const now = await dbNow(trx)
    const schedule = deskSchedule(desk)
    if (order.start_by && now.getTime() >= order.start_by.getTime())
      return { ok: false, code: 'start-expired' }
    if (!isOpen(schedule, now))
      return { ok: false, code: 'desk-closed', params: { at: nextOpening(schedule, now).toISOString() } }
    const account = accountForOrder(desk, order, now)!
    // Per attempt: a refusal is stored under its request id, and a later press (another day) must be decided anew.
    const took = await takeCapacity(trx, desk.botId, account, `start:${order.id}:u${input.updateId}`)
    if (!took.ok) {
      const next = await nextFreeStarts(trx, desk, order, new Date(account.periodEnd.getTime()), 1)
      return { ok: false, code: 'day-full', params: next[0] ? { at: next[0].at.toISOString() } : {} }
    }
    await updateOrder(trx, order.id, { capacity_key: account.key })
    const c = await findConsultationByOrder(trx, order.id)
    if (!c) return { ok: false, code: 'not-waiting' }
    const r = await activateConsultation(trx, outbox, deps, {
      consultationId: c.id,
      actorId: input.userId,
      reason: 'start_button',
    })
    if (r.status === 'already-active') return { ok: false, code: 'already-active' }
    if (r.status !== 'activated') return { ok: false, code: 'not-waiting' }
    return { ok: true, status: 'activated', startsAt: r.consultation.starts_at! }
  })
}

/**
 * A start agreed for an order that waits for one (paid after its hold lapsed, or its Start period ran out): takes a
 * place on the chosen day or slot and schedules the activation (now if the start is not in the future).
 * `at` must be one of nextFreeStarts()'s options; the client picks it with a button, an admin may pick it too.
 */
export async function agreeStart(
  deps: Deps,
  desk: DeskRuntime,
  input: { orderId: number; actorId: number; asAdmin: boolean; at: Date; attempt: string },
): Promise<StartResult> {
  return deps.jobs.transaction(deps.db, async (trx, outbox): Promise<StartResult> => {
    // An admin's right is judged again here, on the desk's committed staff (before any row of the order is locked).
    if (input.asAdmin && !(await isDeskAdminNow(trx, desk.botId, input.actorId)))
      return { ok: false, code: 'not-admin' }
    const order = await lockOrder(trx, input.orderId)
    if (!order || order.bot_id !== desk.botId || (!input.asAdmin && order.user_id !== input.actorId))
      return { ok: false, code: 'order-unknown' }
    if (order.state === 'active' || order.state === 'closed') return { ok: false, code: 'already-active' }
    if (order.state === 'refunded') return { ok: false, code: 'refunded' }
    if (order.state !== 'paid_waiting' || !order.needs_start_date) return { ok: false, code: 'not-waiting' }
    if (await refundInFlight(trx, order.id)) return { ok: false, code: 'refund-in-flight' }
    const now = await dbNow(trx)
    // A button names its start by instant (whole seconds). A slot is that instant; a day option is its day, started
    // as of now: a "today" button pressed an hour later starts now, not an hour ago.
    const sec = (d: Date) => Math.floor(d.getTime() / 1000)
    const dayKey =
      order.start_mode === 'scheduled' ? undefined : dayAccount(desk, order.tariff_code, 0, input.at).key
    // An admin names the instant: any future slot of the tariff, or any instant of a day (over the day's capacity
    // if it is full: the admin keeps the promise "an administrator will offer you a start date").
    const option = input.asAdmin
      ? await adminStart(trx, desk, order, input.at, now)
      : (await nextFreeStarts(trx, desk, order, now, 30)).find((o) =>
          dayKey ? o.account.key === dayKey : sec(o.at) === sec(input.at),
        )
    if (!option) return { ok: false, code: 'option-gone' }
    const took = await takeCapacity(
      trx,
      desk.botId,
      option.account,
      `start:${order.id}:${option.account.key}`,
    )
    if (!took.ok) return { ok: false, code: 'option-gone' }
    await updateOrder(trx, order.id, {
      capacity_key: option.account.key,
      needs_start_date: false,
      // A scheduled slot, or an immediate start chosen at the desk's opening: the order keeps its agreed start.
      slot_start: order.start_mode === 'scheduled' || order.slot_start ? option.at : order.slot_start,
    })
    const c = await findConsultationByOrder(trx, order.id)
    if (!c) return { ok: false, code: 'not-waiting' }
    await audit(trx, {
      botId: desk.botId,
      actorId: input.actorId,
      action: 'order.start_agreed',
      subjectType: 'order',
      subjectId: order.id,
      details: {
        at: option.at.toISOString(),
        account: option.account.key,
        byAdmin: input.asAdmin,
        ...('extraPlace' in option ? { extraPlace: option.extraPlace } : {}),
      },
    })
    if (option.at.getTime() <= now.getTime()) {
      const r = await activateConsultation(trx, outbox, deps, {
        consultationId: c.id,
        actorId: input.actorId,
        reason: input.asAdmin ? 'admin' : 'start_button',
      })
      if (r.status !== 'activated') return { ok: false, code: 'not-waiting' }
      return { ok: true, status: 'activated', startsAt: r.consultation.starts_at! }
    }
    await scheduleStart(outbox, c.id, option.at)
    const zone = await clientZone(trx, desk, order.user_id)
    await notify(outbox, {
      botId: desk.botId,
      chatId: order.user_id,
      lang: order.lang,
      key: 'order-start-agreed',
      params: { title: order.title, at: formatInstant(option.at, zone, order.lang) },
      consultationId: c.id,
      dedupeKey: `order:${order.id}:start-agreed:${option.at.getTime()}`,
    })
    return { ok: true, status: 'scheduled', startsAt: option.at }
  })
}

/**
 * The start an admin chose: a scheduled tariff's own future slot, or for a day's place the instant itself (now if
 * it has passed) on that working day's account. A full day or slot gets one more place for this order (a grant on
 * its capacity account, once per order and account), so an admin's start is never refused for capacity; the audit
 * row says so.
 */
async function adminStart(
  trx: Trx,
  desk: DeskRuntime,
  order: Order,
  at: Date,
  now: Date,
): Promise<(StartOption & { extraPlace: boolean }) | undefined> {
  const t = findTariff(desk, order.tariff_code)
  let option: StartOption
  if (order.start_mode === 'scheduled') {
    if (!t || at.getTime() <= now.getTime()) return undefined
    const slot = t.slots.find((s) => Math.floor(Date.parse(s) / 1000) === Math.floor(at.getTime() / 1000))
    if (!slot) return undefined
    option = { at: new Date(Date.parse(slot)), account: accountForSlot(desk, t, new Date(Date.parse(slot))) }
  } else {
    const start = at.getTime() < now.getTime() ? now : at
    option = { at: start, account: dayAccount(desk, order.tariff_code, t?.dailyCapacity ?? 0, start) }
  }
  await capacityAccountId(trx, desk.botId, option.account)
  const [free] = await freePlaces(trx, desk.botId, [option.account])
  const extraPlace = (free ?? 0) <= 0
  if (extraPlace)
    await returnPlace(trx, desk.botId, option.account, `admin-place:${order.id}:${option.account.key}`)
  return { ...option, extraPlace }
}

/** While a refund of the order is in flight, the start job looks again after this many seconds. */
export const START_WAITS_FOR_REFUND_SECONDS = 5

/**
 * The scheduled-start job: activates at the agreed instant (idempotent; a refunded consultation stays revoked).
 * Under the order's lock (the lock a client's cancel claims its refund under, src/payments/change-start.ts): while
 * a refund of the order's payment is in flight it activates nothing and looks again in a few seconds (a copy of
 * itself, same start), so a cancel just before the start either refunds a consultation that never started or, if
 * the refund fails, the start goes ahead late with its window from the agreed start. A claim older than the
 * refund's stale limit is a crashed attempt and does not hold the start back.
 */
export async function runScheduledStart(
  deps: Deps,
  data: { consultationId: number; startsAt: string },
): Promise<'activated' | 'waits-for-refund' | 'nothing'> {
  return deps.jobs.transaction(deps.db, async (trx, outbox) => {
    // A start the client moved (src/payments/change-start.ts), or agreed anew after a late payment, leaves its old job
    // behind: it starts nothing.
    const head = await findConsultationByOrderOf(trx, data.consultationId)
    if (!head) return 'nothing'
    const o = await lockOrder(trx, head.order_id)
    if (!o) return 'nothing'
    if (o.start_mode !== 'on_request' && o.slot_start && o.slot_start.getTime() !== Date.parse(data.startsAt))
      return 'nothing'
    if (await refundInFlight(trx, o.id)) {
      await outbox.send(scheduledStartQueue, data, {
        startAfter: new Date((await dbNow(trx)).getTime() + START_WAITS_FOR_REFUND_SECONDS * 1000),
      })
      return 'waits-for-refund'
    }
    const r = await activateConsultation(trx, outbox, deps, {
      consultationId: data.consultationId,
      startsAt: new Date(data.startsAt),
      actorId: null,
      reason: 'scheduled',
    })
    return r.status === 'activated' ? 'activated' : 'nothing'
  })
}

function findConsultationByOrderOf(trx: Trx, consultationId: number) {
  return trx.selectFrom('consultation').select('order_id').where('id', '=', consultationId).executeTakeFirst()
}

export interface WaitingStart {
  orderId: number
  userId: number
  title: string
  startMode: string
  /** The next free starts (empty: none free; an admin may still name one). */
  options: Date[]
}

/**
 * Paid orders that wait for a start date (a late payment whose place was gone, or a Start period that ran out), oldest
 * first, each with its next free starts: what an admin's /startdate offers. One order when `orderId` is given.
 */
export async function waitingStarts(
  deps: Deps,
  desk: DeskRuntime,
  opts: { orderId?: number; limit?: number } = {},
): Promise<WaitingStart[]> {
  let q = deps.db
    .selectFrom('orders')
    .selectAll()
    .where('bot_id', '=', desk.botId)
    .where('state', '=', 'paid_waiting')
    .where('needs_start_date', '=', true)
  if (opts.orderId !== undefined) q = q.where('id', '=', opts.orderId)
  const orders = await q
    .orderBy('id')
    .limit(opts.limit ?? 10)
    .execute()
  const now = await dbNow(deps.db)
  const out: WaitingStart[] = []
  for (const o of orders)
    out.push({
      orderId: o.id,
      userId: o.user_id,
      title: o.title,
      startMode: o.start_mode,
      options: (await nextFreeStarts(deps.db, desk, o, now, 4)).map((x) => x.at),
    })
  return out
}
