import { sql } from 'kysely'
import { clientZone } from '../clients/clients.service'
import type { DeskRuntime } from '../config/load'
import { scheduleWindowJobs } from '../consultations/consultations.jobs'
import { postToTopic, refreshTopic } from '../consultations/desk.service'
import type { Db, Trx } from '../db/database'
import type { Outbox } from '../jobs/jobs'
import { LedgerTx } from '../ledger/ledger.service'
import { CONSULTATION_SCOPE } from '../orders/allowances'
import { canTransition, lockOrder, moveOrder } from '../orders/order-state'
import { dbNow, lockConsultationView, type Order, type Payment } from '../orders/orders.repository'
import { formatInstant, staffZone } from '../time/format'

/**
 * A refunded top-up takes back what it added, as far as it is unused (the same rule as a plan's keep_used; stated
 * in the top-up offer and the invoice, `topup-offer` / `topup-invoice-*`). In the refund's transaction
 * (applyRefund, which holds the top-up order's lock and the payment's):
 *
 * - more questions: the consultation's appeals account is granted that many fewer, down to what is used or held
 *   (voided = min(the top-up's questions, granted - used - reserved)). The questions of a consultation are counted
 *   as used from its own allowance first, a top-up's last, so "used" is whatever of the top-up was needed; a question
 *   accepted (held) counts as used: it is still answered.
 * - more hours: the window loses the top-up's hours from its end, but never the part already passed: access_until
 *   becomes max(now, access_until - hours) (and never later than it was), the ledger period moves with it, and the
 *   window's jobs are written for the new end (a window cut back to now closes now; accepted questions are answered
 *   as at any close).
 *
 * Only while the consultation is active does the window move; questions are voided in any state (the ledger stays
 * true for the reports). A top-up that granted nothing (paid after its consultation had ended: its order never
 * reached 'closed') takes back nothing. Locks: the top-up order (caller), then the consultation's order, then the
 * consultation, then the account: the order the payment (src/payments/topup.ts) and the admission take them in.
 */
export interface TopUpRefund {
  consultationId: number
  kind: 'questions' | 'hours'
  /** Questions or hours the top-up bought. */
  bought: number
  /** Questions taken back (unused). */
  voided: number
  /** Minutes taken off the window's end. */
  minutesTaken: number
  /** The window's end after the refund (null: the consultation is no longer active). */
  accessUntil: Date | null
  /** What the client is told (a locale key and its parameters). */
  notice: { key: string; params: Record<string, string | number> }
}

export async function applyTopUpRefund(
  trx: Trx,
  outbox: Outbox,
  desk: DeskRuntime,
  order: Order,
  p: Payment,
): Promise<TopUpRefund> {
  const consultationId = order.topup_consultation_id!
  // Granted only when the top-up's payment found its consultation active (src/payments/topup.ts: it then closes the
  // order; a late one stays active and granted nothing).
  const fulfilled = order.state === 'closed'
  if (canTransition(order.state, 'refunded')) await moveOrder(trx, order, 'refunded')
  const kind = order.topup_questions > 0 ? 'questions' : 'hours'
  const bought = kind === 'questions' ? order.topup_questions : order.topup_hours
  const out: TopUpRefund = {
    consultationId,
    kind,
    bought,
    voided: 0,
    minutesTaken: 0,
    accessUntil: null,
    notice: { key: 'refund-done-topup', params: { amount: p.total_amount, title: order.title } },
  }
  const head = await trx
    .selectFrom('consultation')
    .select('order_id')
    .where('id', '=', consultationId)
    .executeTakeFirst()
  if (!head || !fulfilled) return out
  await lockOrder(trx, head.order_id)
  const v = await lockConsultationView(trx, consultationId)
  if (!v) return out
  const active = v.state === 'active' && v.starts_at !== null && v.access_until !== null

  if (kind === 'questions') {
    const a = await trx
      .selectFrom('ledger_grant as g')
      .innerJoin('ledger_account as a', 'a.id', 'g.account_id')
      .select(['a.id', 'a.granted', 'a.reserved', 'a.used'])
      .where('g.request_id', '=', `topup:${order.id}`)
      .forUpdate('a')
      .executeTakeFirst()
    if (!a) return out
    const voided = Math.max(0, Math.min(bought, a.granted - a.reserved - a.used))
    if (voided > 0)
      await new LedgerTx(trx, 'allow', 0).adjust({
        accountId: a.id,
        dGranted: -voided,
        note: `top-up refunded: payment ${p.id}, order ${order.id}`,
        requestId: `topup-refund:${p.id}`,
      })
    out.voided = voided
    if (!active) return out
    out.accessUntil = v.access_until
    out.notice = {
      key: `refund-done-topup-questions-${voided === 0 ? 'used' : voided === bought ? 'void' : 'partly'}`,
      params: {
        amount: p.total_amount,
        count: bought,
        voided,
        left: Math.max(0, a.granted - voided - a.reserved - a.used),
      },
    }
    await postToTopic(trx, outbox, {
      consultationId,
      botId: desk.botId,
      key: 'topup-refunded-note-questions',
      params: { payment: String(p.id), amount: p.total_amount, count: bought, voided },
      dedupeKey: `topup:refunded:${p.id}`,
    })
    await refreshTopic(trx, outbox, v, { card: true })
    return out
  }

  if (!active) return out
  const now = await dbNow(trx)
  const until = v.access_until!
  const cut = new Date(until.getTime() - bought * 3_600_000)
  const end = new Date(Math.min(until.getTime(), Math.max(now.getTime(), cut.getTime())))
  out.accessUntil = end
  out.minutesTaken = Math.round((until.getTime() - end.getTime()) / 60_000)
  if (end.getTime() < until.getTime()) {
    await trx
      .updateTable('consultation')
      .set({ access_until: end, updated_at: sql`now()` })
      .where('id', '=', v.id)
      .execute()
    // The window's ledger accounts (appeals, drafts) have the window as their period (as /extend moves them).
    await trx
      .updateTable('ledger_account')
      .set({ period_end: end })
      .where('scope', '=', CONSULTATION_SCOPE)
      .where('subject', '=', String(v.id))
      .where('period_start', '=', v.starts_at!)
      .execute()
    // The jobs for the new end; the old ones find the window moved (or closed) and do nothing.
    await scheduleWindowJobs(outbox, desk, { id: v.id, starts_at: v.starts_at, access_until: end })
  }
  const zone = await clientZone(trx, desk, v.user_id)
  out.notice = {
    key: out.minutesTaken > 0 ? 'refund-done-topup-hours' : 'refund-done-topup-hours-passed',
    params: {
      amount: p.total_amount,
      count: bought,
      end: formatInstant(end, zone, v.lang),
    },
  }
  await postToTopic(trx, outbox, {
    consultationId,
    botId: desk.botId,
    key: 'topup-refunded-note-hours',
    params: {
      payment: String(p.id),
      amount: p.total_amount,
      count: bought,
      end: formatInstant(end, staffZone(desk), desk.defaultLanguage),
    },
    dedupeKey: `topup:refunded:${p.id}`,
  })
  await refreshTopic(trx, outbox, v)
  return out
}

/** A paid top-up of a consultation, as an admin sees it before a refund. */
export interface PaidTopUp {
  paymentId: number
  orderId: number
  consultationId: number
  amount: number
  charge: string
  questions: number
  hours: number
  refundedAt: Date | null
}

/** The top-up payments (not overpayments) of these consultations, oldest first. */
export async function topUpsOf(
  q: Db | Trx,
  botId: number,
  consultationIds: number | readonly number[],
): Promise<PaidTopUp[]> {
  const ids = typeof consultationIds === 'number' ? [consultationIds] : [...consultationIds]
  if (ids.length === 0) return []
  return q
    .selectFrom('payment as p')
    .innerJoin('orders as o', 'o.id', 'p.order_id')
    .select([
      'p.id as paymentId',
      'o.id as orderId',
      'o.topup_consultation_id as consultationId',
      'p.total_amount as amount',
      'p.telegram_payment_charge_id as charge',
      'o.topup_questions as questions',
      'o.topup_hours as hours',
      'p.refunded_at as refundedAt',
    ])
    .where('p.bot_id', '=', botId)
    .where('p.kind', '=', 'payment')
    .where('o.kind', '=', 'topup')
    .where('o.topup_consultation_id', 'in', ids)
    .orderBy('p.id')
    .execute() as Promise<PaidTopUp[]>
}

/** What a payment paid for: a consultation (its main payment), a top-up of one, or something else. */
export async function paymentSubject(
  q: Db | Trx,
  botId: number,
  paymentId: number,
): Promise<
  | { kind: 'consultation'; consultationId: number }
  | { kind: 'topup'; topUp: PaidTopUp }
  | { kind: 'other' }
  | undefined
> {
  const r = await q
    .selectFrom('payment as p')
    .leftJoin('orders as o', 'o.id', 'p.order_id')
    .leftJoin('consultation as c', 'c.order_id', 'o.id')
    .select([
      'p.kind as paymentKind',
      'o.kind as orderKind',
      'c.id as consultationId',
      'o.topup_consultation_id',
    ])
    .where('p.id', '=', paymentId)
    .where('p.bot_id', '=', botId)
    .executeTakeFirst()
  if (!r) return undefined
  if (r.paymentKind !== 'payment') return { kind: 'other' }
  if (r.orderKind === 'consultation' && r.consultationId)
    return { kind: 'consultation', consultationId: r.consultationId }
  if (r.orderKind === 'topup' && r.topup_consultation_id) {
    const t = (await topUpsOf(q, botId, r.topup_consultation_id)).find((x) => x.paymentId === paymentId)
    if (t) return { kind: 'topup', topUp: t }
  }
  return { kind: 'other' }
}
