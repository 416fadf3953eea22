import { clientZone } from '../clients/clients.service'
import type { DeskRuntime } from '../config/load'
import { pick } from '../config/load'
import { jobId } from '../consultations/consultations.jobs'
import type { Deps } from '../deps'
import type { Outbox } from '../jobs/jobs'
import { LedgerTx } from '../ledger/ledger.service'
import { APPEALS_UNIT, CONSULTATION_SCOPE } from '../orders/allowances'
import { dbNow } from '../orders/orders.repository'
import { notify } from '../telegram/notify'
import { formatDate } from '../time/format'
import { graceMs, linkPlan } from './pay-context'
import { reminderAt } from './plans'
import { subscriptionLapseQueue, subscriptionReminderQueue } from './subscriptions.jobs'
import { latestPeriod, linkOf, lockSubscription } from './subscriptions.repository'

/**
 * The jobs a plan's charge schedules in its transaction: the lapse at the period's end plus the grace, the renewal
 * reminder a day before Telegram charges again, the carry-over of a period paid ahead of its start; and the
 * cancellation of a refused first charge's Star subscription. Each is keyed (a pg-boss job id from its subject) and
 * checks the rows under their lock when it runs, so a redelivery or a late run changes nothing.
 */

export async function scheduleLapse(outbox: Outbox, subscriptionId: number, end: Date, desk: DeskRuntime) {
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

/** nextCharge: when Telegram charges next (the payment's subscription_expiration_date), else the period's end. */
export async function scheduleReminder(
  outbox: Outbox,
  subscriptionId: number,
  charge: string,
  nextCharge: Date,
) {
  await outbox.send(
    subscriptionReminderQueue,
    { subscriptionId, charge },
    { startAfter: reminderAt(nextCharge), id: jobId(`subscriptions.remind:${subscriptionId}:${charge}`) },
  )
}

export type ReminderResult = 'sent' | 'skipped'

/**
 * The renewal reminder: only while the subscription is active, its renewal not cancelled, not replaced, and the
 * charge that scheduled it is still its last one (a later charge schedules its own reminder). It says when Telegram
 * charges and how much (the subscription's own price), with Cancel renewal (the /plan button, sub:cancel).
 */
export async function runRenewalReminder(
  deps: Deps,
  job: { subscriptionId: number; charge: string },
): Promise<ReminderResult> {
  return deps.jobs.transaction(deps.db, async (trx, outbox): Promise<ReminderResult> => {
    const sub = await lockSubscription(trx, job.subscriptionId)
    if (sub?.state !== 'active' || sub.renewal_cancelled || sub.replaced_by !== null) return 'skipped'
    if (sub.last_charge_id !== job.charge) return 'skipped'
    const desk = deps.desk(sub.bot_id)
    const last = await latestPeriod(trx, sub.id)
    if (!last) return 'skipped'
    const next = sub.expires_at ?? last.period_end
    const now = await dbNow(trx)
    if (next.getTime() <= now.getTime()) return 'skipped'
    const order = await trx
      .selectFrom('orders')
      .selectAll()
      .where('id', '=', sub.order_id)
      .executeTakeFirstOrThrow()
    const plan = linkPlan(desk, order, await linkOf(trx, order.id))
    const zone = await clientZone(trx, desk, sub.user_id)
    await notify(outbox, {
      botId: desk.botId,
      chatId: sub.user_id,
      lang: order.lang,
      consultationId: sub.consultation_id,
      key: 'sub-renewal-reminder',
      params: {
        title: pick(plan.title, order.lang, desk.defaultLanguage),
        when: formatDate(next, zone, order.lang),
        price: sub.price_stars,
        questions: plan.questions,
      },
      replyMarkup: {
        inline_keyboard: [
          [{ text: deps.i18n.t(order.lang, 'plan-btn-cancel'), callback_data: 'sub:cancel' }],
        ],
      },
      dedupeKey: `subscription:${sub.id}:remind:${job.charge}`,
    })
    return 'sent'
  })
}

/**
 * At the start of a period paid ahead: the unused questions of the period before (the latest earlier account of the
 * consultation, which may be the replaced plan's) move in by this plan's carry-over, once (the grant's request id).
 */
export async function runCarry(deps: Deps, job: { subscriptionId: number; number: number }): Promise<number> {
  return deps.jobs.transaction(deps.db, async (trx): Promise<number> => {
    const sub = await lockSubscription(trx, job.subscriptionId)
    if (!sub || sub.state === 'refunded') return 0
    const period = await trx
      .selectFrom('subscription_period')
      .selectAll()
      .where('subscription_id', '=', sub.id)
      .where('number', '=', job.number)
      .forUpdate()
      .executeTakeFirst()
    if (!period) return 0
    const desk = deps.desk(sub.bot_id)
    const order = await trx
      .selectFrom('orders')
      .selectAll()
      .where('id', '=', sub.order_id)
      .executeTakeFirstOrThrow()
    const plan = linkPlan(desk, order, await linkOf(trx, order.id))
    if (plan.carryOver === 'none') return 0
    const g = await new LedgerTx(trx, 'allow', 0).grant({
      requestId: `subscription:${sub.id}:period:${job.number}:carry`,
      scope: CONSULTATION_SCOPE,
      subject: sub.consultation_id,
      unit: APPEALS_UNIT,
      periodStart: period.period_start,
      periodEnd: period.period_end,
      amount: 0,
      timeZone: desk.schedule.timezone,
      carryOver: { kind: 'capped', max: plan.carryOver.capped },
    })
    if (!g.ok) throw new Error(`subscription ${sub.id}: period ${job.number} carry refused (${g.reason})`)
    if (g.replayed || g.carried === 0) return 0
    await trx
      .updateTable('subscription_period')
      .set((eb) => ({ carried: eb('carried', '+', g.carried), granted: eb('granted', '+', g.carried) }))
      .where('id', '=', period.id)
      .execute()
    return g.carried
  })
}

/** A refused first charge: its Star subscription is cancelled with Telegram (no subscription row renews it). */
export async function runCancelCharge(
  deps: Deps,
  job: { botId: number; userId: number; charge: string },
): Promise<void> {
  await deps.api(job.botId).editUserStarSubscription(job.userId, job.charge, true)
}
