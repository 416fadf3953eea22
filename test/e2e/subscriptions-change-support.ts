import type { User } from 'grammy/types'
import { sql } from 'kysely'
import { expect } from 'vitest'
import type { PlanConfig } from '../../src/config/schema'
import { CONSULTATION_SCOPE } from '../../src/orders/allowances'
import { planTermsHash } from '../../src/subscriptions/plans'
import { type DeskWorld, TEST_BOT_ID } from '../support/fixtures'
import { BASIC, firstCharge, handled, PRO } from './subscriptions-support'

/** Helpers of the change-of-plan tests (issue 22): the offer and its link, the payment, the plan's periods at the Star. */

const DAY = 86_400_000

export function changeKit(ref: { w: DeskWorld }) {
  async function press(client: User, data: string) {
    const pushed = await ref.w.tg.push(TEST_BOT_ID, ref.w.tg.callback(client, data))
    await handled(ref.w, pushed.update.update_id)
  }

  /** /plan → Change plan → the plan: the offer with its rule and the link (a subscription link at the new price). */
  async function changeLink(client: User, to: PlanConfig) {
    let since = ref.w.tg.mark()
    await press(client, 'sub:change')
    await ref.w.tg.waitForSent(client.id, /Choose the plan to change to/, { since })
    since = ref.w.tg.mark()
    await press(client, `sub:chg:${to.code}:${planTermsHash(to)}`)
    const call = await ref.w.tg.waitFor('createInvoiceLink', {}, { since })
    const offer = await ref.w.tg.waitForSent(client.id, /Change to “/, { since })
    const p = call.payload as { payload: string; subscription_period?: number; prices: { amount: number }[] }
    return {
      payload: p.payload,
      amount: p.prices[0]!.amount,
      period: p.subscription_period,
      offer: offer.text!,
    }
  }

  /** The link paid: pre-checkout, then the first recurring charge; resolves when the update was handled. */
  async function payLink(client: User, link: { payload: string; amount: number }, charge: string) {
    const draft = await firstCharge(ref.w, client, link, charge)
    const pushed = await ref.w.tg.push(TEST_BOT_ID, draft)
    await handled(ref.w, pushed.update.update_id)
    return draft
  }

  const subsOf = (client: User) =>
    ref.w.deps.db
      .selectFrom('subscription')
      .selectAll()
      .where('bot_id', '=', TEST_BOT_ID)
      .where('user_id', '=', client.id)
      .orderBy('id')
      .execute()

  /** Every period the client received on the consultation, with the charge that bought it and its plan's price. */
  async function ledgerOfPlan(consultationId: number) {
    return (
      await sql<{
        subscription_id: number
        number: number
        plan_code: string
        period_start: Date
        period_end: Date
        granted: number
        charged: number
        currency: string
        kind: string
        price: number
      }>`select sp.subscription_id, sp.number, sp.plan_code, sp.period_start, sp.period_end, sp.granted,
            p.total_amount as charged, p.currency, p.kind, s.price_stars as price
          from subscription_period sp
          join subscription s on s.id = sp.subscription_id
          join payment p on p.id = sp.payment_id
          where s.consultation_id = ${consultationId}
          order by sp.period_start`.execute(ref.w.deps.db)
    ).rows
  }

  /** Stars the client paid for plans and kept (every payment row of their plan orders not refunded, by kind). */
  async function starsPaid(client: User) {
    const r = await sql<{ kind: string; stars: string }>`select p.kind, sum(p.total_amount)::text as stars
      from payment p join orders o on o.id = p.order_id
      where p.bot_id = ${TEST_BOT_ID} and p.user_id = ${client.id} and o.kind = 'subscription' and p.refunded_at is null
      group by p.kind`.execute(ref.w.deps.db)
    return Object.fromEntries(r.rows.map((x) => [x.kind, Number(x.stars)]))
  }

  /** Every stored instant of the consultation's plan (all its subscriptions) moved `ms` into the past. */
  async function shiftPlan(consultationId: number, ms: number) {
    const iv = sql.raw(`interval '${Math.round(ms)} milliseconds'`)
    await sql`update subscription_period set period_start = period_start - ${iv}, period_end = period_end - ${iv}
      where subscription_id in (select id from subscription where consultation_id = ${consultationId})`.execute(
      ref.w.deps.db,
    )
    await sql`update ledger_account set period_start = period_start - ${iv}, period_end = period_end - ${iv}
      where scope = ${CONSULTATION_SCOPE} and subject = ${String(consultationId)}`.execute(ref.w.deps.db)
    await sql`update consultation set starts_at = starts_at - ${iv}, access_until = access_until - ${iv}
      where id = ${consultationId}`.execute(ref.w.deps.db)
  }

  function expectEveryPeriodPaysItsPlan(rows: Awaited<ReturnType<typeof ledgerOfPlan>>, prices: number[]) {
    const byCode = new Map([BASIC, PRO].map((p) => [p.code, p]))
    expect(rows.map((r) => r.charged)).toEqual(prices)
    for (const [i, r] of rows.entries()) {
      // What the charge paid is the price of the plan the period grants: the subscription's own, the plan's own.
      expect(r, `period ${i}`).toMatchObject({ currency: 'XTR', kind: 'payment', charged: r.price })
      expect(byCode.get(r.plan_code)!.priceStars, `period ${i}`).toBe(r.charged)
      expect(r.period_end.getTime() - r.period_start.getTime()).toBe(30 * DAY)
      // No gap, no day paid twice: each period starts where the one before ended.
      if (i > 0) expect(r.period_start.getTime(), `period ${i}`).toBe(rows[i - 1]!.period_end.getTime())
    }
  }

  return {
    press,
    changeLink,
    payLink,
    subsOf,
    ledgerOfPlan,
    starsPaid,
    shiftPlan,
    expectEveryPeriodPaysItsPlan,
  }
}
