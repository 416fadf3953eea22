import type { User } from 'grammy/types'
import { sql } from 'kysely'
import { DateTime } from 'luxon'
import { expect } from 'vitest'
import type { LoadedConfig } from '../../src/config/load'
import type { TariffConfig } from '../../src/config/schema'
import type { Deps } from '../../src/deps'
import { termsHash } from '../../src/orders/orders.service'
import { ADMIN_ID, STAFF_CHAT_ID, TEST_BOT_ID } from '../support/app'
import { inboxDrained, startDeskWorld, type World } from '../support/fixtures'

/**
 * Helpers for the payment end-to-end tests: the real app (src/app.ts) on a fresh database against the Bot API
 * stand-in, and the client's steps (choose a tariff, pre-checkout, pay) as Telegram would deliver them.
 */

/** The payment tests' world: the shared world builder's, without the expert user. */
export type PayWorld = World

/** A tariff with every default filled in (config objects are validated at load; tests add theirs afterwards). */
export function tariff(init: Partial<TariffConfig> & Pick<TariffConfig, 'code'>): TariffConfig {
  return {
    title: { ru: `Тариф ${init.code}`, en: `Tariff ${init.code}` },
    description: { ru: 'Описание.', en: 'Description.' },
    priceStars: 100,
    windowHours: 24,
    appeals: 3,
    slaBusinessHours: 4,
    startMode: 'immediate',
    startWithinDays: 7,
    slots: [],
    slotCapacity: 1,
    dailyCapacity: 50,
    drafts: 2,
    breachPolicy: { kind: 'none' },
    refundPolicy: 'deliver',
    topUps: [],
    changeCutoffHours: 24,
    paused: false,
    ...init,
  }
}

/**
 * A desk closed whenever the test runs: open `minutes` once a week, from about 12 hours after now in the desk's zone
 * (Europe/Moscow; the opening rounded down to the `unit`). Pass `configure` to startPayWorld.
 */
export function openTwelveHoursAhead(minutes: number, unit: 'hour' | 'minute') {
  const opening = DateTime.now().setZone('Europe/Moscow').plus({ hours: 12 }).startOf(unit)
  const day = (['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const)[opening.weekday - 1]!
  const interval = `${opening.toFormat('HH:mm')}-${opening.plus({ minutes }).toFormat('HH:mm')}`
  const configure = (c: LoadedConfig) => {
    c.desks[0]!.schedule.weekly = { [day]: [interval] }
  }
  return { opening, interval, configure }
}

/**
 * The shared world (test/support/fixtures.ts) as the payment tests use it: the production Api with its throttler,
 * an admin named Admin, no expert user.
 */
export function startPayWorld(
  configure?: (c: LoadedConfig) => void,
  opts: { mode?: 'polling' | 'webhook' } = {},
): Promise<PayWorld> {
  return startDeskWorld({
    // The production Api with the shared Telegram budget, its windows scaled down (20 per 6 s in the staff group):
    // a file of payment tests posts dozens of staff notices, which the real 20 a minute would spread over minutes.
    throttled: true,
    admin: { first_name: 'Admin' },
    expert: false,
    configure: (c) => {
      c.telegramLimits.windowScale = 0.1
      configure?.(c)
    },
    ...(opts.mode ? { mode: opts.mode } : {}),
  })
}

/**
 * Presses "Accept the terms and pay" (or a slot button; outside hours, for an immediate tariff, "start now" or
 * "start when the desk opens" with the opening) and returns the invoice the bot sent.
 */
export async function buy(w: PayWorld, user: User, code: string, start?: Date | 'now') {
  const since = w.tg.mark()
  const suffix = start === 'now' ? ':now' : start ? `:${Math.floor(start.getTime() / 1000)}` : ''
  const data = `tf:buy:${code}:${termsHash(w.t.desk.terms.version)}${suffix}`
  await w.tg.push(TEST_BOT_ID, w.tg.callback(user, data))
  const call = await w.tg.waitFor('sendInvoice', { chat_id: user.id }, { since })
  const p = call.payload as {
    payload: string
    currency: string
    prices: { label: string; amount: number }[]
    provider_token?: string
    title: string
    description: string
  }
  const orderId = Number(/^o:(\d+)$/.exec(p.payload)?.[1])
  expect(orderId).toBeGreaterThan(0)
  return { orderId, payload: p.payload, amount: p.prices[0]!.amount, invoice: p }
}

let queryCounter = 0

/** A pre_checkout_query for the invoice; resolves with the bot's answer. */
export async function preCheckout(
  w: PayWorld,
  user: User,
  init: { payload: string; amount: number; currency?: string },
): Promise<{ ok: boolean; error_message?: string }> {
  const id = `pcq-${process.pid}-${++queryCounter}-${Math.random().toString(36).slice(2, 8)}`
  await w.tg.push(
    TEST_BOT_ID,
    w.tg.preCheckout(user, {
      id,
      invoice_payload: init.payload,
      total_amount: init.amount,
      ...(init.currency ? { currency: init.currency } : {}),
    }),
  )
  const answer = await w.tg.waitFor('answerPreCheckoutQuery', { pre_checkout_query_id: id })
  return answer.payload as { ok: boolean; error_message?: string }
}

/**
 * A successful_payment message, handled: returns once the inbox has handled it (a webhook's 200 only says it is
 * stored), with the charge id and the pushed update (for redelivery).
 */
export async function pay(
  w: PayWorld,
  user: User,
  init: { payload: string; amount: number; charge?: string },
) {
  const charge = init.charge ?? `ch-${Math.random().toString(36).slice(2, 12)}`
  const pushed = await w.tg.push(
    TEST_BOT_ID,
    w.tg.successfulPayment(user, {
      invoice_payload: init.payload,
      total_amount: init.amount,
      telegram_payment_charge_id: charge,
    }),
  )
  await inboxDrained(w.deps.db)
  return { charge, pushed }
}

/** Orders, payments, consultations of an order, for assertions. */
export async function orderState(deps: Deps, orderId: number) {
  const order = await deps.db
    .selectFrom('orders')
    .selectAll()
    .where('id', '=', orderId)
    .executeTakeFirstOrThrow()
  const payments = await deps.db
    .selectFrom('payment')
    .selectAll()
    .where('order_id', '=', orderId)
    .orderBy('id')
    .execute()
  const consultation = await deps.db
    .selectFrom('consultation')
    .selectAll()
    .where('order_id', '=', orderId)
    .executeTakeFirst()
  return { order, payments, consultation }
}

/**
 * Jobs written to a queue whose payload matches (pg-boss table), e.g. one activation per consultation. A job that
 * gave its worker up for a chat's Telegram window (BudgetWait) completed with `deferred` and was written again: the
 * two count once.
 */
export async function jobsIn(deps: Deps, queue: string, where: Record<string, unknown>): Promise<number> {
  const r = await sql<{ n: number }>`
    select count(*)::int as n from pgboss.job where name = ${queue} and data @> ${JSON.stringify(where)}::jsonb
      and not coalesce(output ? 'deferred', false)`.execute(deps.db)
  return r.rows[0]!.n
}

export async function auditCount(deps: Deps, action: string, subjectId: string | number): Promise<number> {
  const r = await deps.db
    .selectFrom('audit_log')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('action', '=', action)
    .where('subject_id', '=', String(subjectId))
    .executeTakeFirstOrThrow()
  return r.n
}

/** Ledger accounts of a consultation (scope 'consultation'). */
export function consultationAccounts(deps: Deps, consultationId: number) {
  return deps.db
    .selectFrom('ledger_account')
    .selectAll()
    .where('scope', '=', 'consultation')
    .where('subject', '=', String(consultationId))
    .orderBy('unit')
    .execute()
}

export { ADMIN_ID, STAFF_CHAT_ID, TEST_BOT_ID }
