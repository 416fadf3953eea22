import { sql } from 'kysely'
import type { DeskRuntime } from '../config/load'
import type { Trx } from '../db/database'
import type { Outbox } from '../jobs/jobs'
import { LedgerTx } from '../ledger/ledger.service'
import { CONSULTATION_SCOPE, revokeConsultationAllowances, stopAccounts } from './allowances'
import { canTransition, moveOrder } from './order-state'
import type { Order, Payment } from './orders.repository'
import { editSubscriptionQueue } from './plan.jobs'

/**
 * A refunded payment of a support plan (an order of kind subscription or subscription_upgrade, src/subscriptions),
 * inside the refund's transaction (src/payments/refunds.ts applyRefund, which holds the order's lock). One written
 * policy per plan (config `plans[].refundPolicy`, stated in the plan's terms):
 *
 * - revoke_now: the subscription ends now; the consultation is revoked, every account of it deactivated and its
 *   open holds released (questions not answered yet are dropped; a draft already running finishes but its charge is
 *   refused and starts nothing new).
 * - keep_used: what was used stays used; the unused rest of the refunded period and of any later one is voided (an
 *   `adjust` of granted, journaled); holds stay, so accepted questions are still answered; nothing new is admitted.
 *
 * Either way the renewal is cancelled with Telegram (a job). A change of plan is a new subscription on the same
 * consultation (src/subscriptions/payment.ts): while the other one still has time (the old plan's period running,
 * or the new plan paid ahead), a refund acts on this subscription's own accounts only and leaves the consultation
 * and the other subscription as they are. Returns the policy applied (null when the payment is not a plan's).
 */
export type PlanRefundPolicy = 'revoke_now' | 'keep_used'

export interface PlanRefund {
  policy: PlanRefundPolicy
  released: number
  voided: number
}

export async function applyPlanRefund(
  trx: Trx,
  outbox: Pick<Outbox, 'send'>,
  desk: DeskRuntime,
  order: Order,
  p: Payment,
): Promise<PlanRefund | null> {
  if ((order.kind as string) !== 'subscription') return null
  const sub = await trx
    .selectFrom('subscription')
    .selectAll()
    .where('order_id', '=', order.id)
    .forUpdate()
    .executeTakeFirst()
  if (!sub) return null
  const period = await trx
    .selectFrom('subscription_period')
    .selectAll()
    .where('subscription_id', '=', sub.id)
    .where('charge_id', '=', p.telegram_payment_charge_id)
    .executeTakeFirst()
  const link = await trx
    .selectFrom('subscription_link')
    .select('plan')
    .where('order_id', '=', order.id)
    .executeTakeFirst()
  const policy: PlanRefundPolicy =
    link?.plan.refundPolicy ??
    desk.plans.find((x) => x.code === (period?.plan_code ?? sub.plan_code))?.refundPolicy ??
    'keep_used'
  await trx
    .selectFrom('consultation')
    .select('id')
    .where('id', '=', sub.consultation_id)
    .forUpdate()
    .executeTakeFirst()
  // Another subscription on this consultation that still has time (a change of plan): only this one's accounts.
  const other = await trx
    .selectFrom('subscription as s')
    .innerJoin('subscription_period as sp', 'sp.subscription_id', 's.id')
    .select('s.id')
    .where('s.consultation_id', '=', sub.consultation_id)
    .where('s.id', '<>', sub.id)
    .where('s.state', 'in', ['active', 'replaced'])
    .where('sp.period_end', '>', sql<Date>`now()`)
    .executeTakeFirst()

  let voided = 0
  if (policy === 'keep_used') {
    // The refunded period and any later one: granted down to what is used or held.
    const accounts = await trx
      .selectFrom('subscription_period as sp')
      .innerJoin('ledger_account as a', 'a.id', 'sp.account_id')
      .select(['a.id', 'a.granted', 'a.reserved', 'a.used'])
      .where('sp.subscription_id', '=', sub.id)
      .where('sp.number', '>=', period?.number ?? 1)
      .orderBy('a.id')
      .execute()
    const l = new LedgerTx(trx, 'allow', 0)
    for (const a of accounts) {
      const unused = a.granted - a.reserved - a.used
      if (unused <= 0) continue
      await l.adjust({
        accountId: a.id,
        dGranted: -unused,
        note: `plan refunded (keep_used): payment ${p.id}`,
        requestId: `plan-refund:${p.id}:${a.id}`,
      })
      voided += unused
    }
  }
  if (other) {
    const released = policy === 'revoke_now' ? await revokeOwnAccounts(trx, sub.id, sub.consultation_id) : 0
    await trx
      .updateTable('subscription')
      .set({ state: 'refunded', refunded_at: sql`now()`, renewal_cancelled: true, updated_at: sql`now()` })
      .where('id', '=', sub.id)
      .execute()
    if (canTransition(order.state, 'refunded')) await moveOrder(trx, order, 'refunded')
    await outbox.send(editSubscriptionQueue, { subscriptionId: sub.id })
    return { policy, released, voided }
  }
  const released = await revokeConsultationAllowances(
    trx,
    sub.consultation_id,
    policy === 'revoke_now' ? 'stop' : 'deliver',
  )
  await trx
    .updateTable('consultation')
    .set({
      state: 'revoked',
      revoked_at: sql`now()`,
      refund_policy: policy === 'revoke_now' ? 'stop' : 'deliver',
      updated_at: sql`now()`,
    })
    .where('id', '=', sub.consultation_id)
    .where('state', '<>', 'revoked')
    .execute()
  if (canTransition(order.state, 'refunded')) await moveOrder(trx, order, 'refunded')
  await trx
    .updateTable('subscription')
    .set({ state: 'refunded', refunded_at: sql`now()`, renewal_cancelled: true, updated_at: sql`now()` })
    .where('id', '=', sub.id)
    .execute()
  await outbox.send(editSubscriptionQueue, { subscriptionId: sub.id })
  return { policy, released, voided }
}

/** revoke_now on one subscription of a shared consultation: its accounts (questions and drafts) stop, open holds on them are released. */
async function revokeOwnAccounts(trx: Trx, subscriptionId: number, consultationId: number): Promise<number> {
  const accounts = await trx
    .selectFrom('ledger_account as a')
    .innerJoin('subscription_period as sp', 'sp.period_start', 'a.period_start')
    .select('a.id')
    .where('sp.subscription_id', '=', subscriptionId)
    .where('a.scope', '=', CONSULTATION_SCOPE)
    .where('a.subject', '=', String(consultationId))
    .orderBy('a.id')
    .execute()
  return stopAccounts(
    trx,
    accounts.map((a) => a.id),
    true,
    'plan refunded',
  )
}
