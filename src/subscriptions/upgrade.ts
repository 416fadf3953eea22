import { LedgerTx } from '../ledger/ledger.service'
import { canTransition, lockOrder, moveOrder } from '../orders/order-state'
import { lockConsultation, updateOrder } from '../orders/orders.repository'
import { notify } from '../telegram/notify'
import { type PayCtx, type PlanPaymentOutcome, planOf, refreshPlanCard } from './pay-context'
import { upgradeDelta } from './plans'
import { activeSubscriptionOf, lockSubscriptionByOrder, periodAt } from './subscriptions.repository'

/**
 * A paid upgrade: the client's active subscription moves to the order's plan now, and the current period's grant
 * changes by upgradeDelta in this transaction (an `adjust` of the same account: counters and holds are kept).
 */
export async function applyUpgrade(c: PayCtx): Promise<PlanPaymentOutcome> {
  const { trx, outbox, desk, order, now } = c
  const head = await activeSubscriptionOf(trx, desk.botId, order.user_id)
  // The subscription's order first, then the subscription and its consultation: the renewal's lock order.
  const subOrder = head ? await lockOrder(trx, head.order_id) : undefined
  const sub = head ? await lockSubscriptionByOrder(trx, head.order_id) : undefined
  const cons = sub ? await lockConsultation(trx, sub.consultation_id) : undefined
  const period = sub ? await periodAt(trx, sub.id, now) : undefined
  if (canTransition(order.state, 'active')) await moveOrder(trx, order, 'active')
  await updateOrder(trx, order.id, { paid_at: now })
  if (!sub || !subOrder || !cons || !period) {
    await notify(outbox, {
      botId: desk.botId,
      chatId: order.user_id,
      lang: order.lang,
      key: 'sub-upgrade-orphan',
      params: { amount: order.price_stars },
      dedupeKey: `subscription-upgrade:${c.charge}`,
    })
    return { status: 'unmatched' }
  }
  const from = planOf(desk, sub.plan_code, subOrder)
  const to = planOf(desk, order.tariff_code, order)
  const acc = await trx
    .selectFrom('ledger_account')
    .select(['granted'])
    .where('id', '=', period.account_id)
    .executeTakeFirstOrThrow()
  const delta = upgradeDelta(
    from,
    to,
    acc.granted,
    { start: period.period_start, end: period.period_end },
    now,
  )
  if (delta > 0) {
    const r = await new LedgerTx(trx, 'allow', 0).adjust({
      accountId: period.account_id,
      dGranted: delta,
      note: `upgrade ${from.code} -> ${to.code}`,
      requestId: `subscription-upgrade:${c.charge}`,
    })
    if (!r) throw new Error(`subscription ${sub.id}: upgrade adjust refused`)
  }
  await trx
    .insertInto('subscription_upgrade')
    .values({
      subscription_id: sub.id,
      bot_id: desk.botId,
      period_id: period.id,
      from_plan: from.code,
      to_plan: to.code,
      charge_id: c.charge,
      d_granted: delta,
    })
    .execute()
  await trx
    .updateTable('subscription')
    .set({ plan_code: to.code, next_plan_code: null, updated_at: now })
    .where('id', '=', sub.id)
    .execute()
  await trx
    .updateTable('orders')
    .set({
      tariff_code: to.code,
      title: order.title,
      appeals: to.questions,
      drafts: to.drafts,
      sla_minutes: Math.round(to.slaBusinessHours * 60),
    })
    .where('id', '=', subOrder.id)
    .execute()
  await trx
    .updateTable('subscription_period')
    .set((eb) => ({ granted: eb('granted', '+', delta), plan_code: to.code }))
    .where('id', '=', period.id)
    .execute()
  await refreshPlanCard(trx, outbox, cons.id)
  await notify(outbox, {
    botId: desk.botId,
    chatId: order.user_id,
    lang: order.lang,
    key: 'sub-upgraded',
    params: { title: order.title, added: delta },
    dedupeKey: `subscription-upgrade:${c.charge}`,
  })
  return { status: 'upgraded', subscriptionId: sub.id, dGranted: delta }
}
