import { audit } from '../audit/audit'
import type { Deps } from '../deps'
import { metrics } from '../metrics'
import { refundPayment } from '../payments/refunds'
import { tellStaff } from '../payments/successful-payment'
import { notify } from '../telegram/notify'
import type { ChargeRefusal, PayCtx, PlanPaymentOutcome } from './pay-context'
import { cancelChargeQueue, editSubscriptionQueue, refundChargeQueue } from './subscriptions.jobs'
import type { Subscription } from './subscriptions.repository'

/**
 * A plan's charge that grants nothing (issue 22: a renewal grants exactly what its charge pays for): its amount is
 * not the price fixed in the subscription's link, or the subscription was refunded or replaced by a change of plan,
 * or the change it pays for is void. In the payment's transaction: the payment row is kept as an overpayment (so a
 * refund of it touches no plan), the audit log and the metric desk_plan_charges_refused_total{reason} record it, the
 * staff group is told with a Refund button, the client is told that an admin will refund it. A first charge that
 * is refused is cancelled with Telegram so it does not renew; a renewal of a subscription that should not renew
 * any more asks Telegram again for its (cancelled) wish.
 *
 * A first charge for a plan deleted a moment before (its link and pre-checkout came earlier): the client paid for
 * something the desk no longer sells, and expects the money back, not a plan nobody can edit or see in /settings
 * that renews every month. It is refunded in full at once by a job (refundChargeQueue), without an admin; the client
 * is told so, the staff are told it is being refunded.
 */
export async function refuseCharge(
  c: PayCtx,
  reason: ChargeRefusal,
  sub?: Subscription,
): Promise<PlanPaymentOutcome> {
  const { trx, outbox, desk, order, payment: p } = c
  await trx.updateTable('payment').set({ kind: 'overpayment' }).where('id', '=', p.id).execute()
  const price = sub?.price_stars ?? c.link?.price_stars ?? order.price_stars
  await audit(trx, {
    botId: desk.botId,
    actorId: null,
    action: 'subscription.charge_refused',
    subjectType: 'payment',
    subjectId: p.id,
    details: {
      reason,
      orderId: order.id,
      subscriptionId: sub?.id ?? null,
      charge: p.telegram_payment_charge_id,
      amount: p.total_amount,
      currency: p.currency,
      price,
    },
  })
  metrics.planChargesRefused.inc({ reason })
  await tellStaff(c.deps, outbox, desk, p, `admin-plan-charge-refused-${reason}`, {
    order: String(order.id),
    title: order.title,
    price,
    state: sub?.state ?? '—',
  })
  await notify(outbox, {
    botId: desk.botId,
    chatId: order.user_id,
    lang: order.lang,
    key: reason === 'plan-deleted' ? 'sub-charge-refused-plan-deleted' : 'sub-charge-refused',
    params: { title: order.title, amount: p.total_amount },
    ...(sub ? { consultationId: sub.consultation_id } : {}),
    dedupeKey: `payment:${p.id}:client`,
    lane: 'payment',
  })
  if (reason === 'plan-deleted') await outbox.send(refundChargeQueue, { botId: desk.botId, paymentId: p.id })
  if (!sub)
    await outbox.send(cancelChargeQueue, { botId: desk.botId, userId: order.user_id, charge: c.charge })
  else if (sub.renewal_cancelled) await outbox.send(editSubscriptionQueue, { subscriptionId: sub.id })
  return { status: 'refused', reason }
}

/** The refund of a charge refused because its plan was deleted: done, or thrown to be tried again. */
export async function runRefundCharge(deps: Deps, job: { botId: number; paymentId: number }): Promise<void> {
  const r = await refundPayment(
    deps,
    deps.desk(job.botId),
    { paymentId: job.paymentId },
    { id: null, source: 'desk' },
  )
  if (r.status === 'failed') throw new Error(`refund of payment ${job.paymentId} failed: ${r.description}`)
  if (r.status === 'in-progress')
    throw new Error(`refund of payment ${job.paymentId} is in progress elsewhere`)
}
