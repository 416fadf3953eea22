import type { DeskRuntime } from '../config/load'
import type { Deps } from '../deps'
import type { Payment } from '../orders/orders.repository'
import type { RefundSource } from '../orders/orders.tables'
import { findDeskPayment, type RefundOutcome, refundPayment } from './refunds'
import { type PaidTopUp, paymentSubject, topUpsOf } from './topup-refund'

/**
 * Refunding a consultation together with its top-ups (issue 22): what the admin sees before a refund (the
 * consultation's top-ups not refunded yet, each with its amount and what it bought; or, for a top-up's own payment,
 * which consultation it topped up), and the refund of the main payment with the top-ups the admin chose, in one
 * step. Each payment is refunded by its own refundPayment (claimed once, Telegram called outside any transaction,
 * applied once), so two admins, a double press or a refunded_payment arriving meanwhile still refund each charge
 * once: a payment someone else got to first answers 'already-refunded' or 'in-progress'.
 */

export interface RefundPreview {
  payment: Payment
  /** The payment is a consultation's own: that consultation. */
  consultationId?: number
  /** Its top-ups not refunded yet (oldest first). */
  topUps: PaidTopUp[]
  /** The payment is a top-up's: the top-up. */
  topUpOf?: PaidTopUp
}

export async function refundPreview(
  deps: Deps,
  desk: DeskRuntime,
  paymentId: number,
): Promise<RefundPreview | undefined> {
  const payment = await findDeskPayment(deps, desk, { paymentId })
  if (!payment) return undefined
  const subject = await paymentSubject(deps.db, desk.botId, paymentId)
  if (subject?.kind === 'consultation') {
    const topUps = (await topUpsOf(deps.db, desk.botId, subject.consultationId)).filter((t) => !t.refundedAt)
    return { payment, consultationId: subject.consultationId, topUps }
  }
  if (subject?.kind === 'topup') return { payment, topUps: [], topUpOf: subject.topUp }
  return { payment, topUps: [] }
}

/** Which top-ups go with the refund: those shown (by payment id), or all shown up to a payment id (a button). */
export type TopUpChoice = { ids: readonly number[] } | { upTo: number }

export type RefundWithTopUpsResult =
  | {
      status: 'done'
      main: RefundOutcome
      topUps: { topUp: PaidTopUp; outcome: RefundOutcome }[]
      /** Top-ups paid after the list was shown (not refunded here). */
      later: PaidTopUp[]
    }
  | { status: 'unknown-payment' }
  | { status: 'not-a-consultation' }
  | { status: 'not-its-top-up'; paymentId: number }

export async function refundWithTopUps(
  deps: Deps,
  desk: DeskRuntime,
  paymentId: number,
  choice: TopUpChoice,
  actor: { id: number; source: Extract<RefundSource, 'admin' | 'dispute'> },
): Promise<RefundWithTopUpsResult> {
  const subject = await paymentSubject(deps.db, desk.botId, paymentId)
  if (!subject) return { status: 'unknown-payment' }
  if (subject.kind !== 'consultation') return { status: 'not-a-consultation' }
  const all = await topUpsOf(deps.db, desk.botId, subject.consultationId)
  let chosen: PaidTopUp[]
  if ('ids' in choice) {
    const wrong = choice.ids.find((id) => !all.some((t) => t.paymentId === id))
    if (wrong !== undefined) return { status: 'not-its-top-up', paymentId: wrong }
    chosen = all.filter((t) => choice.ids.includes(t.paymentId))
  } else chosen = all.filter((t) => t.paymentId <= choice.upTo)
  const later = 'upTo' in choice ? all.filter((t) => t.paymentId > choice.upTo && !t.refundedAt) : []

  // The consultation first (the client reads "refunded, closed for new questions", then each top-up's refund).
  const main = await refundPayment(deps, desk, { paymentId }, actor)
  if (main.status === 'failed' || main.status === 'unknown-payment')
    return { status: 'done', main, topUps: [], later: [] }
  const topUps: { topUp: PaidTopUp; outcome: RefundOutcome }[] = []
  for (const t of chosen)
    topUps.push({ topUp: t, outcome: await refundPayment(deps, desk, { paymentId: t.paymentId }, actor) })
  return { status: 'done', main, topUps, later }
}
