import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkInvariants } from '../../src/ledger/ledger.invariants'
import { metrics } from '../../src/metrics'
import { CONSULTATION_SCOPE } from '../../src/orders/allowances'
import { runCarry, runRenewalReminder } from '../../src/subscriptions/renewal-jobs'
import { formatDate } from '../../src/time/format'
import {
  type DeskWorld,
  eventually,
  newClient,
  STAFF_CHAT_ID,
  startDeskWorld,
  TEST_BOT_ID,
} from '../support/fixtures'
import { changeKit } from './subscriptions-change-support'
import {
  BASIC,
  handled,
  PRO,
  renewDirect,
  renewThroughTelegram,
  subscribe,
  withPlans,
} from './subscriptions-support'

/**
 * Issue 22, money exact to the Star on a support plan: a Star subscription's price is fixed in its link, so a
 * renewal grants what its charge pays for (the subscription's own price and plan), a charge of another amount grants
 * nothing, and a change of plan is a new subscription at the new price that starts when the paid time ends, the old
 * one cancelled with Telegram once. Black box through the Bot API stand-in, checked at the Star.
 */

const DAY = 86_400_000
const ZONE = 'Europe/Moscow'

describe('subscriptions: change of plan and renewals at the Star', () => {
  let w: DeskWorld
  beforeAll(async () => {
    w = await startDeskWorld({ configure: withPlans() })
    ref.w = w
  })
  afterAll(() => w?.stop())

  const ref = {} as { w: DeskWorld }
  const {
    press,
    changeLink,
    payLink,
    subsOf,
    ledgerOfPlan,
    starsPaid,
    shiftPlan,
    expectEveryPeriodPaysItsPlan,
  } = changeKit(ref)

  it('upgrade basic → pro, then three renewals: each charge is the price of the plan of its period; the old one cancelled once', async () => {
    const client = await newClient(w, { language_code: 'en' })
    const first = await subscribe(w, client, BASIC)
    const a = first.sub
    const [aPeriod] = await ledgerOfPlan(a.consultation_id)
    const start = formatDate(aPeriod!.period_end, ZONE, 'en')

    const link = await changeLink(client, PRO)
    // A new subscription at the new plan's price, and the rule stated before payment.
    expect(link).toMatchObject({ amount: 900, period: 2592000 })
    expect(link.payload).not.toBe(first.payload)
    expect(link.offer).toContain('Change to “Plan pro”: 900 ⭐ every 30 days.')
    expect(link.offer).toContain(`Your current plan “Plan basic” stays as it is until ${start}.`)
    expect(link.offer).toContain(
      `first 30 days, ${start} – ${formatDate(new Date(aPeriod!.period_end.getTime() + 30 * DAY), ZONE, 'en')}`,
    )
    expect(link.offer).toContain('No day is paid twice and there is no gap.')

    const since = w.tg.mark()
    const paid = await payLink(client, link, `up-1-${a.id}`)
    await w.tg.waitForSent(client.id, /Change of plan paid: “Plan pro”, 900 ⭐ every 30 days/, { since })
    const edit = await w.tg.waitFor('editUserStarSubscription', { user_id: client.id }, { since, ok: true })
    expect(edit.payload).toMatchObject({ telegram_payment_charge_id: first.charge, is_canceled: true })
    const [oldSub, b] = await subsOf(client)
    expect(oldSub).toMatchObject({ id: a.id, state: 'replaced', replaced_by: b!.id, renewal_cancelled: true })
    expect(b).toMatchObject({ plan_code: 'pro', price_stars: 900, replaces: a.id, state: 'active' })
    expect(b!.consultation_id).toBe(a.consultation_id) // one topic across the change

    // Redelivered (twice): nothing more, Telegram is not asked again.
    await w.tg.push(TEST_BOT_ID, paid)
    const again = await w.tg.push(TEST_BOT_ID, paid)
    await handled(w, again.update.update_id)
    expect(await subsOf(client)).toHaveLength(2)
    expect(w.tg.callsTo('editUserStarSubscription', { user_id: client.id })).toHaveLength(1)

    // Until the old period ends the client keeps the basic period's numbers; the pro period waits after it.
    let rows = await ledgerOfPlan(a.consultation_id)
    expect(rows.map((r) => [r.plan_code, r.granted])).toEqual([
      ['basic', 3],
      ['pro', 6],
    ])
    const view = w.tg.mark()
    await w.tg.push(TEST_BOT_ID, w.tg.command(client, 'plan'))
    const plan = await w.tg.waitForSent(client.id, /Your plan: Plan basic/, { since: view })
    expect(plan.text).toContain(`From ${start}: “Plan pro”, 900 ⭐ per 30 days, already paid`)

    // Three renewals of the new subscription, each at its own price.
    for (let i = 1; i <= 3; i++)
      await renewThroughTelegram(w, client, {
        payload: link.payload,
        amount: 900,
        charge: `up-r${i}-${a.id}`,
      })
    // The old link charging anyway (its cancel not taken yet): recorded, reported, nothing granted.
    await renewThroughTelegram(w, client, { payload: first.payload, amount: 500, charge: `up-old-${a.id}` })
    await w.tg.waitForSent(
      STAFF_CHAT_ID,
      new RegExp(
        `списано 500 ⭐ \\(списание up-old-${a.id}\\).*подписка \\(заменена сменой плана\\) продлеваться не должна`,
      ),
    )

    rows = await ledgerOfPlan(a.consultation_id)
    expectEveryPeriodPaysItsPlan(rows, [500, 900, 900, 900, 900])
    expect(rows.map((r) => r.plan_code)).toEqual(['basic', 'pro', 'pro', 'pro', 'pro'])
    expect(rows.map((r) => r.granted)).toEqual([3, 6, 6, 6, 6]) // pro carries nothing over
    // Stars paid over the plan's life = the sum of the prices of the periods received (+ the refused charge, kept
    // apart as an overpayment for an admin to refund).
    const sumOfPeriods = rows.reduce((s, r) => s + r.price, 0)
    expect(await starsPaid(client)).toEqual({ payment: sumOfPeriods, overpayment: 500 })
    expect(sumOfPeriods).toBe(500 + 4 * 900)
    // The old link charging again after its cancel: Telegram is told its (cancelled) wish once more, for that charge.
    await eventually(
      async () => w.tg.callsTo('editUserStarSubscription', { user_id: client.id }, { ok: true }).length === 2,
      'the cancel sent again',
    )
    expect(
      w.tg.callsTo('editUserStarSubscription', { user_id: client.id }).map((c) => c.payload.is_canceled),
    ).toEqual([true, true])
    expect((await checkInvariants(w.deps.db)).ok).toBe(true)
  })

  it('downgrade pro → basic, then three renewals: the running period keeps its questions; carry-over at the new start, once', async () => {
    const client = await newClient(w, { language_code: 'en' })
    const first = await subscribe(w, client, PRO)
    const a = first.sub
    const link = await changeLink(client, BASIC)
    expect(link).toMatchObject({ amount: 500, period: 2592000 })
    expect(link.offer).toContain('Up to 2 unused questions move to the new plan')
    const since = w.tg.mark()
    await payLink(client, link, `down-1-${a.id}`)
    const edit = await w.tg.waitFor('editUserStarSubscription', { user_id: client.id }, { since, ok: true })
    expect(edit.payload).toMatchObject({ telegram_payment_charge_id: first.charge, is_canceled: true })
    const [, b] = await subsOf(client)

    // Paid ahead: the pro period still holds all 6 questions (nothing carried away early).
    const accounts = async () =>
      (
        await sql<{ granted: number; period_start: Date }>`select granted, period_start from ledger_account
          where scope = ${CONSULTATION_SCOPE} and subject = ${String(a.consultation_id)} and unit = 'appeals'
          order by period_start`.execute(w.deps.db)
      ).rows.map((r) => r.granted)
    expect(await accounts()).toEqual([6, 3])
    const carryJob = await sql<{ start_after: Date }>`select start_after from pgboss.job
      where name = 'subscriptions.carry' and (data->>'subscriptionId')::bigint = ${b!.id}`.execute(w.deps.db)
    const rows0 = await ledgerOfPlan(a.consultation_id)
    expect(carryJob.rows.map((r) => r.start_after.getTime())).toEqual([rows0[1]!.period_start.getTime()])

    // The old period ended a minute ago: the carry job moves the unused (capped at 2), once.
    await shiftPlan(a.consultation_id, rows0[0]!.period_end.getTime() - Date.now() + 60_000)
    expect(await runCarry(w.deps, { subscriptionId: b!.id, number: 1 })).toBe(2)
    expect(await runCarry(w.deps, { subscriptionId: b!.id, number: 1 })).toBe(0)
    expect(await accounts()).toEqual([4, 5])

    for (let i = 1; i <= 3; i++)
      await renewThroughTelegram(w, client, {
        payload: link.payload,
        amount: 500,
        charge: `down-r${i}-${a.id}`,
      })
    const rows = await ledgerOfPlan(a.consultation_id)
    expectEveryPeriodPaysItsPlan(rows, [900, 500, 500, 500, 500])
    expect(rows.map((r) => r.plan_code)).toEqual(['pro', 'basic', 'basic', 'basic', 'basic'])
    // Renewals paid ahead grant the plan's 3 at the charge; their carry-over waits for their start.
    await w.tg.waitForSent(
      client.id,
      /renewed ahead: period 4, .*3 questions; up to 2 unused from the period before move in when it starts/,
    )
    expect(rows.map((r) => r.granted)).toEqual([6, 5, 3, 3, 3])
    // The topic's pinned card names the plan of the period running now (the new one) and its price.
    await eventually(async () => {
      const cards = w.tg
        .callsTo('editMessageText', { chat_id: STAFF_CHAT_ID }, { ok: true })
        .map((c) => String(c.payload.text))
        .filter((t) => t.startsWith(`📋 Консультация #${a.consultation_id} `))
      return cards.at(-1)?.includes('📦 Plan basic · 500 ⭐') ?? false
    }, 'the card shows the new plan')
    expect(await starsPaid(client)).toEqual({ payment: rows.reduce((s, r) => s + r.price, 0) })
    expect(rows.reduce((s, r) => s + r.price, 0)).toBe(900 + 4 * 500)
    expect(w.tg.callsTo('editUserStarSubscription', { user_id: client.id })).toHaveLength(1)
    expect((await checkInvariants(w.deps.db)).ok).toBe(true)
  })

  it('a renewal of another amount (another plan’s price, or none) is recorded, reported and grants nothing', async () => {
    const client = await newClient(w, { language_code: 'en' })
    const s = await subscribe(w, client, BASIC)
    const refused = async () =>
      (await metrics.planChargesRefused.get()).values.find((v) => v.labels.reason === 'amount')?.value ?? 0
    const before = await refused()
    const since = w.tg.mark()
    // 900 is the pro plan's price: it must not buy a pro period on a basic subscription.
    await renewThroughTelegram(w, client, { payload: s.payload, amount: 900, charge: `odd-900-${s.sub.id}` })
    expect(
      await renewDirect(w, client, { payload: s.payload, amount: 123, charge: `odd-123-${s.sub.id}` }),
    ).toEqual({ status: 'refused', reason: 'amount' })
    await w.tg.waitForSent(
      STAFF_CHAT_ID,
      new RegExp(
        `списано 900 ⭐ \\(списание odd-900-${s.sub.id}\\).*цена этой подписки — 500 ⭐. Ничего не выдано`,
      ),
      { since },
    )
    await w.tg.waitForSent(STAFF_CHAT_ID, new RegExp(`списано 123 ⭐ \\(списание odd-123-${s.sub.id}\\)`), {
      since,
    })
    await w.tg.waitForSent(
      client.id,
      /We received 900 ⭐ for “Plan basic”, but this charge does not match your plan/,
    )
    expect(await refused()).toBe(before + 2)
    const kept = await w.deps.db
      .selectFrom('payment')
      .select(['telegram_payment_charge_id', 'kind', 'total_amount'])
      .where('order_id', '=', s.sub.order_id)
      .orderBy('id')
      .execute()
    expect(kept).toEqual([
      { telegram_payment_charge_id: s.charge, kind: 'payment', total_amount: 500 },
      { telegram_payment_charge_id: `odd-900-${s.sub.id}`, kind: 'overpayment', total_amount: 900 },
      { telegram_payment_charge_id: `odd-123-${s.sub.id}`, kind: 'overpayment', total_amount: 123 },
    ])
    let rows = await ledgerOfPlan(s.sub.consultation_id)
    expect(rows).toHaveLength(1)
    const audit = await w.deps.db
      .selectFrom('audit_log')
      .select('action')
      .where('action', '=', 'subscription.charge_refused')
      .where('subject_type', '=', 'payment')
      .execute()
    expect(audit.length).toBeGreaterThanOrEqual(2)
    // The right amount renews as usual: period 2, the basic plan, 500.
    await renewThroughTelegram(w, client, { payload: s.payload, amount: 500, charge: `odd-ok-${s.sub.id}` })
    rows = await ledgerOfPlan(s.sub.consultation_id)
    expectEveryPeriodPaysItsPlan(rows, [500, 500])
    expect(await starsPaid(client)).toEqual({ payment: 1000, overpayment: 1023 })
  })

  it('renewal reminder a day before the charge: once, with when and how much and Cancel renewal; none after cancel', async () => {
    const client = await newClient(w, { language_code: 'en' })
    const s = await subscribe(w, client, BASIC)
    const job = await sql<{
      start_after: Date
      data: { charge: string }
    }>`select start_after, data from pgboss.job
      where name = 'subscriptions.remind' and (data->>'subscriptionId')::bigint = ${s.sub.id}`.execute(
      w.deps.db,
    )
    const sub = await w.deps.db
      .selectFrom('subscription')
      .selectAll()
      .where('id', '=', s.sub.id)
      .executeTakeFirstOrThrow()
    expect(job.rows.map((r) => [r.start_after.getTime(), r.data.charge])).toEqual([
      [sub.expires_at!.getTime() - DAY, s.charge],
    ])
    const data = { subscriptionId: s.sub.id, charge: s.charge }
    expect(await runRenewalReminder(w.deps, data)).toBe('sent')
    expect(await runRenewalReminder(w.deps, data)).toBe('sent') // a retried job: the same message key
    const when = formatDate(sub.expires_at!, ZONE, 'en')
    const msg = await w.tg.waitForSent(client.id, /renews on/)
    expect(msg.text).toBe(
      `🔔 Your plan “Plan basic” renews on ${when}: 500 ⭐ for another 30 days (3 questions). To stop it, cancel the renewal below or with /plan; your access runs to the end of the paid period.`,
    )
    expect(JSON.stringify(msg.payload)).toContain('"callback_data":"sub:cancel"')
    const key = `subscription:${s.sub.id}:remind:${s.charge}`
    // The retried run wrote no second notification: one job for the key, done.
    await eventually(async () => {
      const r = await sql<{ n: number; done: number }>`select count(*)::int as n,
          count(*) filter (where state = 'completed')::int as done
        from pgboss.job where name = 'tg.notify' and data->>'dedupeKey' = ${key}`.execute(w.deps.db)
      return r.rows[0]!.n === 1 && r.rows[0]!.done === 1
    }, 'the one reminder send done')
    expect(w.tg.texts(client.id).filter((t) => t && /renews on/.test(t))).toHaveLength(1)

    // The reminder's button is the Cancel renewal of /plan.
    const since = w.tg.mark()
    await press(client, 'sub:cancel')
    await w.tg.waitFor('editUserStarSubscription', { user_id: client.id }, { since, ok: true })
    expect(await runRenewalReminder(w.deps, data)).toBe('skipped')

    // A reminder of an older charge after a renewal says nothing either.
    const other = await newClient(w, { language_code: 'en' })
    const o = await subscribe(w, other, BASIC)
    await renewThroughTelegram(w, other, { payload: o.payload, amount: 500, charge: `rem-r1-${o.sub.id}` })
    expect(await runRenewalReminder(w.deps, { subscriptionId: o.sub.id, charge: o.charge })).toBe('skipped')
    expect(await runRenewalReminder(w.deps, { subscriptionId: o.sub.id, charge: `rem-r1-${o.sub.id}` })).toBe(
      'sent',
    )
  })
})
