import { clientZone } from '../clients/clients.service'
import type { DeskRuntime } from '../config/load'
import { extendWindow, refreshTopic } from '../consultations/desk.service'
import type { Trx } from '../db/database'
import type { Deps } from '../deps'
import type { Outbox } from '../jobs/jobs'
import { LedgerTx } from '../ledger/ledger.service'
import { APPEALS_UNIT, CONSULTATION_SCOPE } from '../orders/allowances'
import { lockOrder, moveOrder } from '../orders/order-state'
import { lockConsultationView, type Order, type Payment, updateOrder } from '../orders/orders.repository'
import { notify } from '../telegram/notify'
import { formatInstant } from '../time/format'

/**
 * A top-up's payment (an order of kind 'topup', src/orders/topups.ts), in the successful_payment transaction: the
 * payment row is already recorded (its charge id unique, so a redelivery never gets here twice) and the top-up
 * order locked. More questions are granted on the consultation's appeals account (request id `topup:<order>`, so a
 * replay grants nothing twice); more hours move access_until and the ledger's period (the desk's extendWindow).
 * The order then moves to closed (fulfilled); a refund moves it to refunded and takes back what it added as far as
 * unused (src/payments/topup-refund.ts).
 *
 * A consultation that ended between the invoice and the payment gets nothing: the payment is honoured as a payment
 * waiting for a refund, and the admins are told.
 */
export type TopUpOutcome =
  | { status: 'topped-up'; consultationId: number }
  | { status: 'topup-late'; consultationId: number }

/** Is the top-up's consultation still open for it? (pre-checkout's extra check for a top-up) */
export async function topUpConsultationActive(trx: Trx, order: Order): Promise<boolean> {
  if (!order.topup_consultation_id) return false
  const c = await trx
    .selectFrom('consultation')
    .select('state')
    .where('id', '=', order.topup_consultation_id)
    .executeTakeFirst()
  return c?.state === 'active'
}

export async function applyTopUp(
  trx: Trx,
  outbox: Outbox,
  deps: Deps,
  desk: DeskRuntime,
  order: Order,
  p: Payment,
  now: Date,
): Promise<TopUpOutcome> {
  const consultationId = order.topup_consultation_id!
  await updateOrder(trx, order.id, { paid_at: now })
  await moveOrder(trx, order, 'active')
  // The consultation's own order first, then the consultation: the order every other path locks them in.
  const head = await trx
    .selectFrom('consultation')
    .select('order_id')
    .where('id', '=', consultationId)
    .executeTakeFirstOrThrow()
  await lockOrder(trx, head.order_id)
  const v = await lockConsultationView(trx, consultationId)
  const zone = await clientZone(trx, desk, order.user_id)
  if (v?.state !== 'active' || !v.starts_at || !v.access_until) {
    await notify(outbox, {
      botId: desk.botId,
      chatId: order.user_id,
      lang: order.lang,
      key: 'topup-late',
      params: { amount: p.total_amount },
      consultationId,
      dedupeKey: `payment:${p.id}:client`,
      lane: 'payment',
    })
    await notify(outbox, {
      botId: desk.botId,
      chatId: desk.staffChatId,
      lang: desk.defaultLanguage,
      key: 'admin-topup-late',
      params: {
        payment: String(p.id),
        amount: p.total_amount,
        user: String(p.user_id),
        consultation: String(consultationId),
        charge: p.telegram_payment_charge_id,
      },
      replyMarkup: {
        inline_keyboard: [
          [{ text: deps.i18n.t(desk.defaultLanguage, 'btn-refund'), callback_data: `rf:ask:${p.id}` }],
        ],
      },
      dedupeKey: `payment:${p.id}:staff:topup-late`,
    })
    return { status: 'topup-late', consultationId }
  }

  if (order.topup_questions > 0) {
    const g = await new LedgerTx(trx, deps.config.ledger.overrunPolicy, 0).grant({
      requestId: `topup:${order.id}`,
      scope: CONSULTATION_SCOPE,
      subject: v.id,
      unit: APPEALS_UNIT,
      periodStart: v.starts_at,
      periodEnd: v.access_until,
      amount: order.topup_questions,
      timeZone: desk.schedule.timezone,
    })
    if (!g.ok) throw new Error(`top-up ${order.id}: grant refused (${g.reason})`)
    await refreshTopic(trx, outbox, v, { card: true })
    await notify(outbox, {
      botId: desk.botId,
      chatId: order.user_id,
      lang: order.lang,
      key: 'topup-done-questions',
      params: { count: order.topup_questions, left: g.account.available, amount: p.total_amount },
      consultationId,
      dedupeKey: `payment:${p.id}:client`,
      lane: 'payment',
    })
  } else {
    const hours = order.topup_hours
    const r = await extendWindow(trx, outbox, desk, {
      consultationId: v.id,
      hours,
      actorId: order.user_id,
      actorLabel: deps.i18n.t(desk.defaultLanguage, 'topup-actor'),
      reason: `topup order ${order.id}`,
      notifyClient: false,
    })
    if (r.status !== 'extended') throw new Error(`top-up ${order.id}: window not extended (${r.state})`)
    await notify(outbox, {
      botId: desk.botId,
      chatId: order.user_id,
      lang: order.lang,
      key: 'topup-done-hours',
      params: { count: hours, end: formatInstant(r.accessUntil, zone, order.lang), amount: p.total_amount },
      consultationId,
      dedupeKey: `payment:${p.id}:client`,
      lane: 'payment',
    })
  }
  await moveOrder(trx, order, 'closed')
  return { status: 'topped-up', consultationId }
}
