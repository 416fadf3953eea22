import type { DeskRuntime } from '../config/load'
import type { PlanConfig } from '../config/schema'
import type { Trx } from '../db/database'
import type { Deps } from '../deps'
import type { Outbox } from '../jobs/jobs'
import type { Order } from '../orders/orders.repository'
import { setDeskFlags } from '../routing/desk-consultation.repository'
import { wakeLane } from '../routing/routing.jobs'
import { findPlan } from './plans'

/** What the payment transaction of a plan passes to its steps (payment.ts, upgrade.ts). */

export type PlanPaymentOutcome =
  | { status: 'duplicate' }
  | { status: 'unmatched' }
  /** A charge for a refunded subscription: recorded, nothing granted, the staff told to refund it. */
  | { status: 'overpayment' }
  | { status: 'started'; subscriptionId: number; periodNumber: number }
  | { status: 'renewed'; subscriptionId: number; periodNumber: number; carried: number }
  | { status: 'upgraded'; subscriptionId: number; dGranted: number }

export interface PayCtx {
  trx: Trx
  outbox: Outbox
  deps: Deps
  desk: DeskRuntime
  order: Order
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
    upgradeGrant: 'difference',
    terms: { version: order.terms_version, text: { en: '' } },
  }
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
