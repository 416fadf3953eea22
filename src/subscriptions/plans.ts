import type { DeskRuntime } from '../config/load'
import type { PlanConfig } from '../config/schema'
import { termsHash } from '../orders/orders.service'

/**
 * Plans (config `desks[].plans`, kind subscription) and the invoice payloads of their purchases. A plan's terms are
 * pinned by a short hash of its terms version in the Subscribe button, like the tariffs' terms.
 */

/** Telegram sells subscriptions for 30 days only. */
export const SUBSCRIPTION_PERIOD_SECONDS = 2_592_000

export function findPlan(desk: DeskRuntime, code: string): PlanConfig | undefined {
  return desk.plans.find((p) => p.code === code)
}

/** A plan's terms pinned in callback data: the terms hash of orders (src/orders) over its code and version. */
export function planTermsHash(p: PlanConfig): string {
  return termsHash(`${p.code}:${p.terms.version}`)
}

/** "s:<order>": the link of a subscription (a first purchase, or a change of plan: a new subscription). */
const PAYLOAD = /^s:([1-9]\d{0,15})$/

export type PlanPayload = { kind: 'subscribe'; orderId: number }

export function subscriptionPayload(orderId: number): string {
  return `s:${orderId}`
}

export function parsePlanPayload(payload: string): PlanPayload | undefined {
  const m = PAYLOAD.exec(payload)
  if (!m) return undefined
  const id = Number(m[1])
  if (!Number.isSafeInteger(id)) return undefined
  return { kind: 'subscribe', orderId: id }
}

/**
 * The rule of a change of plan (issue 22), the one place it is decided: a Star subscription's price is fixed in its
 * link, so a change (bigger or smaller) is a new subscription at the new plan's price. Its first charge buys the new
 * plan's first 30 days, which start when the time already paid ends (the end of the current period, or of a renewal
 * paid after the link was made), never earlier and never later: no day is paid twice and there is no gap. Paid
 * after the current period's end (in the grace), the new plan starts at the payment. Every later charge buys the next
 * 30 days. Unused questions move into the new plan's first period as at a renewal (the new plan's carry-over).
 */
export function changeStartsAt(paidUntil: Date, now: Date): Date {
  return paidUntil.getTime() > now.getTime() ? paidUntil : now
}

/** Each charge buys exactly one period of 30 days from its start. */
export function periodEnd(start: Date): Date {
  return new Date(start.getTime() + SUBSCRIPTION_PERIOD_SECONDS * 1000)
}

/** When Telegram will charge next (the payment's subscription_expiration_date), else the period's end. */
export const REMINDER_BEFORE_MS = 24 * 3600_000
export function reminderAt(nextCharge: Date): Date {
  return new Date(nextCharge.getTime() - REMINDER_BEFORE_MS)
}
