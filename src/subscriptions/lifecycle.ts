import { audit } from '../audit/audit'
import { clientZone } from '../clients/clients.service'
import type { DeskRuntime } from '../config/load'
import { pick } from '../config/load'
import type { Deps } from '../deps'
import { dbNow } from '../orders/orders.repository'
import { notify } from '../telegram/notify'
import { formatDate, type Zone } from '../time/format'
import { changeStartsAt, findPlan } from './plans'
import { editSubscriptionQueue } from './subscriptions.jobs'
import {
  latestPeriod,
  latestSubscriptionOf,
  linkOf,
  lockSubscription,
  periodAt,
  type Subscription,
} from './subscriptions.repository'

/**
 * The subscriber's side after the purchase: /plan's numbers, Cancel renewal / Resume (Telegram told through the
 * outbox), and the lapse when no renewal arrived by the period's end plus the grace. A change of plan is a new
 * subscription (purchase.ts, payment.ts); until it starts /plan shows the running period and the plan paid next.
 */

export interface PlanView {
  subscription: Subscription
  /** The plan the subscription was sold with (its link's snapshot, else the config's plan of its code). */
  planCode: string
  title: string
  state: 'active' | 'lapsed' | 'refunded' | 'replaced'
  periodNumber: number
  periodStart: Date
  periodEnd: Date
  granted: number
  used: number
  held: number
  left: number
  renewalCancelled: boolean
  /** A change of plan paid, starting later: the plan, its start and its price per 30 days. */
  next: { title: string; start: Date; price: number } | null
  /** When a change of plan made now would start (plans.ts changeStartsAt: the end of the paid time, or now). */
  changeStartsAt: Date
  /** The end of the time paid for (the latest period of the latest subscription). */
  paidUntil: Date
  /** When Telegram charges next (the last charge's subscription_expiration_date, else the paid time's end). */
  nextCharge: Date
  zone: Zone
}

async function soldPlan(deps: Deps, desk: DeskRuntime, sub: Subscription, lang: string) {
  const link = await linkOf(deps.db, sub.order_id)
  const plan = link?.plan ?? findPlan(desk, sub.plan_code)
  return {
    code: plan?.code ?? sub.plan_code,
    title: plan ? pick(plan.title, lang, desk.defaultLanguage) : sub.plan_code,
  }
}

/** The numbers /plan shows: the current period's account (the one holding now, else the latest). */
export async function planView(
  deps: Deps,
  desk: DeskRuntime,
  userId: number,
  lang: string,
): Promise<PlanView | null> {
  const latest = await latestSubscriptionOf(deps.db, desk.botId, userId)
  if (!latest) return null
  const now = await dbNow(deps.db)
  let sub = latest
  let period = await periodAt(deps.db, sub.id, now)
  if (!period) return null
  let next: PlanView['next'] = null
  // A change paid ahead: the replaced subscription's period is the one running now.
  if (latest.replaces !== null && period.period_start.getTime() > now.getTime()) {
    const old = await deps.db
      .selectFrom('subscription')
      .selectAll()
      .where('id', '=', latest.replaces)
      .executeTakeFirst()
    const oldPeriod = old ? await periodAt(deps.db, old.id, now) : undefined
    if (old && oldPeriod && oldPeriod.period_end.getTime() > now.getTime()) {
      next = {
        title: (await soldPlan(deps, desk, latest, lang)).title,
        start: period.period_start,
        price: latest.price_stars,
      }
      sub = old
      period = oldPeriod
    }
  }
  const acc = await deps.ledger.balance({ accountId: period.account_id })
  const plan = await soldPlan(deps, desk, sub, lang)
  const zone = await clientZone(deps.db, desk, userId)
  const paid = await latestPeriod(deps.db, latest.id)
  return {
    subscription: latest,
    changeStartsAt: changeStartsAt(paid?.period_end ?? now, now),
    paidUntil: paid?.period_end ?? period.period_end,
    nextCharge: latest.expires_at ?? paid?.period_end ?? period.period_end,
    planCode: (await soldPlan(deps, desk, latest, lang)).code,
    title: plan.title,
    state: latest.state,
    periodNumber: period.number,
    periodStart: period.period_start,
    periodEnd: period.period_end,
    granted: acc?.granted ?? 0,
    used: acc?.used ?? 0,
    held: acc?.reserved ?? 0,
    left: Math.max(0, acc?.available ?? 0),
    renewalCancelled: latest.renewal_cancelled,
    next,
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
      consultationId: sub.consultation_id,
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
