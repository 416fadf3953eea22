import type { ClientDto, MeDto } from '../../src/dashboard/dashboard.model'
import type { Lang, T } from './i18n'

type Key = Parameters<T>[0]

/** Instants in the desk's zone (the server sends UTC), numbers and names as staff read them. */

const locale = (lang: Lang) => (lang === 'ru' ? 'ru-RU' : 'en-GB')

export function formatAt(iso: string | null, zone: string, lang: Lang): string {
  if (!iso) return '—'
  return new Intl.DateTimeFormat(locale(lang), {
    timeZone: zone,
    day: 'numeric',
    month: 'short',
    hour: '2-digit',
    minute: '2-digit',
  }).format(new Date(iso))
}

/** A desk-local calendar day (YYYY-MM-DD) as "2 Oct". */
export function formatDay(day: string, lang: Lang): string {
  const [y, m, d] = day.split('-').map(Number)
  return new Intl.DateTimeFormat(locale(lang), { timeZone: 'UTC', day: 'numeric', month: 'short' }).format(
    new Date(Date.UTC(y!, m! - 1, d!)),
  )
}

export function formatNumber(n: number, lang: Lang, digits = 0): string {
  return new Intl.NumberFormat(locale(lang), { maximumFractionDigits: digits }).format(n)
}

export function formatMoney(minor: number, llm: MeDto['llm'], lang: Lang): string {
  const major = minor / llm.minorUnitsPerMajor
  try {
    return new Intl.NumberFormat(locale(lang), { style: 'currency', currency: llm.currency }).format(major)
  } catch {
    return `${formatNumber(major, lang, 2)} ${llm.currency}`
  }
}

export function clientName(c: ClientDto): string {
  const name = [c.firstName, c.lastName].filter(Boolean).join(' ')
  return [name || `id ${c.id}`, c.username ? `@${c.username}` : ''].filter(Boolean).join(' ')
}

/** A staff member by name ("Ada (you)" for the viewer); by role and id only when the desk knows no name. */
export function staffName(me: MeDto, t: T, id: number | null): string {
  if (id === null) return '—'
  const person = me.staff.find((s) => s.id === id)
  const role = person?.role
  const name =
    person?.name ?? t(role === 'admin' ? 'who-admin' : role === 'expert' ? 'who-expert' : 'who-other', { id })
  return id === me.user.id ? t('who-you', { name }) : name
}

/** The CLDR plural form of n in the page's language (Russian: one, few, many; English: one, other). */
export function pluralForm(n: number, lang: Lang): 'one' | 'few' | 'many' | 'other' {
  const form = new Intl.PluralRules(lang).select(n)
  return form === 'one' || form === 'few' || form === 'many' ? form : 'other'
}

/** Business time in words with plural forms: "4 business hours", "1 рабочий час 30 минут". */
export function formatBusinessTime(minutes: number, lang: Lang, t: T): string {
  const m = Math.max(0, Math.round(minutes))
  const h = Math.floor(m / 60)
  const rest = m % 60
  const parts: string[] = []
  if (h > 0) parts.push(t(`business-hours-${pluralForm(h, lang)}` as Key, { n: h }))
  if (rest > 0 || h === 0)
    parts.push(
      t((h > 0 ? `minutes-${pluralForm(rest, lang)}` : `business-minutes-${pluralForm(rest, lang)}`) as Key, {
        n: rest,
      }),
    )
  return parts.join(' ')
}

/** Minutes as "2 h 30 min" / "2 ч 30 мин" (abbreviations: no plural forms), like the bot's formatDuration. */
export function formatMinutes(minutes: number, lang: string): string {
  const m = Math.max(0, Math.round(minutes))
  const [h, min] = lang === 'ru' ? ['ч', 'мин'] : ['h', 'min']
  const parts = [m >= 60 ? `${Math.floor(m / 60)} ${h}` : '', m % 60 || m < 60 ? `${m % 60} ${min}` : '']
  return parts.filter(Boolean).join(' ')
}
