import { audit } from '../audit/audit'
import { clientZone } from '../clients/clients.service'
import type { DeskRuntime } from '../config/load'
import type { Deps } from '../deps'
import { dbNow } from '../orders/orders.repository'
import { notify } from '../telegram/notify'
import { formatDate } from '../time/format'
import { findPlan, pickText } from './plans'
import { editSubscriptionQueue } from './subscriptions.jobs'
import {
  latestPeriod,
  latestSubscriptionOf,
  lockSubscription,
  periodAt,
  type Subscription,
} from './subscriptions.repository'

/**
 * The subscriber's side after the purchase: /plan's numbers, Cancel renewal / Resume (Telegram told through the
 * outbox), a downgrade scheduled for the next renewal, and the lapse when no renewal arrived by the period's end plus
 * the grace.
 */

export interface PlanView {
  subscription: Subscription
  title: string
  state: 'active' | 'lapsed' | 'refunded'
  periodNumber: number
  periodStart: Date
  periodEnd: Date
  granted: number
  used: number
  held: number
  left: number
  renewalCancelled: boolean
  nextPlanTitle: string | null
  zone: string
}

/** The numbers /plan shows: the current period's account (the one holding now, else the latest). */
export async function planView(
  deps: Deps,
  desk: DeskRuntime,
  userId: number,
  lang: string,
): Promise<PlanView | null> {
  const sub = await latestSubscriptionOf(deps.db, desk.botId, userId)
  if (!sub) return null
  const now = await dbNow(deps.db)
  const period = await periodAt(deps.db, sub.id, now)
  if (!period) return null
  const acc = await deps.ledger.balance({ accountId: period.account_id })
  const plan = findPlan(desk, sub.plan_code)
  const next = sub.next_plan_code ? findPlan(desk, sub.next_plan_code) : undefined
  const zone = await clientZone(deps.db, desk, userId)
  return {
    subscription: sub,
    title: plan ? pickText(plan.title, lang, desk.defaultLanguage) : sub.plan_code,
    state: sub.state,
    periodNumber: period.number,
    periodStart: period.period_start,
    periodEnd: period.period_end,
    granted: acc?.granted ?? 0,
    used: acc?.used ?? 0,
    held: acc?.reserved ?? 0,
    left: Math.max(0, acc?.available ?? 0),
    renewalCancelled: sub.renewal_cancelled,
    nextPlanTitle: next ? pickText(next.title, lang, desk.defaultLanguage) : null,
    zone,
  }
}

export type RenewalChange =
  | { ok: true; changed: boolean; accessUntil: Date }
  | { ok: false; code: 'no-subscription' | 'not-active' }

/**
 * Cancel renewal (cancel = true) or Resume: the wish is stored under the subscription's lock and a job tells
 * Telegram (editUserStarSubscription). Access runs to the period's end either way; Resume only while active.
 */
export async function setRenewal(
  deps: Deps,
  desk: DeskRuntime,
  userId: number,
  cancel: boolean,
): Promise<RenewalChange> {
  return deps.jobs.transaction(deps.db, async (trx, outbox): Promise<RenewalChange> => {
    const head = await latestSubscriptionOf(trx, desk.botId, userId)
    if (!head) return { ok: false, code: 'no-subscription' }
    const sub = await lockSubscription(trx, head.id)
    const last = await latestPeriod(trx, head.id)
    if (!sub || !last) return { ok: false, code: 'no-subscription' }
    const now = await dbNow(trx)
    if (sub.state !== 'active' || last.period_end.getTime() <= now.getTime())
      return { ok: false, code: 'not-active' }
    if (sub.renewal_cancelled === cancel) return { ok: true, changed: false, accessUntil: last.period_end }
    await trx
      .updateTable('subscription')
      .set({ renewal_cancelled: cancel, updated_at: now })
      .where('id', '=', sub.id)
      .execute()
    await outbox.send(editSubscriptionQueue, { subscriptionId: sub.id })
    await audit(trx, {
      botId: desk.botId,
      actorId: userId,
      action: cancel ? 'subscription.renewal_cancelled' : 'subscription.renewal_resumed',
      subjectType: 'subscription',
      subjectId: sub.id,
      details: { periodEnd: last.period_end.toISOString() },
    })
    return { ok: true, changed: true, accessUntil: last.period_end }
  })
}

/** The job: Telegram gets the subscription's current wish (the last change wins, however the jobs are ordered). */
export async function runEditSubscription(deps: Deps, job: { subscriptionId: number }): Promise<void> {
  const sub = await deps.db
    .selectFrom('subscription')
    .selectAll()
    .where('id', '=', job.subscriptionId)
    .executeTakeFirst()
  if (!sub) return
  await deps.api(sub.bot_id).editUserStarSubscription(sub.user_id, sub.first_charge_id, sub.renewal_cancelled)
}

export type PlanChange = { ok: true } | { ok: false; code: 'no-subscription' | 'plan-unknown' | 'same-plan' }

/** A change of plan at the next renewal (a downgrade): recorded now, applied by the renewal's transaction. */
export async function scheduleDowngrade(
  deps: Deps,
  desk: DeskRuntime,
  userId: number,
  planCode: string,
): Promise<PlanChange> {
  if (!findPlan(desk, planCode)) return { ok: false, code: 'plan-unknown' }
  return deps.db.transaction().execute(async (trx): Promise<PlanChange> => {
    const head = await latestSubscriptionOf(trx, desk.botId, userId)
    const sub = head?.state === 'active' ? await lockSubscription(trx, head.id) : undefined
    if (!sub) return { ok: false, code: 'no-subscription' }
    if (sub.plan_code === planCode) return { ok: false, code: 'same-plan' }
    await trx.updateTable('subscription').set({ next_plan_code: planCode }).where('id', '=', sub.id).execute()
    return { ok: true }
  })
}

export type LapseResult = 'lapsed' | 'moved' | 'not-active'

/**
 * At period end + grace: if no later period was paid, the subscription lapses and the client is told why new
 * questions are refused. The consultation's window (access_until = the same instant) is closed by the lifecycle's
 * window job, which keeps open questions answered.
 */
export async function runLapse(
  deps: Deps,
  job: { subscriptionId: number; periodEnd: string },
  opts: { now?: Date } = {},
): Promise<LapseResult> {
  return deps.jobs.transaction(deps.db, async (trx, outbox): Promise<LapseResult> => {
    const sub = await lockSubscription(trx, job.subscriptionId)
    if (sub?.state !== 'active') return 'not-active'
    const desk = deps.desk(sub.bot_id)
    const last = await latestPeriod(trx, sub.id)
    if (!last) return 'not-active'
    const now = opts.now ?? (await dbNow(trx))
    const lapseAt = last.period_end.getTime() + desk.subscriptionGraceHours * 3600_000
    if (last.period_end.toISOString() !== job.periodEnd || now.getTime() < lapseAt) return 'moved'
    await trx
      .updateTable('subscription')
      .set({ state: 'lapsed', lapsed_at: now, updated_at: now })
      .where('id', '=', sub.id)
      .execute()
    const order = await trx
      .selectFrom('orders')
      .select(['lang', 'title'])
      .where('id', '=', sub.order_id)
      .executeTakeFirstOrThrow()
    const zone = await clientZone(trx, desk, sub.user_id)
    await notify(outbox, {
      botId: desk.botId,
      chatId: sub.user_id,
      lang: order.lang,
      key: 'sub-lapsed',
      params: { title: order.title, end: formatDate(last.period_end, zone, order.lang) },
      dedupeKey: `subscription:${sub.id}:lapsed:${job.periodEnd}`,
    })
    await audit(trx, {
      botId: desk.botId,
      actorId: null,
      action: 'subscription.lapsed',
      subjectType: 'subscription',
      subjectId: sub.id,
      details: { periodEnd: job.periodEnd },
    })
    return 'lapsed'
  })
}
