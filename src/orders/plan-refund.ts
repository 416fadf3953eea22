import { sql } from 'kysely'
import type { DeskRuntime } from '../config/load'
import type { Trx } from '../db/database'
import type { Outbox } from '../jobs/jobs'
import { LedgerTx } from '../ledger/ledger.service'
import { revokeConsultationAllowances } from './allowances'
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
 * Either way the renewal is cancelled with Telegram (a job). An upgrade's refund voids what the upgrade added, as
 * far as it is unused, and the plan goes back. Returns the policy applied (null when the payment is not a plan's).
 */
export type PlanRefundPolicy = 'revoke_now' | 'keep_used'

export interface PlanRefund {
  policy: PlanRefundPolicy | 'upgrade'
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
  const kind = order.kind as string
  if (kind === 'subscription_upgrade') return refundUpgrade(trx, desk, p)
  if (kind !== 'subscription') return null
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
  const policy: PlanRefundPolicy =
    desk.plans.find((x) => x.code === (period?.plan_code ?? sub.plan_code))?.refundPolicy ?? 'keep_used'
  await trx
    .selectFrom('consultation')
    .select('id')
    .where('id', '=', sub.consultation_id)
    .forUpdate()
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

async function refundUpgrade(trx: Trx, desk: DeskRuntime, p: Payment): Promise<PlanRefund | null> {
  const up = await trx
    .selectFrom('subscription_upgrade')
    .selectAll()
    .where('bot_id', '=', desk.botId)
    .where('charge_id', '=', p.telegram_payment_charge_id)
    .executeTakeFirst()
  if (!up) return null
  const sub = await trx
    .selectFrom('subscription')
    .selectAll()
    .where('id', '=', up.subscription_id)
    .forUpdate()
    .executeTakeFirstOrThrow()
  const period = await trx
    .selectFrom('subscription_period')
    .selectAll()
    .where('id', '=', up.period_id)
    .executeTakeFirstOrThrow()
  const a = await trx
    .selectFrom('ledger_account')
    .select(['id', 'granted', 'reserved', 'used'])
    .where('id', '=', period.account_id)
    .forUpdate()
    .executeTakeFirstOrThrow()
  const voided = Math.max(0, Math.min(up.d_granted, a.granted - a.reserved - a.used))
  if (voided > 0)
    await new LedgerTx(trx, 'allow', 0).adjust({
      accountId: a.id,
      dGranted: -voided,
      note: `upgrade refunded: payment ${p.id}`,
      requestId: `plan-refund:${p.id}:${a.id}`,
    })
  if (sub.plan_code === up.to_plan)
    await trx
      .updateTable('subscription')
      .set({ plan_code: up.from_plan, updated_at: sql`now()` })
      .where('id', '=', sub.id)
      .execute()
  return { policy: 'upgrade', released: 0, voided }
}
