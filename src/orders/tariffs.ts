import { DateTime } from 'luxon'
import type { DeskRuntime } from '../config/load'
import { pick } from '../config/load'
import type { TariffConfig } from '../config/schema'
import type { RefundPolicy, StartMode } from './orders.tables'

/**
 * Tariffs as configured and what an order copies from them. An order is a snapshot: price, window, appeals, drafts,
 * SLA, start mode and terms version are copied when it is created, so a later config change never alters it.
 */

export function findTariff(desk: DeskRuntime, code: string): TariffConfig | undefined {
  return desk.tariffs.find((t) => t.code === code)
}

/** The tariffs on sale: a paused one (issue 24, /settings) is not listed to clients and not sold. */
export function sellableTariffs(desk: DeskRuntime): TariffConfig[] {
  return desk.tariffs.filter((t) => !t.paused)
}

export interface TariffSnapshot {
  tariff_code: string
  title: string
  price_stars: number
  window_minutes: number
  appeals: number
  drafts: number
  sla_minutes: number
  start_mode: StartMode
  start_within_days: number | null
  breach_policy: string
  refund_policy: RefundPolicy
  terms_version: string
  lang: string
}

export function snapshotTariff(desk: DeskRuntime, t: TariffConfig, lang: string): TariffSnapshot {
  return {
    tariff_code: t.code,
    title: pick(t.title, lang, desk.defaultLanguage),
    price_stars: t.priceStars,
    window_minutes: Math.round(t.windowHours * 60),
    appeals: t.appeals,
    drafts: t.drafts,
    sla_minutes: Math.round(t.slaBusinessHours * 60),
    start_mode: t.startMode,
    start_within_days: t.startMode === 'on_request' ? t.startWithinDays : null,
    breach_policy: JSON.stringify(t.breachPolicy),
    refund_policy: t.refundPolicy,
    terms_version: desk.terms.version,
    lang,
  }
}

/** A scheduled tariff's announced slots, parsed, in order (invalid entries are dropped). */
export function tariffSlots(t: TariffConfig): Date[] {
  return t.slots
    .map((s) => DateTime.fromISO(s, { setZone: true }))
    .filter((d) => d.isValid)
    .map((d) => d.toJSDate())
    .sort((a, b) => a.getTime() - b.getTime())
}

/** Slots still ahead of `now`: a slot that has begun is no longer sold. */
export function upcomingSlots(t: TariffConfig, now: Date): Date[] {
  return tariffSlots(t).filter((s) => s.getTime() > now.getTime())
}

/** The announced slot a button names (buttons carry whole seconds), or undefined. */
export function announcedSlot(t: TariffConfig, slot: Date): Date | undefined {
  const sec = Math.floor(slot.getTime() / 1000)
  return tariffSlots(t).find((s) => Math.floor(s.getTime() / 1000) === sec)
}

/** The desk-local calendar date of an instant, "YYYY-MM-DD". */
export function deskDate(desk: DeskRuntime, at: Date): string {
  return DateTime.fromJSDate(at, { zone: desk.schedule.timezone }).toISODate()!
}
