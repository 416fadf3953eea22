import type { InlineKeyboardButton, SuccessfulPayment } from 'grammy/types'
import { audit } from '../audit/audit'
import { clientZone } from '../clients/clients.service'
import type { DeskRuntime } from '../config/load'
import { activateConsultation } from '../consultations/activation'
import type { Trx } from '../db/database'
import type { Deps } from '../deps'
import type { Outbox } from '../jobs/jobs'
import { metrics } from '../metrics'
import { commitHold, takeCapacity } from '../orders/capacity'
import { lockOrder, moveOrder } from '../orders/order-state'
import {
  dbNow,
  insertConsultation,
  insertPaymentOnce,
  type Order,
  type Payment,
  updateOrder,
} from '../orders/orders.repository'
import {
  accountForOrder,
  nextFreeStarts,
  scheduleStart,
  scheduleStartDeadlineReminder,
} from '../orders/orders.service'
import { closeOnPurchase } from '../orders/waitlist'
import { notify } from '../telegram/notify'
import { windowParams } from '../time/client-time'
import { formatInstant } from '../time/format'
import { parseOrderPayload } from './payload'
import { XTR } from './pre-checkout'
import { applyTopUp } from './topup'

/**
 * successful_payment: Telegram took the client's Stars. In one transaction: lock the order, record the payment
 * (UNIQUE(bot_id, telegram_payment_charge_id) turns a redelivery into a no-op), re-check it against the order,
 * commit the capacity hold, move the order to active or paid_waiting, create the consultation and write the
 * confirmation and follow-ups to the outbox.
 *
 * A paid order is never rejected or dropped: a payment for a cancelled order or after the hold lapsed is honoured
 * (a start date is agreed when no place is left), a second payment for a paid order is an overpayment queued for
 * refund, and a payload that names no order of this desk is recorded as unmatched for an admin.
 */

export type PaymentOutcome =
  | { status: 'duplicate' }
  | { status: 'unmatched'; paymentId: number }
  | { status: 'overpayment'; paymentId: number; orderId: number }
  | { status: 'activated'; paymentId: number; orderId: number; consultationId: number }
  | { status: 'topped-up' | 'topup-late'; paymentId: number; orderId: number; consultationId: number }
  | {
      status: 'waiting'
      paymentId: number
      orderId: number
      consultationId: number
      /** opening: an immediate tariff bought outside hours, its window starting at the desk's opening. */
      reason: 'on_request' | 'scheduled' | 'opening' | 'late'
    }

export interface SuccessfulPaymentInput {
  userId: number
  /** The payer's language (for a payment that matches no order; an order has its own). */
  lang: string
  payment: SuccessfulPayment
}

const PAID_STATES: readonly Order['state'][] = ['paid_waiting', 'active', 'closed', 'refunded']

export async function recordSuccessfulPayment(
  deps: Deps,
  desk: DeskRuntime,
  input: SuccessfulPaymentInput,
): Promise<PaymentOutcome> {
  const sp = input.payment
  const orderId = parseOrderPayload(sp.invoice_payload)
  const outcome = await deps.jobs.transaction(deps.db, async (trx, outbox): Promise<PaymentOutcome> => {
    // The order lock first: concurrent deliveries of one payment queue here, and the first one's payment row is
    // committed before the next one tries to insert it.
    const order = orderId === undefined ? undefined : await lockOrder(trx, orderId)
    const values = paymentRow(desk.botId, input.userId, sp)

    if (!order || order.bot_id !== desk.botId || order.user_id !== input.userId) {
      const p = await insertPaymentOnce(trx, { ...values, order_id: null, kind: 'unmatched' })
      if (!p) return { status: 'duplicate' }
      await tellStaff(deps, outbox, desk, p, 'admin-pay-unmatched', { order: String(orderId ?? '—') })
      await notify(outbox, {
        botId: desk.botId,
        chatId: input.userId,
        lang: input.lang,
        key: 'pay-unmatched',
        params: { amount: p.total_amount },
        dedupeKey: `payment:${p.id}:client`,
        lane: 'payment',
      })
      await auditPayment(trx, desk, p, { unmatched: true, payload: sp.invoice_payload })
      return { status: 'unmatched', paymentId: p.id }
    }

    const already = PAID_STATES.includes(order.state)
    const p = await insertPaymentOnce(trx, {
      ...values,
      order_id: order.id,
      kind: already ? 'overpayment' : 'payment',
    })
    if (!p) return { status: 'duplicate' }
    await auditPayment(trx, desk, p, { orderState: order.state })

    if (already) {
      await notify(outbox, {
        botId: desk.botId,
        chatId: input.userId,
        lang: order.lang,
        key: 'pay-overpaid',
        params: { title: order.title, amount: p.total_amount, order: String(order.id) },
        dedupeKey: `payment:${p.id}:client`,
        lane: 'payment',
      })
      await tellStaff(deps, outbox, desk, p, 'admin-overpayment', {
        order: String(order.id),
        title: order.title,
      })
      return { status: 'overpayment', paymentId: p.id, orderId: order.id }
    }

    // Telegram charges exactly the invoice, so a mismatch means the order changed under an open invoice. The
    // payment is honoured all the same; an admin looks at it.
    if (sp.currency !== XTR || sp.total_amount !== order.price_stars)
      await tellStaff(deps, outbox, desk, p, 'admin-pay-mismatch', {
        order: String(order.id),
        price: order.price_stars,
        currency: sp.currency,
      })

    const now = await dbNow(trx)
    if (order.kind === 'topup') {
      const t = await applyTopUp(trx, outbox, deps, desk, order, p, now)
      return { ...t, paymentId: p.id, orderId: order.id }
    }
    await updateOrder(trx, order.id, { paid_at: now })
    const consultation = await insertConsultation(trx, {
      bot_id: desk.botId,
      order_id: order.id,
      user_id: order.user_id,
    })
    const result = { paymentId: p.id, orderId: order.id, consultationId: consultation.id }

    if (order.start_mode === 'on_request') {
      const startBy = new Date(now.getTime() + (order.start_within_days ?? 14) * 86_400_000)
      await moveOrder(trx, order, 'paid_waiting')
      await updateOrder(trx, order.id, { start_by: startBy })
      // The reminder a day before the Start period ends (src/lifecycle/start-reminders.ts), with this state.
      await scheduleStartDeadlineReminder(outbox, consultation.id, startBy)
      const zone = await clientZone(trx, desk, order.user_id)
      await notify(outbox, {
        botId: desk.botId,
        chatId: order.user_id,
        lang: order.lang,
        key: 'pay-confirm-on-request',
        params: {
          title: order.title,
          amount: p.total_amount,
          startBy: formatInstant(startBy, zone, order.lang),
          ...windowParams({ starts_at: null, access_until: null }, order, zone),
        },
        replyMarkup: {
          inline_keyboard: [
            [{ text: deps.i18n.t(order.lang, 'btn-start'), callback_data: `ord:start:${order.id}` }],
            [tzButton(deps, order.lang)],
          ],
        },
        dedupeKey: `payment:${p.id}:client`,
        lane: 'payment',
      })
      return { status: 'waiting', ...result, reason: 'on_request' }
    }

    // The place held at pre-checkout; if the hold lapsed (or there never was one) a place still free is taken now.
    const placed = await placeStart(trx, desk, order, now)
    if (!placed) {
      await moveOrder(trx, order, 'paid_waiting')
      await updateOrder(trx, order.id, { needs_start_date: true })
      const options = await nextFreeStarts(trx, desk, order, now, 3)
      const zone = await clientZone(trx, desk, order.user_id)
      await notify(outbox, {
        botId: desk.botId,
        chatId: order.user_id,
        lang: order.lang,
        key: options.length ? 'pay-late' : 'pay-late-no-options',
        params: { title: order.title, amount: p.total_amount, order: String(order.id) },
        replyMarkup: {
          inline_keyboard: [
            ...options.map((o): InlineKeyboardButton[] => [
              {
                text: deps.i18n.t(order.lang, 'btn-start-at', { at: formatInstant(o.at, zone, order.lang) }),
                callback_data: `ord:at:${order.id}:${Math.floor(o.at.getTime() / 1000)}`,
              },
            ]),
            [{ text: deps.i18n.t(order.lang, 'btn-ask-refund'), callback_data: `ord:refund:${order.id}` }],
          ],
        },
        dedupeKey: `payment:${p.id}:client`,
        lane: 'payment',
      })
      await tellStaff(deps, outbox, desk, p, 'admin-pay-late', {
        order: String(order.id),
        title: order.title,
      })
      return { status: 'waiting', ...result, reason: 'late' }
    }

    // The client has the slot now: their waitlist entries for it close here (a place held on another order of
    // theirs passes to the next in line), so nobody tells them later that a place of it freed up.
    if (order.start_mode === 'scheduled') await closeOnPurchase(trx, outbox, desk, order)

    // A start ahead: a scheduled slot, or an immediate tariff bought outside hours to start at the desk's opening
    // (src/orders/orders.service.ts immediateStart). Paid and waiting; the scheduled-start job activates it then.
    if (order.slot_start && order.slot_start.getTime() > now.getTime()) {
      const opening = order.start_mode === 'immediate'
      await moveOrder(trx, order, 'paid_waiting')
      await scheduleStart(outbox, consultation.id, order.slot_start)
      const zone = await clientZone(trx, desk, order.user_id)
      const end = new Date(order.slot_start.getTime() + order.window_minutes * 60_000)
      await notify(outbox, {
        botId: desk.botId,
        chatId: order.user_id,
        lang: order.lang,
        key: opening ? 'pay-confirm-at-opening' : 'pay-confirm-scheduled',
        params: {
          title: order.title,
          amount: p.total_amount,
          ...windowParams({ starts_at: order.slot_start, access_until: end }, order, zone),
        },
        replyMarkup: { inline_keyboard: [[tzButton(deps, order.lang)]] },
        dedupeKey: `payment:${p.id}:client`,
        lane: 'payment',
      })
      return { status: 'waiting', ...result, reason: opening ? 'opening' : 'scheduled' }
    }

    // immediate (or a slot, or a chosen opening, that has already begun): the window starts now; the activation
    // writes the confirmation.
    await activateConsultation(trx, outbox, deps, {
      consultationId: consultation.id,
      actorId: input.userId,
      reason: 'payment',
    })
    return { status: 'activated', ...result }
  })
  // Counted once per payment: a redelivered successful_payment is a duplicate.
  if (outcome.status !== 'duplicate') {
    metrics.payments.inc({ kind: outcome.status })
    if (sp.currency === 'XTR') metrics.paymentStars.inc({ kind: outcome.status }, sp.total_amount)
  }
  return outcome
}

/** Commits the pre-checkout hold, or takes a free place now; false when no place is left for the order's start. */
async function placeStart(trx: Trx, desk: DeskRuntime, order: Order, now: Date): Promise<boolean> {
  if (order.hold_request_id && (await commitHold(trx, order.hold_request_id))) return true
  const account = accountForOrder(desk, order, now)
  if (!account) return false
  const took = await takeCapacity(trx, desk.botId, account, `start:${order.id}:pay`)
  if (took.ok) await updateOrder(trx, order.id, { capacity_key: account.key })
  return took.ok
}

function tzButton(deps: Deps, lang: string): InlineKeyboardButton {
  return { text: deps.i18n.t(lang, 'tz-change-button'), callback_data: 'tz:menu' }
}

/** An alert in the staff group's General topic, with a Refund button for payments that wait for one. */
export async function tellStaff(
  deps: Deps,
  outbox: Outbox,
  desk: DeskRuntime,
  p: Payment,
  key: string,
  params: Record<string, string | number>,
): Promise<void> {
  const lang = desk.defaultLanguage
  await notify(outbox, {
    botId: desk.botId,
    chatId: desk.staffChatId,
    lang,
    key,
    params: {
      payment: String(p.id),
      charge: p.telegram_payment_charge_id,
      user: String(p.user_id),
      amount: p.total_amount,
      ...params,
    },
    replyMarkup: {
      inline_keyboard: [[{ text: deps.i18n.t(lang, 'btn-refund'), callback_data: `rf:ask:${p.id}` }]],
    },
    dedupeKey: `payment:${p.id}:staff:${key}`,
  })
}

async function auditPayment(trx: Trx, desk: DeskRuntime, p: Payment, details: Record<string, unknown>) {
  await audit(trx, {
    botId: desk.botId,
    actorId: p.user_id,
    action: `payment.${p.kind}`,
    subjectType: 'payment',
    subjectId: p.id,
    details: {
      orderId: p.order_id,
      charge: p.telegram_payment_charge_id,
      amount: p.total_amount,
      currency: p.currency,
      ...details,
    },
  })
}

/** The columns of a payment row as Telegram's successful_payment gives them (every Stars payment path). */
export function paymentRow(botId: number, userId: number, sp: SuccessfulPayment) {
  return {
    bot_id: botId,
    user_id: userId,
    telegram_payment_charge_id: sp.telegram_payment_charge_id,
    provider_payment_charge_id: sp.provider_payment_charge_id || null,
    currency: sp.currency,
    total_amount: sp.total_amount,
    invoice_payload: sp.invoice_payload,
  }
}
