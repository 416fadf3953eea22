import type { SuccessfulPayment } from 'grammy/types'
import { audit } from '../audit/audit'
import { clientZone } from '../clients/clients.service'
import type { DeskRuntime } from '../config/load'
import { pick } from '../config/load'
import type { PlanConfig } from '../config/schema'
import { consultationActivatedQueue, jobId, scheduleWindowJobs } from '../consultations/consultations.jobs'
import type { Deps } from '../deps'
import { assignAtActivation } from '../experts/assign'
import { LedgerTx } from '../ledger/ledger.service'
import { APPEALS_UNIT, CONSULTATION_SCOPE, DRAFTS_UNIT } from '../orders/allowances'
import { canTransition, lockOrder, moveOrder } from '../orders/order-state'
import {
  type Consultation,
  dbNow,
  insertConsultation,
  insertPaymentOnce,
  lockConsultation,
  updateOrder,
} from '../orders/orders.repository'
import { XTR } from '../payments/pre-checkout'
import { paymentRow, tellStaff } from '../payments/successful-payment'
import { planInDesk } from '../settings/settings'
import { notify } from '../telegram/notify'
import { formatDate } from '../time/format'
import { refuseCharge } from './charge-refusal'
import { graceMs, linkPlan, type PayCtx, type PlanPaymentOutcome, refreshPlanCard } from './pay-context'
import { changeStartsAt, parsePlanPayload, periodEnd } from './plans'
import { SUBSCRIPTION_KIND } from './purchase'
import { scheduleLapse, scheduleReminder } from './renewal-jobs'
import { editSubscriptionQueue, subscriptionCarryQueue } from './subscriptions.jobs'
import {
  latestPeriod,
  linkOf,
  lockSubscription,
  lockSubscriptionByOrder,
  type Subscription,
} from './subscriptions.repository'

export type { PlanPaymentOutcome } from './pay-context'

/**
 * successful_payment of a plan's link (payload s:<order>). One transaction each: the order row is locked first
 * (every delivery of one subscription's charges queues there), the payment row is inserted once per charge id
 * (UNIQUE(bot_id, telegram_payment_charge_id)), then
 * - the charge is compared with the price fixed in the link (subscription_link, the subscription's price_stars): a
 *   charge of another amount, or one for a subscription refunded or replaced, is kept as an overpayment, reported
 *   to the staff (with Refund), counted, and grants nothing (charge-refusal.ts);
 * - the first charge creates the subscription and period 1 with its own ledger account (granted = the questions
 *   of the plan as sold); a change of plan (a link that replaces a subscription) continues on the old one's
 *   consultation: its period 1 starts when the old paid time ends (plans.ts changeStartsAt), and the old
 *   subscription is marked replaced and cancelled with Telegram (editUserStarSubscription, a job); a first
 *   charge for a plan deleted meanwhile starts nothing and is refunded (checked under the desk row's share lock);
 * - a later charge (a renewal: is_recurring, a new charge id) creates the next period, starting at the previous
 *   period's end, with the carry-over of the old period's unused questions; holds of the old period stay pinned to
 *   it. A period paid ahead of its start gets its carry-over at the start (subscriptions.carry).
 * Every period is exactly 30 days and is bought by exactly one charge of the subscription's price. A redelivered
 * charge finds its payment row and changes nothing.
 */
export async function recordPlanPayment(
  deps: Deps,
  desk: DeskRuntime,
  input: { userId: number; lang: string; payment: SuccessfulPayment },
): Promise<PlanPaymentOutcome> {
  const sp = input.payment
  const pl = parsePlanPayload(sp.invoice_payload)
  return deps.jobs.transaction(deps.db, async (trx, outbox): Promise<PlanPaymentOutcome> => {
    const order = pl ? await lockOrder(trx, pl.orderId) : undefined
    const values = paymentRow(desk.botId, input.userId, sp)
    if (
      !order ||
      order.bot_id !== desk.botId ||
      order.user_id !== input.userId ||
      (order.kind as string) !== SUBSCRIPTION_KIND
    ) {
      const p = await insertPaymentOnce(trx, { ...values, order_id: null, kind: 'unmatched' })
      if (!p) return { status: 'duplicate' }
      await tellStaff(deps, outbox, desk, p, 'admin-pay-unmatched', { order: String(pl?.orderId ?? '—') })
      return { status: 'unmatched' }
    }
    const p = await insertPaymentOnce(trx, { ...values, order_id: order.id, kind: 'payment' })
    if (!p) return { status: 'duplicate' }
    await audit(trx, {
      botId: desk.botId,
      actorId: input.userId,
      action: 'payment.payment',
      subjectType: 'payment',
      subjectId: p.id,
      details: {
        orderId: order.id,
        charge: p.telegram_payment_charge_id,
        amount: p.total_amount,
        kind: SUBSCRIPTION_KIND,
        recurring: sp.is_recurring ?? false,
        firstRecurring: sp.is_first_recurring ?? false,
      },
    })
    const now = await dbNow(trx)
    const expires = sp.subscription_expiration_date ? new Date(sp.subscription_expiration_date * 1000) : null
    const ctx: PayCtx = {
      trx,
      outbox,
      deps,
      desk,
      order,
      link: await linkOf(trx, order.id),
      payment: p,
      paymentId: p.id,
      charge: p.telegram_payment_charge_id,
      now,
      expires,
    }
    const sub = await lockSubscriptionByOrder(trx, order.id)
    if (!sub) {
      // The first charge makes a subscription: the plan must still be in the desk's document, read under the
      // share lock a plan's delete takes for update (src/settings/removals.ts), so the two serialize. A plan deleted
      // a moment before (its link made earlier, its pre-checkout answered from a cache) is not started: the charge
      // is refused, refunded in full at once and its Star subscription cancelled (charge-refusal.ts).
      const code = ctx.link?.plan_code ?? order.tariff_code
      if (!(await planInDesk(trx, desk.botId, code))) return refuseCharge(ctx, 'plan-deleted')
      return start(ctx)
    }
    // Refunded or replaced: its renewal was cancelled with Telegram; a charge arriving anyway grants nothing.
    if (sub.state === 'refunded' || sub.state === 'replaced') return refuseCharge(ctx, 'ended', sub)
    if (p.currency !== XTR || p.total_amount !== sub.price_stars) return refuseCharge(ctx, 'amount', sub)
    return renew(ctx, sub)
  })
}

/** The consultation's access runs to the period's end plus the grace: the lapse instant. */
function accessUntil(desk: DeskRuntime, end: Date): Date {
  return new Date(end.getTime() + graceMs(desk))
}

async function start(c: PayCtx): Promise<PlanPaymentOutcome> {
  const { trx, outbox, desk, order, now } = c
  const price = c.link?.price_stars ?? order.price_stars
  if (c.payment.currency !== XTR || c.payment.total_amount !== price) return refuseCharge(c, 'amount')
  const plan = linkPlan(desk, order, c.link)
  // A change of plan: the subscription it replaces (its order first, then it, then the consultation: the lock
  // order of its renewals).
  let old: Subscription | undefined
  let cons: Consultation | undefined
  let startAt = now
  if (c.link?.replaces_subscription_id) {
    const head = await trx
      .selectFrom('subscription')
      .select(['order_id'])
      .where('id', '=', c.link.replaces_subscription_id)
      .executeTakeFirst()
    if (head) await lockOrder(trx, head.order_id)
    old = await lockSubscription(trx, c.link.replaces_subscription_id)
    if (old?.state !== 'active' || old.replaced_by !== null) return refuseCharge(c, 'change-void')
    cons = await lockConsultation(trx, old.consultation_id)
    const last = await latestPeriod(trx, old.id)
    if (!cons || !last) throw new Error(`subscription ${old.id}: no consultation or period`)
    startAt = changeStartsAt(last.period_end, now)
  }
  const end = periodEnd(startAt)
  if (canTransition(order.state, 'active')) await moveOrder(trx, order, 'active')
  await updateOrder(trx, order.id, { paid_at: now })
  let reopened = false
  if (!cons) {
    cons = await insertConsultation(trx, {
      bot_id: desk.botId,
      order_id: order.id,
      user_id: order.user_id,
      state: 'active',
      starts_at: now,
      access_until: accessUntil(desk, end),
    })
  } else {
    reopened = cons.state !== 'active'
    cons = await trx
      .updateTable('consultation')
      .set({ state: 'active', closed_at: null, access_until: accessUntil(desk, end), updated_at: now })
      .where('id', '=', cons.id)
      .returningAll()
      .executeTakeFirstOrThrow()
  }
  const sub = await trx
    .insertInto('subscription')
    .values({
      bot_id: desk.botId,
      user_id: order.user_id,
      order_id: order.id,
      consultation_id: cons.id,
      plan_code: plan.code,
      price_stars: price,
      replaces: old?.id ?? null,
      terms_version: order.terms_version,
      first_charge_id: c.charge,
      last_charge_id: c.charge,
      expires_at: c.expires,
    })
    .returningAll()
    .executeTakeFirstOrThrow()
  const period = await grantPeriod(c, sub, cons, plan, 1, startAt, end, old !== undefined)
  if (old) {
    await trx
      .updateTable('subscription')
      .set({
        state: 'replaced',
        replaced_by: sub.id,
        replaced_at: now,
        renewal_cancelled: true,
        updated_at: now,
      })
      .where('id', '=', old.id)
      .execute()
    // The old subscription must not renew: Telegram is told once (unless the client had cancelled it already).
    if (!old.renewal_cancelled) await outbox.send(editSubscriptionQueue, { subscriptionId: old.id })
    await audit(trx, {
      botId: desk.botId,
      actorId: order.user_id,
      action: 'subscription.replaced',
      subjectType: 'subscription',
      subjectId: old.id,
      details: { by: sub.id, from: old.plan_code, to: plan.code, startsAt: startAt.toISOString() },
    })
    if (reopened) await outbox.send(consultationActivatedQueue, { consultationId: cons.id })
    await refreshPlanCard(trx, outbox, cons.id)
  } else {
    // Its owner and staff group (src/experts), as a one-off consultation gets them at activation.
    await assignAtActivation(trx, outbox, desk, { id: cons.id, tariffCode: plan.code, title: order.title })
    await outbox.send(consultationActivatedQueue, { consultationId: cons.id })
  }
  await scheduleWindowJobs(outbox, desk, cons)
  await scheduleLapse(outbox, sub.id, end, desk)
  await scheduleReminder(outbox, sub.id, c.charge, c.expires ?? end)
  const zone = await clientZone(trx, desk, order.user_id)
  const dates = { start: formatDate(startAt, zone, order.lang), end: formatDate(end, zone, order.lang) }
  if (old) {
    const from = linkPlan(desk, order, await linkOf(trx, old.order_id))
    await notify(outbox, {
      botId: desk.botId,
      chatId: order.user_id,
      lang: order.lang,
      key: 'sub-changed',
      params: {
        title: order.title,
        from: pick(from.title, order.lang, desk.defaultLanguage),
        questions: period.granted,
        price,
        ...dates,
      },
      consultationId: cons.id,
      dedupeKey: `subscription:${sub.id}:period:1`,
      lane: 'payment',
    })
    return { status: 'changed', subscriptionId: sub.id, replaced: old.id, startsAt: startAt }
  }
  await notify(outbox, {
    botId: desk.botId,
    chatId: order.user_id,
    lang: order.lang,
    key: 'sub-started',
    params: { title: order.title, questions: period.granted, ...dates },
    consultationId: cons.id,
    dedupeKey: `subscription:${sub.id}:period:1`,
    lane: 'payment',
  })
  return { status: 'started', subscriptionId: sub.id, periodNumber: 1 }
}

async function renew(c: PayCtx, sub: Subscription): Promise<PlanPaymentOutcome> {
  const { trx, outbox, desk, order, now } = c
  const cons = await lockConsultation(trx, sub.consultation_id)
  const last = await latestPeriod(trx, sub.id)
  if (!cons || !last) throw new Error(`subscription ${sub.id}: no consultation or period`)
  const startAt = last.period_end
  const end = periodEnd(startAt)
  // What the charge pays for: the plan as sold in this subscription's link (its price was checked above).
  const plan = linkPlan(desk, order, c.link)
  const period = await grantPeriod(c, sub, cons, plan, last.number + 1, startAt, end, true)
  await trx
    .updateTable('subscription')
    .set({
      last_charge_id: c.charge,
      expires_at: c.expires,
      state: 'active',
      lapsed_at: null,
      updated_at: now,
    })
    .where('id', '=', sub.id)
    .execute()
  // A renewal after the lapse closed the window: the consultation and its order are open again.
  const reopened = cons.state !== 'active'
  const updated = await trx
    .updateTable('consultation')
    .set({ state: 'active', closed_at: null, access_until: accessUntil(desk, end), updated_at: now })
    .where('id', '=', cons.id)
    .returningAll()
    .executeTakeFirstOrThrow()
  if (reopened) {
    if (canTransition(order.state, 'active')) await moveOrder(trx, order, 'active')
    await outbox.send(consultationActivatedQueue, { consultationId: cons.id })
  }
  await scheduleWindowJobs(outbox, desk, updated)
  await scheduleLapse(outbox, sub.id, end, desk)
  await scheduleReminder(outbox, sub.id, c.charge, c.expires ?? end)
  await refreshPlanCard(trx, outbox, cons.id)
  const zone = await clientZone(trx, desk, order.user_id)
  await notify(outbox, {
    botId: desk.botId,
    chatId: order.user_id,
    lang: order.lang,
    // Paid ahead (after a change of plan): the carry-over comes at the period's start, not now.
    key: period.carryLater === null ? 'sub-renewed' : 'sub-renewed-ahead',
    params: {
      title: order.title,
      number: period.number,
      questions: period.granted,
      carried: period.carried,
      max: period.carryLater ?? 0,
      start: formatDate(startAt, zone, order.lang),
      end: formatDate(end, zone, order.lang),
    },
    consultationId: cons.id,
    dedupeKey: `subscription:${sub.id}:period:${period.number}`,
    lane: 'payment',
  })
  return { status: 'renewed', subscriptionId: sub.id, periodNumber: period.number, carried: period.carried }
}

/**
 * The period's row and its ledger accounts (questions with the plan's carry-over; AI drafts without). The
 * carry-over moves at the charge when the period starts by then; a period paid ahead (a change of plan and its
 * renewals, whose charges come before the periods they buy) gets it at its start, so the running period keeps its
 * questions to its end.
 */
async function grantPeriod(
  c: PayCtx,
  sub: Subscription,
  cons: Consultation,
  plan: PlanConfig,
  number: number,
  startAt: Date,
  end: Date,
  carry: boolean,
): Promise<{ number: number; granted: number; carried: number; carryLater: number | null }> {
  const l = new LedgerTx(c.trx, 'allow', 0)
  const carryOver =
    carry && plan.carryOver !== 'none' ? { kind: 'capped' as const, max: plan.carryOver.capped } : undefined
  const ahead = sub.replaces !== null && startAt.getTime() > c.now.getTime()
  const g = await l.grant({
    requestId: `subscription:${sub.id}:period:${number}:${APPEALS_UNIT}`,
    scope: CONSULTATION_SCOPE,
    subject: cons.id,
    unit: APPEALS_UNIT,
    periodStart: startAt,
    periodEnd: end,
    amount: plan.questions,
    timeZone: c.desk.schedule.timezone,
    ...(carryOver && !ahead ? { carryOver } : {}),
  })
  if (!g.ok) throw new Error(`subscription ${sub.id}: period ${number} grant refused (${g.reason})`)
  const d = await l.grant({
    requestId: `subscription:${sub.id}:period:${number}:${DRAFTS_UNIT}`,
    scope: CONSULTATION_SCOPE,
    subject: cons.id,
    unit: DRAFTS_UNIT,
    periodStart: startAt,
    periodEnd: end,
    amount: plan.drafts,
    timeZone: c.desk.schedule.timezone,
  })
  if (!d.ok) throw new Error(`subscription ${sub.id}: period ${number} drafts grant refused (${d.reason})`)
  await c.trx
    .insertInto('subscription_period')
    .values({
      subscription_id: sub.id,
      bot_id: c.desk.botId,
      number,
      charge_id: c.charge,
      payment_id: c.paymentId,
      plan_code: plan.code,
      period_start: startAt,
      period_end: end,
      account_id: g.accountId,
      granted: g.amount + g.carried,
      carried: g.carried,
    })
    .execute()
  if (carryOver && ahead)
    await c.outbox.send(
      subscriptionCarryQueue,
      { subscriptionId: sub.id, number },
      { startAfter: startAt, id: jobId(`subscriptions.carry:${sub.id}:${number}`) },
    )
  return {
    number,
    granted: g.amount + g.carried,
    carried: g.carried,
    carryLater: carryOver && ahead ? carryOver.max : null,
  }
}
