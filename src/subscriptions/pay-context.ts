import type { DeskRuntime } from '../config/load'
import type { PlanConfig } from '../config/schema'
import type { Trx } from '../db/database'
import type { Deps } from '../deps'
import type { Outbox } from '../jobs/jobs'
import type { Order, Payment } from '../orders/orders.repository'
import { setDeskFlags } from '../routing/desk-consultation.repository'
import { wakeLane } from '../routing/routing.jobs'
import { findPlan } from './plans'
import type { SubscriptionLink } from './subscriptions.repository'

/** What the payment transaction of a plan passes to its steps (payment.ts, charge-refusal.ts). */

export type PlanPaymentOutcome =
  | { status: 'duplicate' }
  | { status: 'unmatched' }
  /** A charge for a refunded subscription: recorded, nothing granted, the staff told to refund it. */
  | { status: 'overpayment' }
  /** Recorded and reported, nothing granted: the amount is not the subscription's price, or the plan it pays is gone. */
  | { status: 'refused'; reason: ChargeRefusal }
  | { status: 'started'; subscriptionId: number; periodNumber: number }
  /** A change of plan paid: a new subscription replacing `replaced`, its first period from `startsAt`. */
  | { status: 'changed'; subscriptionId: number; replaced: number; startsAt: Date }
  | { status: 'renewed'; subscriptionId: number; periodNumber: number; carried: number }

/** amount: not the price fixed in the link; ended: the subscription was refunded or replaced; change-void: the plan
 * a change was to replace is no longer active (replaced by another change, lapsed or refunded); plan-deleted: a
 * first charge for a plan deleted from the desk before it arrived (refunded at once, without an admin). */
export type ChargeRefusal = 'amount' | 'ended' | 'change-void' | 'plan-deleted'

export interface PayCtx {
  trx: Trx
  outbox: Outbox
  deps: Deps
  desk: DeskRuntime
  order: Order
  /** The link's price and plan as sold (undefined for an order made before links were stored). */
  link: SubscriptionLink | undefined
  payment: Payment
  paymentId: number
  charge: string
  now: Date
  expires: Date | null
}

export function planOf(desk: DeskRuntime, code: string, order: Order): PlanConfig {
  const p = findPlan(desk, code)
  if (p) return p
  // A plan taken out of the config still serves its subscribers on the numbers their order pinned.
  return {
    kind: 'subscription',
    code,
    title: { en: order.title },
    description: { en: order.title },
    priceStars: order.price_stars,
    questions: order.appeals,
    drafts: order.drafts,
    slaBusinessHours: order.sla_minutes / 60,
    features: { attachments: true, prioritySla: false, transcriptExport: true },
    carryOver: 'none',
    refundPolicy: 'keep_used',
    terms: { version: order.terms_version, text: { en: '' } },
  }
}

/** The plan a subscription's charges pay for: its link's snapshot (what was sold), else the order's numbers. */
export function linkPlan(desk: DeskRuntime, order: Order, link: SubscriptionLink | undefined): PlanConfig {
  return link?.plan ?? planOf(desk, order.tariff_code, order)
}

/** The renewal grace: a period's end plus this is the lapse instant. */
export function graceMs(desk: DeskRuntime): number {
  return desk.subscriptionGraceHours * 3600_000
}

/** The pinned card shows the plan's current period: redrawn by the topic lane. */
export async function refreshPlanCard(trx: Trx, outbox: Outbox, consultationId: number): Promise<void> {
  await setDeskFlags(trx, consultationId, { card_dirty: true })
  await wakeLane(outbox, consultationId, 'in')
}
