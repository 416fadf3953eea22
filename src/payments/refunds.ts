import { GrammyError, HttpError } from 'grammy'
import { sql } from 'kysely'
import { audit } from '../audit/audit'
import type { DeskRuntime } from '../config/load'
import { settleHeldAfterEnd } from '../consultations/several'
import type { Trx } from '../db/database'
import type { Deps } from '../deps'
import { disputeCloseTopicQueue } from '../disputes/disputes.jobs'
import { type Dispute, findDispute } from '../disputes/disputes.service'
import type { Outbox } from '../jobs/jobs'
import { metrics } from '../metrics'
import { revokeConsultationAllowances } from '../orders/allowances'
import { releaseHold, returnPlace } from '../orders/capacity'
import { canTransition, lockOrder, moveOrder } from '../orders/order-state'
import {
  claimRefund,
  failRefund,
  findPayment,
  findPaymentByCharge,
  lockConsultation,
  lockPayment,
  markRefunded,
  type Payment,
  REFUND_CLAIM_STALE_SECONDS,
  refundQueue,
} from '../orders/orders.repository'
import { accountForOrder } from '../orders/orders.service'
import type { RefundPolicy, RefundSource } from '../orders/orders.tables'
import { applyPlanRefund } from '../orders/plan-refund'
import { placeFreed } from '../orders/waitlist'
import { notify } from '../telegram/notify'
import { applyTopUpRefund } from './topup-refund'

/**
 * Refunds. Telegram refunds a Stars payment in full with refundStarPayment; deleting a row refunds nothing. Two
 * tiers, like a payment module should: a short transaction claims the payment (so a second press does not call
 * Telegram a second time), the Telegram call runs outside any transaction, and a second short transaction applies
 * the refund. `applyRefund` is also the path for a refunded_payment message (a refund made elsewhere) and is
 * idempotent: a payment already refunded changes nothing and sends nothing.
 *
 * The written refund policy for questions already in work: the tariff's `refundPolicy`, kept on the order; REFUND_POLICY
 * is the default. 'deliver' (the default, and what the card says): a refund revokes the consultation (no new questions are accepted) but answers to questions
 * accepted before the refund are still delivered. It is stored on the consultation so the desk applies it.
 */
export const REFUND_POLICY: RefundPolicy = 'deliver'

/** A claim older than this is a crashed attempt (src/orders/orders.repository.ts, where the start job reads it too). */
export { REFUND_CLAIM_STALE_SECONDS }

export type RefundOutcome =
  | { status: 'refunded'; payment: Payment; alreadyAtTelegram: boolean }
  | { status: 'already-refunded'; payment: Payment }
  | { status: 'in-progress'; payment: Payment }
  | { status: 'unknown-payment' }
  | { status: 'failed'; payment: Payment; description: string }

export type RefundTarget = { paymentId: number } | { chargeId: string }

/**
 * An admin's refund (a button with confirmation, a command, or the dispute desk's Refund). The caller checks that
 * the actor is an admin; this function checks everything about the payment.
 */
export async function refundPayment(
  deps: Deps,
  desk: DeskRuntime,
  target: RefundTarget,
  actor: {
    /** null: the desk itself (an automatic refund, source 'desk'). */
    id: number | null
    source: Extract<RefundSource, 'admin' | 'dispute' | 'client' | 'desk'>
    disputeId?: number
  },
): Promise<RefundOutcome> {
  const found =
    'paymentId' in target
      ? await findPayment(deps.db, target.paymentId)
      : await findPaymentByCharge(deps.db, desk.botId, target.chargeId)
  if (!found || found.bot_id !== desk.botId) return { status: 'unknown-payment' }

  const claimed = await claimRefund(deps.db, found.id, REFUND_CLAIM_STALE_SECONDS)
  if (!claimed) {
    const now = (await findPayment(deps.db, found.id))!
    return now.refunded_at
      ? { status: 'already-refunded', payment: now }
      : { status: 'in-progress', payment: now }
  }
  return refundClaimed(deps, desk, claimed, actor)
}

/**
 * The rest of a refund once its payment is claimed (claimRefund committed): refundStarPayment outside any
 * transaction, then applyRefund in one. For a caller that claims under its own lock and checks (a client's cancel
 * before the start, src/payments/change-start.ts).
 */
export async function refundClaimed(
  deps: Deps,
  desk: DeskRuntime,
  p: Payment,
  actor: {
    /** null: the desk itself (an automatic refund, source 'desk'). */
    id: number | null
    source: Extract<RefundSource, 'admin' | 'dispute' | 'client' | 'desk'>
    disputeId?: number
  },
): Promise<RefundOutcome> {
  let alreadyAtTelegram = false
  try {
    await deps.api(desk.botId).refundStarPayment(p.user_id, p.telegram_payment_charge_id)
  } catch (err) {
    if (err instanceof GrammyError && /CHARGE_ALREADY_REFUNDED/.test(err.description)) {
      alreadyAtTelegram = true
    } else {
      const description =
        err instanceof GrammyError
          ? err.description
          : err instanceof HttpError
            ? `network error, the refund may or may not have happened; try again (${err.message})`
            : (err as Error).message
      await failRefund(deps.db, p.id, description)
      deps.log.warn(
        { payment_id: p.id, charge_id: p.telegram_payment_charge_id, description },
        'refundStarPayment failed',
      )
      return { status: 'failed', payment: p, description }
    }
  }

  const applied = await deps.jobs.transaction(deps.db, (trx, outbox) =>
    applyRefund(trx, outbox, desk, {
      paymentId: p.id,
      actorId: actor.id,
      source: actor.source,
      ...(actor.disputeId ? { disputeId: actor.disputeId } : {}),
    }),
  )
  if (applied.status === 'already-refunded') return applied
  if (applied.status === 'unknown-payment') return applied
  return { status: 'refunded', payment: applied.payment, alreadyAtTelegram }
}

export type ApplyRefundResult =
  | { status: 'applied'; payment: Payment }
  | { status: 'already-refunded'; payment: Payment }
  | { status: 'unknown-payment' }

/**
 * Applies a refund that Telegram made, in the caller's transaction: marks the payment refunded, and for an order's
 * payment moves the order to refunded, revokes the consultation under REFUND_POLICY, releases the order's and the
 * consultation's open ledger holds, closes an open dispute on it, tells the client and the staff. Locks the order
 * before the payment (the successful_payment order), so the two never deadlock.
 */
export async function applyRefund(
  trx: Trx,
  outbox: Outbox,
  desk: DeskRuntime,
  input: { paymentId: number; actorId: number | null; source: RefundSource; disputeId?: number },
): Promise<ApplyRefundResult> {
  const head = await findPayment(trx, input.paymentId)
  if (!head || head.bot_id !== desk.botId) return { status: 'unknown-payment' }
  const order = head.order_id ? await lockOrder(trx, head.order_id) : undefined
  const p = (await lockPayment(trx, input.paymentId))!
  if (p.refunded_at) return { status: 'already-refunded', payment: p }

  await markRefunded(trx, p.id, input.actorId, input.source)
  // The policy the client bought under (the order's snapshot of its tariff); REFUND_POLICY for older rows.
  const policy: RefundPolicy = order?.refund_policy ?? REFUND_POLICY
  let consultationId: number | undefined
  let released = 0
  // A scheduled start refunded before it began gives its place back to the slot (issue 14: cancel before start); an
  // immediate start deferred to the desk's opening gives back its place of that day.
  if (
    order &&
    p.kind === 'payment' &&
    order.state === 'paid_waiting' &&
    order.start_mode !== 'on_request' &&
    order.slot_start &&
    !order.needs_start_date &&
    order.capacity_key
  ) {
    const account = accountForOrder(desk, order, order.slot_start)
    if (account?.key === order.capacity_key) {
      await returnPlace(trx, desk.botId, account, `refund-free:${order.id}`)
      await placeFreed(trx, outbox, desk, account.key)
    }
  }
  // A top-up's payment (src/payments/topup-refund.ts): what it added, as far as unused, is taken back.
  const topUp =
    order && p.kind === 'payment' && order.kind === 'topup'
      ? await applyTopUpRefund(trx, outbox, desk, order, p)
      : null
  // A support plan's payment (src/orders/plan-refund.ts): the plan's own refund policy.
  const plan =
    order && !topUp && p.kind === 'payment' ? await applyPlanRefund(trx, outbox, desk, order, p) : null
  if (plan) released += plan.released
  else if (order && !topUp && p.kind === 'payment' && canTransition(order.state, 'refunded')) {
    await moveOrder(trx, order, 'refunded')
    const c = await trx
      .selectFrom('consultation')
      .select('id')
      .where('order_id', '=', order.id)
      .executeTakeFirst()
    if (c) {
      const locked = (await lockConsultation(trx, c.id))!
      consultationId = locked.id
      if (locked.state !== 'revoked')
        await trx
          .updateTable('consultation')
          .set({
            state: 'revoked',
            revoked_at: sql`now()`,
            refund_policy: policy,
            updated_at: sql`now()`,
          })
          .where('id', '=', locked.id)
          .execute()
      released += await revokeConsultationAllowances(trx, locked.id, policy)
    }
  }
  // A capacity hold still open on the order goes back to the pool (a committed one stays: that start happened or
  // its day is past; releasing a settled hold changes nothing).
  if (order?.hold_request_id) await releaseHold(trx, order.hold_request_id, 'order refunded')

  const disputes = await trx
    .updateTable('dispute')
    .set({
      state: 'refunded',
      resolved_by: input.actorId,
      resolved_at: sql`now()`,
      resolution: 'refunded',
      updated_at: sql`now()`,
    })
    .where('payment_id', '=', p.id)
    .where('state', '=', 'open')
    .returning(['id', 'thread_id'])
    .execute()
  for (const d of disputes) if (d.thread_id) await outbox.send(disputeCloseTopicQueue, { disputeId: d.id })

  await audit(trx, {
    botId: desk.botId,
    actorId: input.actorId,
    action: 'payment.refunded',
    subjectType: 'payment',
    subjectId: p.id,
    details: {
      source: input.source,
      charge: p.telegram_payment_charge_id,
      amount: p.total_amount,
      kind: p.kind,
      orderId: p.order_id,
      consultationId: consultationId ?? topUp?.consultationId ?? null,
      policy: plan ? plan.policy : consultationId ? policy : null,
      voided: plan?.voided ?? topUp?.voided ?? 0,
      ...(topUp
        ? {
            topUp: {
              consultationId: topUp.consultationId,
              kind: topUp.kind,
              bought: topUp.bought,
              minutesTaken: topUp.minutesTaken,
              accessUntil: topUp.accessUntil?.toISOString() ?? null,
            },
          }
        : {}),
      releasedHolds: released,
      disputes: disputes.map((d) => d.id),
    },
  })
  const lang = order?.lang ?? desk.defaultLanguage
  await notify(outbox, {
    botId: desk.botId,
    chatId: p.user_id,
    lang,
    key: topUp
      ? topUp.notice.key
      : plan
        ? `refund-done-plan-${plan.policy}`
        : consultationId
          ? `refund-done-consultation-${policy}`
          : 'refund-done',
    params: topUp ? topUp.notice.params : { amount: p.total_amount, title: order?.title ?? '—' },
    ...(consultationId || topUp ? { consultationId: consultationId ?? topUp!.consultationId } : {}),
    dedupeKey: `payment:${p.id}:refunded`,
  })
  // A refund can end a consultation (revoked, or its window cut by a top-up's refund): messages held for a choice
  // between it and others go to the one left, if one is (src/consultations/choice.ts).
  await settleHeldAfterEnd(outbox, { botId: desk.botId, userId: p.user_id }, `refund:${p.id}`)
  // A refund made elsewhere is news to the staff; an admin's own refund is answered to that admin where they
  // pressed (the staff group shares 20 messages a minute, better kept for what someone must act on).
  if (input.source === 'telegram')
    await notify(outbox, {
      botId: desk.botId,
      chatId: desk.staffChatId,
      lang: desk.defaultLanguage,
      key: 'admin-refunded',
      params: {
        payment: String(p.id),
        charge: p.telegram_payment_charge_id,
        amount: p.total_amount,
        user: String(p.user_id),
        by: String(input.actorId ?? 'Telegram'),
        source: input.source,
      },
      dedupeKey: `payment:${p.id}:refunded:staff`,
    })
  // Counted when applied in the caller's transaction (a rollback after this point is rare and retried).
  metrics.refunds.inc({ source: input.source })
  if (p.currency === 'XTR') metrics.refundStars.inc({ source: input.source }, p.total_amount)
  return { status: 'applied', payment: { ...p, refunded_at: new Date() } }
}

/** A refunded_payment message: the refund happened elsewhere; same path, idempotent. */
export async function recordExternalRefund(
  deps: Deps,
  desk: DeskRuntime,
  input: { userId: number; chargeId: string; amount: number },
): Promise<ApplyRefundResult> {
  const p = await findPaymentByCharge(deps.db, desk.botId, input.chargeId)
  if (!p) {
    await deps.jobs.transaction(deps.db, async (trx, outbox) => {
      await audit(trx, {
        botId: desk.botId,
        actorId: null,
        action: 'payment.refund_unknown_charge',
        subjectType: 'charge',
        subjectId: input.chargeId,
        details: { user: input.userId, amount: input.amount },
      })
      await notify(outbox, {
        botId: desk.botId,
        chatId: desk.staffChatId,
        lang: desk.defaultLanguage,
        key: 'admin-refund-unknown-charge',
        params: { charge: input.chargeId, user: String(input.userId), amount: input.amount },
        dedupeKey: `charge:${desk.botId}:${input.chargeId}:refund-unknown`,
      })
    })
    return { status: 'unknown-payment' }
  }
  return deps.jobs.transaction(deps.db, (trx, outbox) =>
    applyRefund(trx, outbox, desk, { paymentId: p.id, actorId: null, source: 'telegram' }),
  )
}

export type DisputeRefundResult =
  | RefundOutcome
  | { status: 'no-payment' }
  | { status: 'unknown' }
  | { status: 'not-open'; dispute: Dispute }

/** Refund from the dispute topic: the linked payment is refunded; applyRefund closes the ticket as refunded. */
export async function refundDispute(
  deps: Deps,
  desk: DeskRuntime,
  input: { disputeId: number; adminId: number },
): Promise<DisputeRefundResult> {
  const d = await findDispute(deps.db, input.disputeId)
  if (!d || d.bot_id !== desk.botId) return { status: 'unknown' }
  if (!d.payment_id) return { status: 'no-payment' }
  if (d.state !== 'open' && d.state !== 'refunded') return { status: 'not-open', dispute: d }
  const r = await refundPayment(
    deps,
    desk,
    { paymentId: d.payment_id },
    { id: input.adminId, source: 'dispute', disputeId: d.id },
  )
  if (r.status === 'refunded' || r.status === 'already-refunded') {
    // The payment may have been refunded before (another button, elsewhere): the ticket closes as refunded too.
    await deps.db
      .updateTable('dispute')
      .set({
        state: 'refunded',
        resolution: 'refunded',
        resolved_by: input.adminId,
        resolved_at: sql`now()`,
        updated_at: sql`now()`,
      })
      .where('id', '=', d.id)
      .where('state', '=', 'open')
      .execute()
  }
  return r
}

/** A payment of this desk by its id or its charge id (an admin's /refund and its confirmation), or undefined. */
export async function findDeskPayment(
  deps: Deps,
  desk: DeskRuntime,
  target: RefundTarget,
): Promise<Payment | undefined> {
  const p =
    'paymentId' in target
      ? await findPayment(deps.db, target.paymentId)
      : await findPaymentByCharge(deps.db, desk.botId, target.chargeId)
  return p && p.bot_id === desk.botId ? p : undefined
}

/** What waits for an admin (/refunds): overpayments and unmatched payments not refunded, paid orders without a start. */
export function refundsWaiting(deps: Deps, desk: DeskRuntime) {
  return refundQueue(deps.db, desk.botId)
}
