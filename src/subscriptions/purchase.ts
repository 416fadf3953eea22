import type { User } from 'grammy/types'
import { isClientBanned } from '../clients/clients.repository'
import type { DeskRuntime } from '../config/load'
import type { PlanConfig } from '../config/schema'
import { claimUpdate } from '../db/once'
import type { Deps } from '../deps'
import { dbNow, insertOrder, type Order } from '../orders/orders.repository'
import type { PreCheckoutRefusal } from '../payments/pre-checkout'
import { XTR } from '../payments/pre-checkout'
import {
  findPlan,
  parsePlanPayload,
  pickText,
  planTermsHash,
  subscriptionPayload,
  upgradePayload,
  upgradePrice,
} from './plans'
import { activeSubscriptionOf } from './subscriptions.repository'

/**
 * Choosing a plan: an order of kind `subscription` (or `subscription_upgrade`) that pins the plan's terms version,
 * then the invoice link (the bot asks Telegram for it outside any transaction). The pre-checkout of a plan's link
 * checks the order; nothing is granted before successful_payment.
 */

export type PlanOrderRefusal =
  | 'duplicate'
  | 'plan-unknown'
  | 'plan-paused'
  | 'terms-changed'
  | 'banned'
  | 'already-subscribed'
  | 'not-subscribed'
  | 'not-an-upgrade'

export type PlanOrderResult =
  | { ok: true; order: Order; plan: PlanConfig; payload: string; amount: number }
  | { ok: false; code: PlanOrderRefusal }

export const SUBSCRIPTION_KIND = 'subscription'
export const UPGRADE_KIND = 'subscription_upgrade'

export async function createPlanOrder(
  deps: Deps,
  desk: DeskRuntime,
  input: {
    from: User
    planCode: string
    terms: string
    lang: string
    updateId: number
    kind: 'subscribe' | 'upgrade'
  },
): Promise<PlanOrderResult> {
  const plan = findPlan(desk, input.planCode)
  if (!plan) return { ok: false, code: 'plan-unknown' }
  if (plan.paused) return { ok: false, code: 'plan-paused' }
  if (input.terms !== planTermsHash(plan)) return { ok: false, code: 'terms-changed' }
  return deps.db.transaction().execute(async (trx): Promise<PlanOrderResult> => {
    if (!(await claimUpdate(trx, desk.botId, input.updateId))) return { ok: false, code: 'duplicate' }
    if (await isClientBanned(trx, desk.botId, input.from.id)) return { ok: false, code: 'banned' }
    const sub = await activeSubscriptionOf(trx, desk.botId, input.from.id)
    let price = plan.priceStars
    if (input.kind === 'subscribe' && sub) return { ok: false, code: 'already-subscribed' }
    if (input.kind === 'upgrade') {
      if (!sub) return { ok: false, code: 'not-subscribed' }
      const from = findPlan(desk, sub.plan_code)
      if (!from || plan.questions <= from.questions || plan.priceStars <= from.priceStars)
        return { ok: false, code: 'not-an-upgrade' }
      price = upgradePrice(from, plan)
    }
    const order = await insertOrder(trx, {
      bot_id: desk.botId,
      user_id: input.from.id,
      kind: input.kind === 'subscribe' ? SUBSCRIPTION_KIND : UPGRADE_KIND,
      tariff_code: plan.code,
      title: pickText(plan.title, input.lang, desk.defaultLanguage).slice(0, 32),
      price_stars: price,
      window_minutes: 30 * 24 * 60,
      appeals: plan.questions,
      drafts: plan.drafts,
      sla_minutes: Math.round(plan.slaBusinessHours * 60),
      start_mode: 'immediate',
      start_within_days: null,
      breach_policy: JSON.stringify({ kind: 'none' }),
      terms_version: plan.terms.version,
      lang: input.lang,
    })
    const payload = input.kind === 'subscribe' ? subscriptionPayload(order.id) : upgradePayload(order.id)
    return { ok: true, order, plan, payload, amount: price }
  })
}

export type PlanPreCheckout =
  | { ok: true }
  | { ok: false; code: PreCheckoutRefusal; params?: Record<string, string | number> }

/** The pre-checkout of a plan's invoice: the order is this payer's, unpaid, the price and the plan still stand. */
export async function decidePlanPreCheckout(
  deps: Deps,
  desk: DeskRuntime,
  q: { fromId: number; currency: string; totalAmount: number; payload: string },
): Promise<PlanPreCheckout> {
  const pl = parsePlanPayload(q.payload)
  if (!pl) return { ok: false, code: 'order-unknown' }
  const order = await deps.db.selectFrom('orders').selectAll().where('id', '=', pl.orderId).executeTakeFirst()
  if (!order || order.bot_id !== desk.botId) return { ok: false, code: 'order-unknown' }
  const kind = pl.kind === 'subscribe' ? SUBSCRIPTION_KIND : UPGRADE_KIND
  if ((order.kind as string) !== kind) return { ok: false, code: 'order-unknown' }
  if (order.user_id !== q.fromId) return { ok: false, code: 'order-foreign' }
  if (q.currency !== XTR) return { ok: false, code: 'wrong-currency' }
  if (q.totalAmount !== order.price_stars)
    return { ok: false, code: 'wrong-amount', params: { amount: order.price_stars } }
  if (order.state === 'cancelled') return { ok: false, code: 'order-expired' }
  if (order.state !== 'created') return { ok: false, code: 'order-paid' }
  const plan = findPlan(desk, order.tariff_code)
  if (!plan || plan.terms.version !== order.terms_version)
    return { ok: false, code: 'tariff-unavailable', params: { title: order.title } }
  if (await isClientBanned(deps.db, desk.botId, q.fromId)) return { ok: false, code: 'banned' }
  if (pl.kind === 'upgrade') {
    const sub = await activeSubscriptionOf(deps.db, desk.botId, q.fromId)
    if (!sub) return { ok: false, code: 'tariff-unavailable', params: { title: order.title } }
  }
  const now = await dbNow(deps.db)
  if (now.getTime() - order.created_at.getTime() > 24 * 3600_000) return { ok: false, code: 'order-expired' }
  return { ok: true }
}
