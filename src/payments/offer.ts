import { Info } from 'luxon'
import type { DeskRuntime } from '../config/load'
import { pick } from '../config/load'
import type { TariffConfig } from '../config/schema'
import type { Translator } from '../deps'
import { cut, INVOICE_DESCRIPTION_MAX, INVOICE_TITLE_MAX } from '../text'
import { isOpen, nextOpening, WEEKDAYS } from '../time/business-time'
import { formatHours, formatInstant, namesZone, type Zone, zoneId, zoneIn } from '../time/format'
import { deskSchedule } from '../time/schedule'

/**
 * What a client reads before paying: the tariff, what is included, the window, the SLA with the desk's hours,
 * when the window starts, and the terms with their version. Plain text (no parse_mode): titles and terms come
 * from config and must never break a message.
 */

/**
 * "Mon–Fri 10:00–18:00; Sat 11:00–15:00 Moscow time": consecutive weekdays with equal hours grouped; the desk's zone
 * in words unless the reader picked that zone as their own.
 */
export function weeklyHours(desk: DeskRuntime, lang: string, reader: Zone = desk.schedule.timezone): string {
  const names = Info.weekdays('short', { locale: lang === 'ru' ? 'ru' : 'en-GB' })
  const groups: { from: number; to: number; hours: string }[] = []
  WEEKDAYS.forEach((day, i) => {
    const hours = (desk.schedule.weekly[day] ?? []).join(', ')
    if (!hours) return
    const last = groups[groups.length - 1]
    if (last && last.to === i - 1 && last.hours === hours) last.to = i
    else groups.push({ from: i, to: i, hours })
  })
  if (groups.length === 0) return '—'
  const parts = groups.map(
    (g) => `${names[g.from]}${g.to > g.from ? `–${names[g.to]}` : ''} ${g.hours.replaceAll('-', '–')}`,
  )
  const own = !namesZone(reader) && zoneId(reader) === desk.schedule.timezone
  return own ? parts.join('; ') : `${parts.join('; ')} ${zoneIn(desk.schedule.timezone, lang)}`
}

export function startModeText(t: Translator, lang: string, tariff: TariffConfig): string {
  if (tariff.startMode === 'scheduled') return t(lang, 'start-mode-scheduled')
  if (tariff.startMode === 'on_request')
    return t(lang, 'start-mode-on-request', { days: tariff.startWithinDays })
  return t(lang, 'start-mode-immediate')
}

export function tariffCard(
  t: Translator,
  desk: DeskRuntime,
  tariff: TariffConfig,
  lang: string,
  now: Date,
  zone: Zone = desk.schedule.timezone,
): string {
  const window = formatHours(Math.round(tariff.windowHours * 60), lang)
  const lines = [
    t(lang, 'tariff-card-title', {
      title: pick(tariff.title, lang, desk.defaultLanguage),
      price: tariff.priceStars,
    }),
    pick(tariff.description, lang, desk.defaultLanguage),
    '',
    t(lang, 'tariff-card-included', { appeals: tariff.appeals }),
    ...(tariff.drafts > 0 ? [t(lang, 'tariff-card-drafts')] : []),
    t(lang, 'tariff-card-window', { window }),
    t(lang, 'tariff-card-start', { start: startModeText(t, lang, tariff) }),
    t(lang, 'tariff-card-sla', {
      sla: formatHours(Math.round(tariff.slaBusinessHours * 60), lang),
      hours: weeklyHours(desk, lang, zone),
    }),
  ]
  lines.push(...policyLines(t, tariff, lang))
  // Outside hours an immediate tariff offers a choice (the card's two buttons): start now or at the opening.
  const opens = closedUntil(desk, tariff, now)
  if (opens)
    lines.push(
      '',
      t(lang, 'warn-desk-closed-choice', {
        opens: formatInstant(opens, zone, lang),
        window: formatHours(Math.round(tariff.windowHours * 60), lang),
      }),
    )
  lines.push(
    '',
    t(lang, 'tariff-card-terms', { version: desk.terms.version }),
    pick(desk.terms.text, lang, desk.defaultLanguage),
  )
  return lines.join('\n')
}

/** The refund policy, the compensation for a late answer and the top-ups' refund rule, read before paying. */
export function policyLines(t: Translator, tariff: TariffConfig, lang: string): string[] {
  const p = tariff.breachPolicy
  const late =
    p.kind === 'extend_window'
      ? t(lang, 'tariff-card-late-extend', { hours: p.hours })
      : p.kind === 'extra_appeal'
        ? t(lang, 'tariff-card-late-extra')
        : t(lang, 'tariff-card-late-none')
  // Top-ups' refund rule (src/payments/topup-refund.ts), where the tariff sells them; also with the offer itself.
  return [
    t(lang, `tariff-card-refund-${tariff.refundPolicy}`),
    late,
    ...(tariff.topUps.length > 0 ? [t(lang, 'tariff-card-topups')] : []),
  ]
}

/** For an immediate tariff while the desk is closed: its next opening (the start the client may choose instead). */
export function closedUntil(desk: DeskRuntime, tariff: TariffConfig, now: Date): Date | undefined {
  if (tariff.startMode !== 'immediate') return undefined
  const schedule = deskSchedule(desk)
  return isOpen(schedule, now) ? undefined : nextOpening(schedule, now)
}

/** "Start now" chosen while the desk is closed: the window starts at payment, the SLA clock only at `opens`. */
export function closedWarning(
  t: Translator,
  tariff: TariffConfig,
  lang: string,
  opens: Date,
  zone: Zone,
): string {
  return t(lang, 'warn-desk-closed', {
    opens: formatInstant(opens, zone, lang),
    window: formatHours(Math.round(tariff.windowHours * 60), lang),
  })
}

/** "Start when the desk opens" chosen: the window counts from the opening. */
export function openingStartText(
  t: Translator,
  order: { window_minutes: number; slot_start: Date | null },
  lang: string,
  zone: Zone,
): string {
  const at = order.slot_start!
  return t(lang, 'order-start-at-opening', {
    at: formatInstant(at, zone, lang),
    end: formatInstant(new Date(at.getTime() + order.window_minutes * 60_000), zone, lang),
    window: formatHours(order.window_minutes, lang),
  })
}

/** Telegram's limits for a Stars invoice: title 1-32, description 1-255 characters. */
export function invoiceTexts(
  t: Translator,
  order: {
    title: string
    window_minutes: number
    appeals: number
    terms_version: string
    start_mode: string
    slot_start: Date | null
  },
  lang: string,
  zone: Zone,
): { title: string; description: string } {
  const title = cut(order.title, INVOICE_TITLE_MAX, { ellipsis: '…' })
  // An immediate tariff whose window starts at the desk's opening says so, with the opening.
  const atOpening = order.start_mode === 'immediate' && order.slot_start
  const description = t(
    lang,
    atOpening ? 'invoice-description-at-opening' : `invoice-description-${order.start_mode}`,
    {
      window: formatHours(order.window_minutes, lang),
      appeals: order.appeals,
      terms: order.terms_version,
      ...(atOpening ? { at: formatInstant(order.slot_start!, zone, lang) } : {}),
    },
  )
  return { title, description: cut(description, INVOICE_DESCRIPTION_MAX, { ellipsis: '…' }) }
}
