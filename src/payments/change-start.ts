import { audit } from '../audit/audit'
import { clientZone } from '../clients/clients.service'
import type { DeskRuntime } from '../config/load'
import type { Trx } from '../db/database'
import { claimUpdate } from '../db/once'
import type { Deps } from '../deps'
import { freePlaces, returnPlace, takeCapacity } from '../orders/capacity'
import { lockOrder } from '../orders/order-state'
import {
  claimRefund,
  dbNow,
  findConsultationByOrder,
  findPayment,
  type Order,
  type Payment,
  primaryPayment,
  REFUND_CLAIM_STALE_SECONDS,
  updateOrder,
} from '../orders/orders.repository'
import { accountForSlot, scheduleStart } from '../orders/orders.service'
import { announcedSlot, findTariff, upcomingSlots } from '../orders/tariffs'
import { placeFreed } from '../orders/waitlist'
import { notify } from '../telegram/notify'
import { formatInstant } from '../time/format'
import { type RefundOutcome, refundClaimed } from './refunds'

/**
 * A start the client changes before it begins (issues 14, 26): a scheduled one moves to another announced slot with
 * a free place, or is cancelled with a refund of the Stars, until the tariff's `changeCutoffHours` before the start;
 * an on_request one not started and an immediate one waiting for the desk's opening are cancelled the same way
 * until they start. A move
 * takes the new slot's place and gives the old one back in one transaction (the order row locked); a cancel goes
 * through the refund path (refundPayment: the Telegram call, then applyRefund, which gives the place back in the
 * refund's transaction). After the cut-off both are refused with the instant they closed at.
 */

export type ChangeRefusal = 'unknown' | 'not-waiting' | 'too-late' | 'started'

/** The order's change deadline: the start minus the tariff's cut-off (24 h by default). */
export function changeDeadline(
  desk: DeskRuntime,
  o: Pick<Order, 'tariff_code' | 'slot_start'>,
): Date | undefined {
  if (!o.slot_start) return undefined
  const hours = findTariff(desk, o.tariff_code)?.changeCutoffHours ?? 24
  return new Date(o.slot_start.getTime() - hours * 3_600_000)
}

/**
 * What the client may change of a paid start not begun (issue 26): a scheduled start moves or cancels until its
 * cut-off; an on_request consultation whose Start was not pressed (no place taken, no start agreed) and an
 * immediate one waiting for the desk's opening cancel until they start (no cut-off: the start itself, which takes
 * the order's lock like the cancel, decides).
 */
export type ChangeKind = 'scheduled' | 'on_request' | 'opening'

function kindOf(o: Order): ChangeKind | undefined {
  if (o.kind !== 'consultation') return undefined
  if (o.start_mode === 'scheduled') return 'scheduled'
  if (o.start_mode === 'on_request') return 'on_request'
  return o.slot_start ? 'opening' : undefined
}

/** The instant until which the order may still be cancelled (undefined: until it starts, with no fixed instant). */
export function cancelDeadline(desk: DeskRuntime, o: Order): Date | undefined {
  const kind = kindOf(o)
  if (kind === 'scheduled') return changeDeadline(desk, o)
  if (kind === 'opening') return o.slot_start ?? undefined
  return undefined
}

/** May the order still be cancelled by the client (for /status's buttons; checked again under the lock)? */
export function cancellable(desk: DeskRuntime, o: Order, now: Date): boolean {
  return changeable(desk, o, o.user_id, now, 'cancel').ok
}

/** Is the client's order a start they may change now? (the refusal, or the order and its deadline) */
function changeable(
  desk: DeskRuntime,
  order: Order | undefined,
  userId: number,
  now: Date,
  what: 'move' | 'cancel',
):
  | { ok: true; order: Order; deadline: Date | undefined }
  | { ok: false; code: ChangeRefusal; deadline?: Date } {
  if (!order || order.bot_id !== desk.botId || order.user_id !== userId) return { ok: false, code: 'unknown' }
  const kind = kindOf(order)
  const deadline = cancelDeadline(desk, order)
  // Started already (the start job activated it, or the client pressed Start): said so, with the instant it closed.
  if (kind && (order.state === 'active' || order.state === 'closed'))
    return { ok: false, code: 'started', ...(deadline ? { deadline } : {}) }
  if (!kind || order.state !== 'paid_waiting' || (what === 'move' && kind !== 'scheduled'))
    return { ok: false, code: 'not-waiting' }
  if (kind === 'on_request') {
    // Start pressed (a place taken) or a start agreed after the Start period ended: it is under way; /paysupport.
    if (order.capacity_key) return { ok: false, code: 'not-waiting' }
    return { ok: true, order, deadline: undefined }
  }
  if (order.needs_start_date || !order.slot_start || !deadline) return { ok: false, code: 'not-waiting' }
  if (now.getTime() >= deadline.getTime()) return { ok: false, code: 'too-late', deadline }
  return { ok: true, order, deadline }
}

export type MoveOptions =
  | { ok: true; order: Order; deadline: Date; slots: { at: Date; left: number }[] }
  | { ok: false; code: ChangeRefusal; deadline?: Date }

/** The slots the order can move to (announced, later than now, another than its own, with a free place). */
export async function moveOptions(
  deps: Deps,
  desk: DeskRuntime,
  userId: number,
  orderId: number,
): Promise<MoveOptions> {
  const order = await deps.db.selectFrom('orders').selectAll().where('id', '=', orderId).executeTakeFirst()
  const now = await dbNow(deps.db)
  const c = changeable(desk, order, userId, now, 'move')
  if (!c.ok) return c
  const tariff = findTariff(desk, c.order.tariff_code)
  const slots = tariff
    ? upcomingSlots(tariff, now).filter((s) => s.getTime() !== c.order.slot_start!.getTime())
    : []
  const free = tariff
    ? await freePlaces(
        deps.db,
        desk.botId,
        slots.map((s) => accountForSlot(desk, tariff, s)),
      )
    : []
  return {
    ok: true,
    order: c.order,
    deadline: c.deadline!,
    slots: slots.map((at, i) => ({ at, left: free[i] ?? 0 })).filter((s) => s.left > 0),
  }
}

export type MoveResult =
  | { ok: true; from: Date; to: Date }
  | { ok: false; code: ChangeRefusal | 'duplicate' | 'slot-gone' | 'slot-full'; deadline?: Date }

/** Moves the start: the new slot's place taken, the old one given back, the start job rescheduled, in one transaction. */
export async function moveStart(
  deps: Deps,
  desk: DeskRuntime,
  input: { orderId: number; userId: number; to: Date; updateId: number },
): Promise<MoveResult> {
  return deps.jobs.transaction(deps.db, async (trx, outbox): Promise<MoveResult> => {
    if (!(await claimUpdate(trx, desk.botId, input.updateId))) return { ok: false, code: 'duplicate' }
    const order = await lockOrder(trx, input.orderId)
    const now = await dbNow(trx)
    const c = changeable(desk, order, input.userId, now, 'move')
    if (!c.ok) return c
    const o = c.order
    const tariff = findTariff(desk, o.tariff_code)
    const to = tariff ? announcedSlot(tariff, input.to) : undefined
    if (!tariff || !to || to.getTime() <= now.getTime() || to.getTime() === o.slot_start!.getTime())
      return { ok: false, code: 'slot-gone' }
    const from = o.slot_start!
    const next = accountForSlot(desk, tariff, to)
    const took = await takeCapacity(trx, desk.botId, next, `move:${o.id}:${input.updateId}`)
    if (!took.ok) return { ok: false, code: 'slot-full' }
    const old = accountForSlot(desk, tariff, from)
    await returnPlace(trx, desk.botId, old, `move-free:${o.id}:${input.updateId}`)
    await placeFreed(trx, outbox, desk, old.key)
    await updateOrder(trx, o.id, { slot_start: to, capacity_key: next.key })
    const consultation = await findConsultationByOrder(trx, o.id)
    if (consultation) await scheduleStart(outbox, consultation.id, to)
    await audit(trx, {
      botId: desk.botId,
      actorId: input.userId,
      action: 'order.start_moved',
      subjectType: 'order',
      subjectId: o.id,
      details: { from: from.toISOString(), to: to.toISOString(), account: next.key },
    })
    await tellClient(trx, outbox, desk, o, 'order-start-moved', to)
    return { ok: true, from, to }
  })
}

async function tellClient(
  trx: Trx,
  outbox: Parameters<typeof notify>[0],
  desk: DeskRuntime,
  o: Order,
  key: string,
  at: Date,
): Promise<void> {
  const zone = await clientZone(trx, desk, o.user_id)
  await notify(outbox, {
    botId: desk.botId,
    chatId: o.user_id,
    lang: o.lang,
    key,
    params: { title: o.title, order: String(o.id), at: formatInstant(at, zone, o.lang) },
    dedupeKey: `order:${o.id}:${key}:${at.getTime()}`,
  })
}

export type CancelCheck =
  | { ok: true; order: Order; deadline: Date | undefined }
  | { ok: false; code: ChangeRefusal; deadline?: Date }

/** The confirmation's check (ord:cx): the client's order may be cancelled now. Checked again under the lock. */
export async function cancelCheck(
  deps: Deps,
  desk: DeskRuntime,
  userId: number,
  orderId: number,
): Promise<CancelCheck> {
  const order = await deps.db.selectFrom('orders').selectAll().where('id', '=', orderId).executeTakeFirst()
  return changeable(desk, order, userId, await dbNow(deps.db), 'cancel')
}

export type CancelResult =
  | { ok: true; refund: RefundOutcome }
  | { ok: false; code: ChangeRefusal; deadline?: Date }

/**
 * Cancels a start before it begins (a scheduled one before its cut-off; an on_request one before Start; an
 * immediate one before the desk's opening): the order's payment is refunded through the refund path (which
 * moves the order to refunded, revokes the waiting consultation and gives the place back, in one transaction).
 *
 * The cut-off and the order's state are checked under the order's row lock, in the transaction that claims the
 * payment for the refund (the lock the scheduled-start job takes to activate): either the start job activated
 * first and the cancel is refused ('started'), or the claim is there first and the start job waits for the
 * refund's outcome (src/consultations/start.service.ts; a refund that fails lets the start go ahead). The Telegram
 * call itself runs after that commit, outside any transaction.
 */
export async function cancelBeforeStart(
  deps: Deps,
  desk: DeskRuntime,
  input: { orderId: number; userId: number },
): Promise<CancelResult> {
  type Claimed = CancelResult | { ok: true; claimed: Payment }
  const claim = await deps.db.transaction().execute(async (trx): Promise<Claimed> => {
    const order = await lockOrder(trx, input.orderId)
    const c = changeable(desk, order, input.userId, await dbNow(trx), 'cancel')
    if (!c.ok) return c
    const payment = await primaryPayment(trx, c.order.id)
    if (!payment) return { ok: false, code: 'not-waiting' }
    const claimed = await claimRefund(trx, payment.id, REFUND_CLAIM_STALE_SECONDS)
    if (claimed) return { ok: true, claimed }
    const now = (await findPayment(trx, payment.id))!
    return {
      ok: true,
      refund: now.refunded_at
        ? { status: 'already-refunded', payment: now }
        : { status: 'in-progress', payment: now },
    }
  })
  if (!('claimed' in claim)) return claim
  return {
    ok: true,
    refund: await refundClaimed(deps, desk, claim.claimed, { id: input.userId, source: 'client' }),
  }
}
