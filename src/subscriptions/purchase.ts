import type { User } from 'grammy/types'
import { isClientBanned } from '../clients/clients.repository'
import type { DeskRuntime } from '../config/load'
import { pick } from '../config/load'
import type { PlanConfig } from '../config/schema'
import { claimUpdate } from '../db/once'
import type { Deps } from '../deps'
import { dbNow, insertOrder, type Order } from '../orders/orders.repository'
import type { PreCheckoutRefusal } from '../payments/pre-checkout'
import { XTR } from '../payments/pre-checkout'
import { planInDesk } from '../settings/settings'
import { cut, INVOICE_TITLE_MAX } from '../text'
import { changeStartsAt, findPlan, parsePlanPayload, planTermsHash, subscriptionPayload } from './plans'
import { activeSubscriptionOf, latestPeriod, linkOf, lockSubscription } from './subscriptions.repository'

/**
 * Choosing a plan: an order of kind `subscription` and its link row (subscription_link: the price the link will
 * charge at every renewal and the plan as sold), then the invoice link (the bot asks Telegram for it outside any
 * transaction). A change of plan is the same: a new subscription at the new plan's full price whose link names the
 * subscription it replaces and the end of its paid time, when the new plan starts (plans.ts changeStartsAt). The
 * pre-checkout checks the order and that what the offer said still holds; nothing is granted before
 * successful_payment.
 */

export type PlanOrderRefusal =
  | 'duplicate'
  | 'plan-unknown'
  | 'plan-paused'
  | 'terms-changed'
  | 'banned'
  | 'already-subscribed'
  | 'not-subscribed'
  | 'same-plan'

export type PlanOrderResult =
  | {
      ok: true
      order: Order
      plan: PlanConfig
      payload: string
      amount: number
      /** A change of plan: the plan it replaces and when the new one starts. */
      change?: { from: PlanConfig; startsAt: Date }
    }
  | { ok: false; code: PlanOrderRefusal }

export const SUBSCRIPTION_KIND = 'subscription'

export async function createPlanOrder(
  deps: Deps,
  desk: DeskRuntime,
  input: {
    from: User
    planCode: string
    terms: string
    lang: string
    updateId: number
    kind: 'subscribe' | 'change'
  },
): Promise<PlanOrderResult> {
  const plan = findPlan(desk, input.planCode)
  if (!plan) return { ok: false, code: 'plan-unknown' }
  if (plan.paused) return { ok: false, code: 'plan-paused' }
  if (input.terms !== planTermsHash(plan)) return { ok: false, code: 'terms-changed' }
  return deps.db.transaction().execute(async (trx): Promise<PlanOrderResult> => {
    if (!(await claimUpdate(trx, desk.botId, input.updateId))) return { ok: false, code: 'duplicate' }
    // The plan as stored now (this process's copy may be a moment old), under the share lock its delete takes for
    // update: no link is made for a plan deleted before. One made just before a delete is refused at pre-checkout,
    // and a charge that slips through is refunded (payment.ts).
    if (!(await planInDesk(trx, desk.botId, plan.code))) return { ok: false, code: 'plan-unknown' }
    if (await isClientBanned(trx, desk.botId, input.from.id)) return { ok: false, code: 'banned' }
    const head = await activeSubscriptionOf(trx, desk.botId, input.from.id)
    const sub = head ? await lockSubscription(trx, head.id) : undefined
    if (input.kind === 'subscribe' && sub) return { ok: false, code: 'already-subscribed' }
    let change: { from: PlanConfig; startsAt: Date; paidUntil: Date; subscriptionId: number } | undefined
    if (input.kind === 'change') {
      const last = sub ? await latestPeriod(trx, sub.id) : undefined
      if (sub?.state !== 'active' || !last) return { ok: false, code: 'not-subscribed' }
      const fromOrder = await trx
        .selectFrom('orders')
        .selectAll()
        .where('id', '=', sub.order_id)
        .executeTakeFirstOrThrow()
      const link = await linkOf(trx, sub.order_id)
      if ((link?.plan_code ?? sub.plan_code) === plan.code) return { ok: false, code: 'same-plan' }
      const from = link?.plan ?? findPlan(desk, sub.plan_code)
      change = {
        from: from ?? { ...plan, code: sub.plan_code, title: { en: fromOrder.title } },
        startsAt: changeStartsAt(last.period_end, await dbNow(trx)),
        paidUntil: last.period_end,
        subscriptionId: sub.id,
      }
    }
    const order = await insertOrder(trx, {
      bot_id: desk.botId,
      user_id: input.from.id,
      kind: SUBSCRIPTION_KIND,
      tariff_code: plan.code,
      title: cut(pick(plan.title, input.lang, desk.defaultLanguage), INVOICE_TITLE_MAX),
      price_stars: plan.priceStars,
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
    await trx
      .insertInto('subscription_link')
      .values({
        order_id: order.id,
        bot_id: desk.botId,
        plan_code: plan.code,
        price_stars: plan.priceStars,
        plan: JSON.stringify(plan),
        replaces_subscription_id: change?.subscriptionId ?? null,
        paid_until: change?.paidUntil ?? null,
      })
      .execute()
    return {
      ok: true,
      order,
      plan,
      payload: subscriptionPayload(order.id),
      amount: plan.priceStars,
      ...(change ? { change: { from: change.from, startsAt: change.startsAt } } : {}),
    }
  })
}

export type PlanPreCheckout =
  | { ok: true }
  | { ok: false; code: PreCheckoutRefusal | 'plan-changed'; params?: Record<string, string | number> }

/**
 * The pre-checkout of a plan's link: the order is this payer's, unpaid, the price and the plan still stand; a
 * change of plan still replaces an active subscription whose paid time ends where the offer said.
 */
export async function decidePlanPreCheckout(
  deps: Deps,
  desk: DeskRuntime,
  q: { fromId: number; currency: string; totalAmount: number; payload: string },
): Promise<PlanPreCheckout> {
  const pl = parsePlanPayload(q.payload)
  if (!pl) return { ok: false, code: 'order-unknown' }
  const order = await deps.db.selectFrom('orders').selectAll().where('id', '=', pl.orderId).executeTakeFirst()
  if (!order || order.bot_id !== desk.botId) return { ok: false, code: 'order-unknown' }
  if ((order.kind as string) !== SUBSCRIPTION_KIND) return { ok: false, code: 'order-unknown' }
  if (order.user_id !== q.fromId) return { ok: false, code: 'order-foreign' }
  if (q.currency !== XTR) return { ok: false, code: 'wrong-currency' }
  const link = await linkOf(deps.db, order.id)
  const price = link?.price_stars ?? order.price_stars
  if (q.totalAmount !== price) return { ok: false, code: 'wrong-amount', params: { amount: price } }
  if (order.state === 'cancelled') return { ok: false, code: 'order-expired' }
  if (order.state !== 'created') return { ok: false, code: 'order-paid' }
  const plan = findPlan(desk, order.tariff_code)
  if (!plan || plan.terms.version !== order.terms_version)
    return { ok: false, code: 'tariff-unavailable', params: { title: order.title } }
  if (await isClientBanned(deps.db, desk.botId, q.fromId)) return { ok: false, code: 'banned' }
  const active = await activeSubscriptionOf(deps.db, desk.botId, q.fromId)
  if (link?.replaces_subscription_id) {
    const last = active ? await latestPeriod(deps.db, active.id) : undefined
    if (
      active?.id !== link.replaces_subscription_id ||
      !last ||
      !link.paid_until ||
      last.period_end.getTime() !== link.paid_until.getTime()
    )
      return { ok: false, code: 'plan-changed' }
  } else if (active) return { ok: false, code: 'plan-changed' }
  const now = await dbNow(deps.db)
  if (now.getTime() - order.created_at.getTime() > 24 * 3600_000) return { ok: false, code: 'order-expired' }
  return { ok: true }
}
