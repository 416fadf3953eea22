import type { SuccessfulPayment } from 'grammy/types'
import { audit } from '../audit/audit'
import { clientZone } from '../clients/clients.service'
import type { DeskRuntime } from '../config/load'
import type { PlanConfig } from '../config/schema'
import { consultationActivatedQueue, jobId, scheduleWindowJobs } from '../consultations/consultations.jobs'
import type { Deps } from '../deps'
import { assignAtActivation } from '../experts/assign'
import type { Outbox } from '../jobs/jobs'
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
import { paymentRow, tellStaff } from '../payments/successful-payment'
import { notify } from '../telegram/notify'
import { formatDate } from '../time/format'
import { graceMs, type PayCtx, type PlanPaymentOutcome, planOf, refreshPlanCard } from './pay-context'
import { parsePlanPayload, SUBSCRIPTION_PERIOD_SECONDS } from './plans'
import { SUBSCRIPTION_KIND, UPGRADE_KIND } from './purchase'
import { subscriptionLapseQueue } from './subscriptions.jobs'
import { latestPeriod, lockSubscriptionByOrder, type Subscription } from './subscriptions.repository'
import { applyUpgrade } from './upgrade'

export type { PlanPaymentOutcome } from './pay-context'

/**
 * successful_payment of a plan's invoice (payload s:<order>) or of an upgrade (u:<order>). One transaction each:
 * the order row is locked first (every delivery of one subscription's charges queues there), the payment row is
 * inserted once per charge id (UNIQUE(bot_id, telegram_payment_charge_id)), then
 * - the first charge creates the subscription, its consultation (one forum topic for every period) and period 1
 *   with its own ledger account (granted = the plan's questions);
 * - a later charge (a renewal: is_recurring, a new charge id) creates the next period, starting at the previous
 *   period's end, with the carry-over of the old period's unused questions in the same transaction; holds of the
 *   old period stay pinned to it (the ledger pins a reservation to the account it was taken from);
 * - an upgrade changes the current period's grant (the plan's upgradeGrant) and the plan at once.
 * A redelivered charge finds its payment row and changes nothing: one period, one grant, one notification.
 */

const DAY = 86_400_000

export async function recordPlanPayment(
  deps: Deps,
  desk: DeskRuntime,
  input: { userId: number; lang: string; payment: SuccessfulPayment },
): Promise<PlanPaymentOutcome> {
  const sp = input.payment
  const pl = parsePlanPayload(sp.invoice_payload)
  return deps.jobs.transaction(deps.db, async (trx, outbox): Promise<PlanPaymentOutcome> => {
    const order = pl ? await lockOrder(trx, pl.orderId) : undefined
    const kind = pl?.kind === 'upgrade' ? UPGRADE_KIND : SUBSCRIPTION_KIND
    const values = paymentRow(desk.botId, input.userId, sp)
    if (
      !order ||
      order.bot_id !== desk.botId ||
      order.user_id !== input.userId ||
      (order.kind as string) !== kind
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
        kind,
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
      paymentId: p.id,
      charge: p.telegram_payment_charge_id,
      now,
      expires,
    }
    if (kind === UPGRADE_KIND) return applyUpgrade(ctx)
    const sub = await lockSubscriptionByOrder(trx, order.id)
    if (sub?.state === 'refunded') {
      // Refunded (its renewal was cancelled with Telegram): a charge arriving anyway grants nothing; an admin
      // refunds it.
      await tellStaff(deps, outbox, desk, p, 'admin-overpayment', {
        order: String(order.id),
        title: order.title,
      })
      await notify(outbox, {
        botId: desk.botId,
        chatId: input.userId,
        lang: order.lang,
        key: 'pay-overpaid',
        params: { title: order.title, amount: p.total_amount, order: String(order.id) },
        dedupeKey: `payment:${p.id}:client`,
        lane: 'payment',
      })
      return { status: 'overpayment' }
    }
    return sub ? renew(ctx, sub) : start(ctx)
  })
}

/** The consultation's access runs to the period's end plus the grace: the lapse instant. */
function accessUntil(desk: DeskRuntime, periodEnd: Date): Date {
  return new Date(periodEnd.getTime() + graceMs(desk))
}

async function start(c: PayCtx): Promise<PlanPaymentOutcome> {
  const { trx, outbox, desk, order, now } = c
  const plan = planOf(desk, order.tariff_code, order)
  const end =
    c.expires && c.expires.getTime() > now.getTime() + DAY
      ? c.expires
      : new Date(now.getTime() + SUBSCRIPTION_PERIOD_SECONDS * 1000)
  if (canTransition(order.state, 'active')) await moveOrder(trx, order, 'active')
  await updateOrder(trx, order.id, { paid_at: now })
  const cons = await insertConsultation(trx, {
    bot_id: desk.botId,
    order_id: order.id,
    user_id: order.user_id,
    state: 'active',
    starts_at: now,
    access_until: accessUntil(desk, end),
  })
  const sub = await trx
    .insertInto('subscription')
    .values({
      bot_id: desk.botId,
      user_id: order.user_id,
      order_id: order.id,
      consultation_id: cons.id,
      plan_code: plan.code,
      terms_version: order.terms_version,
      first_charge_id: c.charge,
      last_charge_id: c.charge,
      expires_at: c.expires,
    })
    .returningAll()
    .executeTakeFirstOrThrow()
  const period = await grantPeriod(c, sub, cons, plan, 1, now, end, false)
  // Its owner and staff group (src/experts), as a one-off consultation gets them at activation.
  await assignAtActivation(trx, outbox, desk, { id: cons.id, tariffCode: plan.code, title: order.title })
  await outbox.send(consultationActivatedQueue, { consultationId: cons.id })
  await scheduleWindowJobs(outbox, desk, cons)
  await scheduleLapse(outbox, sub.id, end, desk)
  const zone = await clientZone(trx, desk, order.user_id)
  await notify(outbox, {
    botId: desk.botId,
    chatId: order.user_id,
    lang: order.lang,
    key: 'sub-started',
    params: {
      title: order.title,
      questions: period.granted,
      start: formatDate(now, zone, order.lang),
      end: formatDate(end, zone, order.lang),
    },
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
  const end =
    c.expires && c.expires.getTime() > startAt.getTime() + DAY
      ? c.expires
      : new Date(startAt.getTime() + SUBSCRIPTION_PERIOD_SECONDS * 1000)
  const plan = planOf(desk, sub.next_plan_code ?? sub.plan_code, order)
  const period = await grantPeriod(c, sub, cons, plan, last.number + 1, startAt, end, true)
  await trx
    .updateTable('subscription')
    .set({
      plan_code: plan.code,
      next_plan_code: null,
      last_charge_id: c.charge,
      expires_at: c.expires,
      state: 'active',
      lapsed_at: null,
      updated_at: now,
    })
    .where('id', '=', sub.id)
    .execute()
  if (plan.code !== order.tariff_code)
    await trx
      .updateTable('orders')
      .set({
        tariff_code: plan.code,
        appeals: plan.questions,
        drafts: plan.drafts,
        sla_minutes: Math.round(plan.slaBusinessHours * 60),
      })
      .where('id', '=', order.id)
      .execute()
  // A renewal after the lapse closed the window: the consultation and its order are open again.
  const reopened = cons.state !== 'active'
  const updated = await trx
    .updateTable('consultation')
    .set({
      state: 'active',
      closed_at: null,
      access_until: accessUntil(desk, end),
      updated_at: now,
    })
    .where('id', '=', cons.id)
    .returningAll()
    .executeTakeFirstOrThrow()
  if (reopened) {
    if (canTransition(order.state, 'active')) await moveOrder(trx, order, 'active')
    await outbox.send(consultationActivatedQueue, { consultationId: cons.id })
  }
  await scheduleWindowJobs(outbox, desk, updated)
  await scheduleLapse(outbox, sub.id, end, desk)
  await refreshPlanCard(trx, outbox, cons.id)
  const zone = await clientZone(trx, desk, order.user_id)
  await notify(outbox, {
    botId: desk.botId,
    chatId: order.user_id,
    lang: order.lang,
    key: 'sub-renewed',
    params: {
      title: order.title,
      number: period.number,
      questions: period.granted,
      carried: period.carried,
      start: formatDate(startAt, zone, order.lang),
      end: formatDate(end, zone, order.lang),
    },
    dedupeKey: `subscription:${sub.id}:period:${period.number}`,
    lane: 'payment',
  })
  return { status: 'renewed', subscriptionId: sub.id, periodNumber: period.number, carried: period.carried }
}

/** The period's row and its ledger accounts (questions with the plan's carry-over; AI drafts without). */
async function grantPeriod(
  c: PayCtx,
  sub: Subscription,
  cons: Consultation,
  plan: PlanConfig,
  number: number,
  startAt: Date,
  end: Date,
  renewal: boolean,
): Promise<{ number: number; granted: number; carried: number }> {
  const l = new LedgerTx(c.trx, 'allow', 0)
  const carryOver =
    renewal && plan.carryOver !== 'none' ? { kind: 'capped' as const, max: plan.carryOver.capped } : undefined
  const g = await l.grant({
    requestId: `subscription:${sub.id}:period:${number}:${APPEALS_UNIT}`,
    scope: CONSULTATION_SCOPE,
    subject: cons.id,
    unit: APPEALS_UNIT,
    periodStart: startAt,
    periodEnd: end,
    amount: plan.questions,
    timeZone: c.desk.schedule.timezone,
    ...(carryOver ? { carryOver } : {}),
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
  return { number, granted: g.amount + g.carried, carried: g.carried }
}

async function scheduleLapse(outbox: Outbox, subscriptionId: number, end: Date, desk: DeskRuntime) {
  const periodEnd = end.toISOString()
  await outbox.send(
    subscriptionLapseQueue,
    { subscriptionId, periodEnd },
    {
      startAfter: new Date(end.getTime() + graceMs(desk)),
      id: jobId(`subscriptions.lapse:${subscriptionId}:${periodEnd}`),
    },
  )
}
