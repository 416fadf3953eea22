import { DateTime } from 'luxon'
import { plan as planSchema } from '../config/plan.schema'
import { interval as intervalSchema, isoDate } from '../config/primitives'
import { type DeskConfig, type Language, tariffSchema } from '../config/schema'
import type { WEEKDAYS } from '../time/business-time'
import type { Edit } from './edit'

/**
 * The single fields /settings edits by typing (src/bot/features/settings): what a target names, its current value
 * as text, how an answer is read (each checked with its field's own schema first, so the refusal names the field
 * before the whole desk is validated), and the edit it makes. Pure functions of the document: no I/O.
 */
export type Weekday = (typeof WEEKDAYS)[number]
export type Target =
  | { kind: 'tariff'; code: string; field: 'priceStars' | 'title' | 'appeals' | 'windowHours' }
  | { kind: 'plan'; code: string; field: 'priceStars' | 'title' | 'questions' }
  | { kind: 'weekday'; day: Weekday }
  | { kind: 'holiday' }
  | { kind: 'extra' }
  | { kind: 'text'; which: 'terms' | 'privacy'; lang: Language }

/** A refused answer: the field (a locale key suffix, `st-field-<field>`) and the reason (precise, for admins). */
export interface Refusal {
  field: string
  reason: string
}
export type Parsed = { ok: true; value: string | number | string[] } | ({ ok: false } & Refusal)

export const MAX_TEXT = 4000

export function fieldOf(t: Target): string {
  if (t.kind === 'tariff' || t.kind === 'plan') return t.field
  if (t.kind === 'text') return t.which
  return t.kind
}

function num(text: string, field: string, int: boolean, schema: { safeParse(v: unknown): any }): Parsed {
  const s = text.trim().replace(',', '.')
  if (!(int ? /^\d+$/ : /^\d+(\.\d+)?$/).test(s))
    return { ok: false, field, reason: int ? 'expected a whole number' : 'expected a number' }
  const n = Number(s)
  const r = schema.safeParse(n)
  return r.success
    ? { ok: true, value: n }
    : { ok: false, field, reason: r.error.issues[0]?.message ?? 'invalid' }
}

/** Reads "10:00-18:00, 19:00-21:00" (or "-" for a day off) into intervals. */
function intervals(text: string, field: string): Parsed {
  const s = text.trim()
  if (s === '-' || s === '—') return { ok: true, value: [] }
  const parts = s.split(/[\s,;]+/).filter(Boolean)
  for (const p of parts)
    if (!intervalSchema.safeParse(p).success)
      return { ok: false, field, reason: `"${p}": expected "HH:MM-HH:MM"` }
  return parts.length ? { ok: true, value: parts } : { ok: false, field, reason: 'expected "HH:MM-HH:MM"' }
}

function date(text: string, field: string): Parsed {
  const s = text.trim()
  if (!isoDate.safeParse(s).success || !DateTime.fromISO(s).isValid)
    return { ok: false, field, reason: 'expected a date "YYYY-MM-DD"' }
  return { ok: true, value: s }
}

export function parseAnswer(t: Target, text: string): Parsed {
  const field = fieldOf(t)
  if (t.kind === 'tariff' || t.kind === 'plan') {
    if (t.field === 'title') {
      const s = text.trim()
      return s && [...s].length <= 100
        ? { ok: true, value: s }
        : { ok: false, field, reason: 'expected 1 to 100 characters' }
    }
    const shape = t.kind === 'tariff' ? tariffSchema.shape : planSchema.shape
    const schema = (shape as Record<string, { safeParse(v: unknown): any }>)[t.field]!
    return num(text, field, t.field !== 'windowHours', schema)
  }
  if (t.kind === 'weekday') return intervals(text, field)
  if (t.kind === 'holiday') return date(text, field)
  if (t.kind === 'extra') {
    const [d, ...rest] = text.trim().split(/\s+/)
    const day = date(d ?? '', field)
    if (!day.ok) return day
    const hours = intervals(rest.join(' '), field)
    if (!hours.ok) return hours
    if ((hours.value as string[]).length === 0)
      return { ok: false, field, reason: 'expected hours "HH:MM-HH:MM"' }
    return { ok: true, value: [day.value as string, ...(hours.value as string[])] }
  }
  const s = text.trim()
  return s && [...s].length <= MAX_TEXT
    ? { ok: true, value: s }
    : { ok: false, field, reason: `expected 1 to ${MAX_TEXT} characters` }
}

/** The edit an accepted answer makes; `lang` is the editor's language (a title is set in it). */
export function editFor(t: Target, value: Parsed & { ok: true }, lang: Language): Edit {
  const v = value.value
  return (doc) => {
    if (t.kind === 'tariff' || t.kind === 'plan') {
      const item = (t.kind === 'tariff' ? doc.tariffs : doc.plans).find((x) => x.code === t.code)
      if (!item) return 'gone'
      if (t.field === 'title') item.title[lang] = v as string
      else (item as unknown as Record<string, number>)[t.field] = v as number
      return
    }
    if (t.kind === 'weekday') {
      const list = v as string[]
      if (list.length) doc.schedule.weekly[t.day] = list
      else delete doc.schedule.weekly[t.day]
      return
    }
    if (t.kind === 'holiday') {
      if (!doc.schedule.holidays.includes(v as string))
        doc.schedule.holidays = [...doc.schedule.holidays, v as string].sort()
      return
    }
    if (t.kind === 'extra') {
      const [d, ...hours] = v as string[]
      doc.schedule.extraWorkingDays[d!] = hours
      return
    }
    if (t.which === 'terms') doc.terms.text[t.lang] = v as string
    else doc.privacy[t.lang] = v as string
  }
}

/** The target's value in a document, as text (shown when asking and when someone else changed it meanwhile). */
export function currentValue(t: Target, doc: DeskConfig, lang: Language): string | undefined {
  if (t.kind === 'tariff' || t.kind === 'plan') {
    const item = (t.kind === 'tariff' ? doc.tariffs : doc.plans).find((x) => x.code === t.code)
    if (!item) return undefined
    if (t.field === 'title') return item.title[lang] ?? item.title[doc.defaultLanguage] ?? ''
    return String((item as unknown as Record<string, number>)[t.field])
  }
  if (t.kind === 'weekday') return (doc.schedule.weekly[t.day] ?? []).join(', ') || '-'
  if (t.kind === 'holiday') return doc.schedule.holidays.join(', ') || '-'
  if (t.kind === 'extra')
    return (
      Object.entries(doc.schedule.extraWorkingDays)
        .map(([d, h]) => `${d} ${h.join(', ')}`)
        .join('; ') || '-'
    )
  return (t.which === 'terms' ? doc.terms.text[t.lang] : doc.privacy[t.lang]) ?? '-'
}

/** The field a schema issue names (`tariffs[3].priceStars` -> `priceStars`), for the localized refusal. */
export function issueField(path: string): string {
  const names = path.match(/[A-Za-z]+/g) ?? []
  return names[names.length - 1] ?? path
}
