import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkInvariants } from '../../src/ledger/ledger.invariants'
import { reconcileDesk } from '../../src/payments/reconciliation'
import { planTermsHash } from '../../src/subscriptions/plans'
import { createPlanOrder } from '../../src/subscriptions/purchase'
import {
  appeals,
  clientSends,
  type DeskWorld,
  eventually,
  inboxDrained,
  newClient,
  STAFF_CHAT_ID,
  staffSends,
  startDeskWorld,
  TEST_BOT_ID,
  topicReady,
} from '../support/fixtures'
import {
  BASIC,
  notifyJobs,
  periods,
  renewDirect,
  renewThroughTelegram,
  subscribe,
  subscribeLink,
  withPlans,
} from './subscriptions-support'

/**
 * Support plans paid by a Stars subscription (issue 12, seed 000), end to end: the real app on its own database,
 * Telegram played by the Bot API stand-in.
 */

const DAY = 86_400_000
let updateIds = 9_000_000

describe('subscriptions: purchase and renewal', () => {
  let w: DeskWorld
  beforeAll(async () => {
    w = await startDeskWorld({ configure: withPlans() })
  })
  afterAll(() => w?.stop())

  it('/plan shows the plans with their terms; Subscribe sends a subscription link (30 days, XTR) on a button', async () => {
    const client = await newClient(w, { language_code: 'en' })
    const since = w.tg.mark()
    await w.tg.push(TEST_BOT_ID, w.tg.command(client, 'plan'))
    const card = await w.tg.waitForSent(client.id, /Plan basic — 500 ⭐ per 30 days/, { since })
    expect(card.text).toContain('3 questions per period')
    expect(card.text).toContain('carry over to the next period, up to 2')
    expect(card.text).toContain('Terms (version basic-v1)')
    expect(card.text).toContain('Plan terms.')
    const link = await subscribeLink(w, client, BASIC)
    expect(link).toMatchObject({ currency: 'XTR', subscription_period: 2592000, amount: 500 })
    expect(link.payload).toMatch(/^s:\d+$/)
    const order = await w.deps.db
      .selectFrom('orders')
      .selectAll()
      .where('id', '=', Number(link.payload.slice(2)))
      .executeTakeFirstOrThrow()
    expect(order).toMatchObject({ kind: 'subscription', tariff_code: 'basic', terms_version: 'basic-v1' })
  })

  it('the first recurring payment creates the subscription, period 1 with its own account, the topic; renewal, carry-over', async () => {
    const client = await newClient(w, { first_name: 'Sub', language_code: 'en' })
    const { sub, payload, amount } = await subscribe(w, client)
    expect(sub).toMatchObject({ state: 'active', plan_code: 'basic', renewal_cancelled: false })
    await w.tg.waitForSent(client.id, /Your plan “Plan basic” is active: 3 questions/)
    const route = await topicReady(w, sub.consultation_id)
    let ps = await periods(w, sub.id)
    expect(ps).toHaveLength(1)
    expect(ps[0]).toMatchObject({ number: 1, granted: 3, reserved: 0, used: 0 })

    // A question in period 1, answered: committed there.
    await clientSends(w, client, 'First question')
    await w.tg.waitForSent(client.id, /Question #1 accepted/)
    await staffSends(w, route.message_thread_id, w.expert, 'Answer one')
    await eventually(async () => (await appeals(w, sub.consultation_id))[0]?.state === 'answered', 'answer')
    ps = await periods(w, sub.id)
    expect(ps[0]).toMatchObject({ granted: 3, used: 1, reserved: 0 })

    // The renewal: a new charge id; period 2 starts at period 1's end with 2 carried (cap 2): 3 + 2.
    const end2 = new Date(ps[0]!.period_end.getTime() + 30 * DAY)
    await renewThroughTelegram(w, client, { payload, amount, charge: 'renew-1', expires: end2 })
    ps = await periods(w, sub.id)
    expect(ps).toHaveLength(2)
    expect(ps[1]).toMatchObject({ number: 2, carried: 2, granted: 5, used: 0, reserved: 0 })
    expect(ps[1]!.period_start.getTime()).toBe(ps[0]!.period_end.getTime())
    expect(ps[0]).toMatchObject({ granted: 1, used: 1 }) // the unused 2 moved over (journal: rollover)
    await w.tg.waitForSent(client.id, /renewed: period 2, .*5 questions \(2 carried over\)/)
    // ONE topic across periods.
    expect(
      w.tg
        .callsTo('createForumTopic', { chat_id: STAFF_CHAT_ID }, { ok: true })
        .filter((c) => String(c.payload.name).includes('Sub')),
    ).toHaveLength(1)
    expect((await checkInvariants(w.deps.db)).ok).toBe(true)
  })

  it('seed 000: a first payment and a renewal redelivered 100 times concurrently: one period, one grant, one notification', async () => {
    const client = await newClient(w, { language_code: 'en' })
    const o = await createPlanOrder(w.deps, w.t.desk, {
      from: client,
      planCode: 'basic',
      terms: planTermsHash(BASIC),
      lang: 'en',
      updateId: ++updateIds,
      kind: 'subscribe',
    })
    if (!o.ok) throw new Error(o.code)
    const first = await Promise.all(
      Array.from({ length: 100 }, () =>
        renewDirect(w, client, { payload: o.payload, amount: o.amount, charge: 'first-100' }),
      ),
    )
    expect(first.filter((r) => r.status === 'started')).toHaveLength(1)
    expect(first.filter((r) => r.status === 'duplicate')).toHaveLength(99)
    const sub = await w.deps.db
      .selectFrom('subscription')
      .selectAll()
      .where('order_id', '=', o.order.id)
      .executeTakeFirstOrThrow()
    const renew = await Promise.all(
      Array.from({ length: 100 }, () =>
        renewDirect(w, client, { payload: o.payload, amount: o.amount, charge: 'renew-100' }),
      ),
    )
    expect(renew.filter((r) => r.status === 'renewed')).toHaveLength(1)
    expect(renew.filter((r) => r.status === 'duplicate')).toHaveLength(99)
    // And twice more through Telegram (the inbox path): nothing new.
    await renewThroughTelegram(w, client, { payload: o.payload, amount: o.amount, charge: 'renew-100' })
    await renewThroughTelegram(w, client, { payload: o.payload, amount: o.amount, charge: 'renew-100' })

    const ps = await periods(w, sub.id)
    expect(ps.map((p) => p.number)).toEqual([1, 2])
    expect(ps[1]).toMatchObject({ granted: 5, carried: 2 }) // 3 unused, carry-over capped at 2
    const grants = await w.deps.db
      .selectFrom('ledger_grant')
      .select(['request_id'])
      .where('request_id', 'like', `subscription:${sub.id}:%`)
      .execute()
    expect(grants.map((g) => g.request_id).sort()).toEqual([
      `subscription:${sub.id}:period:1:appeals`,
      `subscription:${sub.id}:period:1:drafts`,
      `subscription:${sub.id}:period:2:appeals`,
      `subscription:${sub.id}:period:2:drafts`,
    ])
    const payments = await w.deps.db
      .selectFrom('payment')
      .select(['telegram_payment_charge_id'])
      .where('order_id', '=', o.order.id)
      .execute()
    expect(payments).toHaveLength(2)
    expect(await notifyJobs(w, `subscription:${sub.id}:period:1`)).toBe(1)
    expect(await notifyJobs(w, `subscription:${sub.id}:period:2`)).toBe(1)
    await w.tg.waitForSent(client.id, /renewed: period 2/)
    await inboxDrained(w.deps.db)
    expect(w.tg.texts(client.id).filter((t) => t && /renewed: period 2/.test(t))).toHaveLength(1)
    expect((await checkInvariants(w.deps.db)).ok).toBe(true)
  })

  it('reconciliation with getStarTransactions covers subscription charges: the first, renewals, a renewal never delivered', async () => {
    const client = await newClient(w, { language_code: 'en' })
    const { sub, payload, amount, charge } = await subscribe(w, client)
    await renewThroughTelegram(w, client, { payload, amount, charge: `rec-renew-${sub.id}` })
    const tx = (id: string) =>
      w.tg.starTransaction(client, { id, amount, invoice_payload: payload, subscription_period: 2592000 })
    w.tg.setStarTransactions(TEST_BOT_ID, [tx(charge), tx(`rec-renew-${sub.id}`), tx(`rec-lost-${sub.id}`)])
    const report = await reconcileDesk(w.deps, w.t.desk, new Date(Date.now() + 11 * 60_000))
    const mine = new Set([charge, `rec-renew-${sub.id}`, `rec-lost-${sub.id}`])
    const ours = report.mismatches.filter((m) => mine.has(m.charge))
    expect(ours).toEqual([
      { kind: 'missing-in-db', charge: `rec-lost-${sub.id}`, telegramAmount: amount, user: client.id },
    ])
  })
})
