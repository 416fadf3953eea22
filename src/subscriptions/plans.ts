import { createHash } from 'node:crypto'
import type { DeskRuntime } from '../config/load'
import type { PlanConfig } from '../config/schema'

/**
 * Plans (config `desks[].plans`, kind subscription) and the invoice payloads of their purchases. A plan's terms are
 * pinned by a short hash of its terms version in the Subscribe button, like the tariffs' terms.
 */

/** Telegram sells subscriptions for 30 days only. */
export const SUBSCRIPTION_PERIOD_SECONDS = 2_592_000

export function findPlan(desk: DeskRuntime, code: string): PlanConfig | undefined {
  return desk.plans.find((p) => p.code === code)
}

export function planTermsHash(p: PlanConfig): string {
  return createHash('sha256').update(`${p.code}:${p.terms.version}`).digest('base64url').slice(0, 8)
}

export function pickText(t: Partial<Record<string, string>>, lang: string, fallback: string): string {
  return t[lang] ?? t[fallback] ?? Object.values(t)[0] ?? ''
}

/** "s:<order>": a subscription purchase; "u:<order>": a one-off upgrade of a subscription's current period. */
const PAYLOAD = /^([su]):([1-9]\d{0,15})$/

export type PlanPayload = { kind: 'subscribe' | 'upgrade'; orderId: number }

export function subscriptionPayload(orderId: number): string {
  return `s:${orderId}`
}
export function upgradePayload(orderId: number): string {
  return `u:${orderId}`
}

export function parsePlanPayload(payload: string): PlanPayload | undefined {
  const m = PAYLOAD.exec(payload)
  if (!m) return undefined
  const id = Number(m[2])
  if (!Number.isSafeInteger(id)) return undefined
  return { kind: m[1] === 's' ? 'subscribe' : 'upgrade', orderId: id }
}

/** Questions granted for the rest of a period when upgrading from `from` to `to` (the plan's upgradeGrant). */
export function upgradeDelta(
  from: PlanConfig,
  to: PlanConfig,
  currentGranted: number,
  period: { start: Date; end: Date },
  now: Date,
): number {
  const diff = to.questions - from.questions
  switch (to.upgradeGrant) {
    case 'full':
      return Math.max(0, to.questions - currentGranted)
    case 'difference':
      return Math.max(0, diff)
    case 'prorate': {
      const total = period.end.getTime() - period.start.getTime()
      const left = Math.max(0, period.end.getTime() - now.getTime())
      return Math.max(0, Math.ceil((diff * left) / total))
    }
  }
}

/** Stars for an upgrade: the price difference (at least 1). */
export function upgradePrice(from: PlanConfig, to: PlanConfig): number {
  return Math.max(1, to.priceStars - from.priceStars)
}
