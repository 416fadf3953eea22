import type { User } from 'grammy/types'
import { sql } from 'kysely'
import { expect } from 'vitest'
import type { LoadedConfig } from '../../src/config/load'
import type { PlanConfig } from '../../src/config/schema'
import { APPEALS_UNIT, CONSULTATION_SCOPE } from '../../src/orders/allowances'
import { recordPlanPayment } from '../../src/subscriptions/payment'
import { planTermsHash } from '../../src/subscriptions/plans'
import { TEST_BOT_ID } from '../support/app'
import { type DeskWorld, eventually, inboxDrained } from '../support/fixtures'

/** Helpers of the subscription tests: plans, the purchase through the stand-in, renewals, the clock moved. */

export function plan(init: Partial<PlanConfig> & Pick<PlanConfig, 'code'>): PlanConfig {
  return {
    kind: 'subscription',
    title: { ru: `План ${init.code}`, en: `Plan ${init.code}` },
    description: { ru: 'Описание.', en: 'Description.' },
    priceStars: 500,
    questions: 3,
    drafts: 2,
    slaBusinessHours: 4,
    features: { attachments: true, prioritySla: false, transcriptExport: true },
    carryOver: 'none',
    refundPolicy: 'keep_used',
    terms: { version: `${init.code}-v1`, text: { ru: 'Условия плана.', en: 'Plan terms.' } },
    ...init,
  }
}

export const BASIC = plan({ code: 'basic', priceStars: 500, questions: 3, carryOver: { capped: 2 } })
export const PRO = plan({ code: 'pro', priceStars: 900, questions: 6 })
export const NOFILES = plan({
  code: 'nofiles',
  priceStars: 300,
  questions: 2,
  features: { attachments: false, prioritySla: false, transcriptExport: false },
})

export const STRICT = plan({ code: 'strict', priceStars: 400, questions: 3, refundPolicy: 'revoke_now' })

export function withPlans(plans: PlanConfig[] = [BASIC, PRO, NOFILES, STRICT]) {
  return (c: LoadedConfig) => {
    c.desks[0]!.plans = plans
    c.desks[0]!.subscriptionGraceHours = 24
  }
}

const DAY = 86_400_000

/** Subscribe button -> createInvoiceLink -> the link on a button; returns the link's parameters. */
export async function subscribeLink(w: DeskWorld, client: User, p: PlanConfig) {
  const since = w.tg.mark()
  await w.tg.push(TEST_BOT_ID, w.tg.callback(client, `sub:buy:${p.code}:${planTermsHash(p)}`))
  const call = await w.tg.waitFor('createInvoiceLink', {}, { since })
  const payload = call.payload as {
    payload: string
    currency: string
    subscription_period?: number
    prices: { amount: number }[]
  }
  const link = call.result as string
  await w.tg.waitForSent(client.id, (m) =>
    Boolean(
      (m.message as any).reply_markup?.inline_keyboard?.[0]?.[0]?.url === link ||
        JSON.stringify(m.payload).includes(link),
    ),
  )
  return { ...payload, amount: payload.prices[0]!.amount, link }
}

/**
 * A subscription link's pre-checkout, approved; then its first recurring charge (`charge`) as Telegram would send it
 * next, returned, not pushed.
 */
export async function firstCharge(
  w: DeskWorld,
  client: User,
  link: { payload: string; amount: number },
  charge: string,
) {
  const q = w.tg.preCheckout(client, { invoice_payload: link.payload, total_amount: link.amount })
  await w.tg.push(TEST_BOT_ID, q)
  await w.tg.waitFor('answerPreCheckoutQuery', { pre_checkout_query_id: q.pre_checkout_query!.id, ok: true })
  return w.tg.successfulPayment(client, {
    invoice_payload: link.payload,
    total_amount: link.amount,
    telegram_payment_charge_id: charge,
    subscription_expiration_date: Math.floor((Date.now() + 30 * DAY) / 1000),
    is_recurring: true,
    is_first_recurring: true,
  })
}

/** The whole purchase: link, pre-checkout, the first recurring payment; resolves with the subscription. */
export async function subscribe(w: DeskWorld, client: User, p: PlanConfig = BASIC) {
  const link = await subscribeLink(w, client, p)
  const charge = `sub-${Math.random().toString(36).slice(2, 12)}`
  await w.tg.push(TEST_BOT_ID, await firstCharge(w, client, link, charge))
  const sub = await eventually(
    () =>
      w.deps.db
        .selectFrom('subscription')
        .selectAll()
        .where('bot_id', '=', TEST_BOT_ID)
        .where('user_id', '=', client.id)
        .orderBy('id', 'desc')
        .executeTakeFirst(),
    `a subscription of ${client.id}`,
  )
  return { sub, payload: link.payload, amount: link.amount, charge }
}

/** A renewal charge as Telegram sends it (is_recurring, a new charge id), handled directly (no inbox). */
export function renewDirect(
  w: DeskWorld,
  client: User,
  init: { payload: string; amount: number; charge: string; expires?: Date },
) {
  return recordPlanPayment(w.deps, w.t.desk, {
    userId: client.id,
    lang: client.language_code ?? 'en',
    payment: {
      currency: 'XTR',
      total_amount: init.amount,
      invoice_payload: init.payload,
      telegram_payment_charge_id: init.charge,
      provider_payment_charge_id: '',
      is_recurring: true,
      ...(init.expires ? { subscription_expiration_date: Math.floor(init.expires.getTime() / 1000) } : {}),
    },
  })
}

/** The renewal through the stand-in: a successful_payment message; resolves once the inbox handled it. */
export async function renewThroughTelegram(
  w: DeskWorld,
  client: User,
  init: { payload: string; amount: number; charge: string; expires?: Date },
) {
  const draft = w.tg.successfulPayment(client, {
    invoice_payload: init.payload,
    total_amount: init.amount,
    telegram_payment_charge_id: init.charge,
    is_recurring: true,
    ...(init.expires ? { subscription_expiration_date: Math.floor(init.expires.getTime() / 1000) } : {}),
  })
  const pushed = await w.tg.push(TEST_BOT_ID, draft)
  await handled(w, pushed.update.update_id)
  return draft
}

/** The update was stored by the intake and handled (done). */
export async function handled(w: DeskWorld, updateId: number) {
  await eventually(async () => {
    const r = await w.deps.db
      .selectFrom('inbox_update')
      .select('state')
      .where('bot_id', '=', TEST_BOT_ID)
      .where('update_id', '=', updateId)
      .executeTakeFirst()
    return r?.state === 'done'
  }, `update ${updateId} to be handled`)
  await inboxDrained(w.deps.db)
}

export function periods(w: DeskWorld, subscriptionId: number) {
  return w.deps.db
    .selectFrom('subscription_period as p')
    .innerJoin('ledger_account as a', 'a.id', 'p.account_id')
    .select([
      'p.number',
      'p.period_start',
      'p.period_end',
      'p.charge_id',
      'p.granted as period_granted',
      'p.carried',
      'a.id as account_id',
      'a.granted',
      'a.reserved',
      'a.used',
    ])
    .where('p.subscription_id', '=', subscriptionId)
    .orderBy('p.number')
    .execute()
}

/**
 * Moves a subscription's clock: every stored instant of its periods, their ledger accounts and its consultation
 * shifts by `ms` into the past (the way test/support/lifecycle-clock.ts moves a consultation), so "the period
 * ended an hour ago" needs no waiting.
 */
export async function shiftSubscription(w: DeskWorld, subscriptionId: number, ms: number) {
  const iv = sql.raw(`interval '${Math.round(ms)} milliseconds'`)
  const sub = await w.deps.db
    .selectFrom('subscription')
    .select(['consultation_id'])
    .where('id', '=', subscriptionId)
    .executeTakeFirstOrThrow()
  await sql`update subscription_period set period_start = period_start - ${iv}, period_end = period_end - ${iv}
    where subscription_id = ${subscriptionId}`.execute(w.deps.db)
  await sql`update ledger_account set period_start = period_start - ${iv}, period_end = period_end - ${iv}
    where scope = ${CONSULTATION_SCOPE} and subject = ${String(sub.consultation_id)}`.execute(w.deps.db)
  await sql`update consultation set starts_at = starts_at - ${iv}, access_until = access_until - ${iv}
    where id = ${sub.consultation_id}`.execute(w.deps.db)
  await sql`update subscription set expires_at = expires_at - ${iv} where id = ${subscriptionId}`.execute(
    w.deps.db,
  )
}

/** The appeals account of the subscription's period holding `at` (default now). */
export async function appealsAccount(w: DeskWorld, consultationId: number, at?: Date) {
  const acc = await w.deps.ledger.balance(
    { scope: CONSULTATION_SCOPE, subject: consultationId, unit: APPEALS_UNIT },
    at,
  )
  expect(acc).not.toBeNull()
  return acc!
}

/**
 * Notification jobs written for a dedupe key (one state change = one job; a job deferred for the chat's Telegram
 * window and written again counts once). Plan confirmations go by the payment queue.
 */
export async function notifyJobs(w: DeskWorld, dedupeKey: string): Promise<number> {
  const r = await sql<{ n: string }>`select count(*) as n from pgboss.job
    where name in ('tg.notify', 'tg.notify.payment') and data->>'dedupeKey' = ${dedupeKey}
      and not coalesce(output ? 'deferred', false)`.execute(w.deps.db)
  return Number(r.rows[0]!.n)
}
