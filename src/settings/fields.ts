import { DateTime } from 'luxon'
import { plan as planSchema } from '../config/plan.schema'
import { interval as intervalSchema, isoDate } from '../config/primitives'
import { RETENTION_FIELDS, RULE_FIELD_SCHEMAS, type RuleField } from '../config/rules.schema'
import { type DeskConfig, deskSchema, type Language, tariffSchema } from '../config/schema'
import { WEEKDAYS } from '../time/business-time'
import type { Edit } from './edit'

/**
 * The single fields /settings edits by typing (src/bot/features/settings): what a target names, its current value
 * as text, how an answer is read (each checked with its field's own schema first, so the refusal names the field
 * before the whole desk is validated), and the edit it makes. Pure functions of the document: no I/O.
 */
export type Weekday = (typeof WEEKDAYS)[number]
/** A tariff's fields edited by typing (the callback data names slaBusinessHours `sla`, to stay under 64 bytes). */
export const TARIFF_FIELDS = [
  'priceStars',
  'title',
  'appeals',
  'windowHours',
  'slaBusinessHours',
  'dailyCapacity',
  'slotCapacity',
  'slots',
  'breachPolicy',
  'refundPolicy',
  'topUps',
] as const
export const PLAN_FIELDS = [
  'priceStars',
  'title',
  'questions',
  'slaBusinessHours',
  'refundPolicy',
  'carryOver',
] as const
/** The desk's rules (src/config/rules.schema.ts) edited by typing, in the order the Desk rules screen shows them (the
 * dashboard's settings page too: it draws them in the order the settings DTO sends them). */
export const RULE_FIELDS = [
  'disputeAnswerHours',
  'unpaidOrderHours',
  'ratingEditDays',
  'lowRating',
  'zones',
  'languages',
  'stallSeconds',
  'deadLetterMinutes',
  ...RETENTION_FIELDS,
] as const satisfies readonly RuleField[]
export type TariffField = (typeof TARIFF_FIELDS)[number]
export type PlanField = (typeof PLAN_FIELDS)[number]
export type Target =
  | { kind: 'tariff'; code: string; field: TariffField }
  | { kind: 'plan'; code: string; field: PlanField }
  | { kind: 'antiFlood' }
  | { kind: 'rule'; field: RuleField }
  | { kind: 'daysOff'; userId: number }
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
  if (t.kind === 'tariff' || t.kind === 'plan' || t.kind === 'rule') return t.field
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
    const typed = typedValue(t.field, text)
    if (typed === undefined)
      return num(text, field, !['windowHours', 'slaBusinessHours'].includes(t.field), schema)
    if (!typed.ok) return { ok: false, field, reason: typed.reason }
    const r = schema.safeParse(typed.value)
    return r.success
      ? { ok: true, value: typed.value as never }
      : { ok: false, field, reason: r.error.issues[0]?.message ?? 'invalid' }
  }
  if (t.kind === 'antiFlood') return num(text, field, true, antiFloodSchema)
  if (t.kind === 'rule') return rule(t.field, text)
  if (t.kind === 'daysOff') return daysOff(text, field)
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

/** A rule: a whole number, or a list (zones as IANA names, languages as codes), each with its schema's bounds. */
function rule(field: RuleField, text: string): Parsed {
  const schema = RULE_FIELD_SCHEMAS[field] as { safeParse(v: unknown): any }
  if (field !== 'zones' && field !== 'languages') return num(text, field, true, schema)
  const list = text
    .split(/[\s,;]+/)
    .filter(Boolean)
    .map((x) => (field === 'languages' ? x.toLowerCase() : x))
  const r = schema.safeParse(list)
  if (r.success) return { ok: true, value: list }
  const issue = r.error.issues[0]
  const at = typeof issue?.path[0] === 'number' ? `"${list[issue.path[0]]}": ` : ''
  const reason =
    field === 'languages' && issue?.code === 'invalid_value'
      ? 'expected "en" or "ru"'
      : (issue?.message ?? 'invalid')
  return { ok: false, field, reason: at + reason }
}

/** The desk's anti-flood limit, with the desk schema's own bounds. */
const antiFloodSchema = deskSchema.shape.antiFlood.unwrap().shape.perMinute

/** The non-numeric fields of a tariff or plan, read from words (undefined: a number field). */
function typedValue(
  field: string,
  text: string,
): { ok: true; value: unknown } | { ok: false; reason: string } | undefined {
  const s = text.trim()
  const none = s === '-' || s === '—'
  if (field === 'refundPolicy') return { ok: true, value: s.toLowerCase().replace(/[\s-]+/g, '_') }
  // A plan's unused questions at renewal: "none" (or "-", "0"), or at most that many move to the next period.
  if (field === 'carryOver') {
    if (none || /^(none|0)$/i.test(s)) return { ok: true, value: 'none' }
    if (!/^\d+$/.test(s)) return { ok: false, reason: 'expected "none" or a whole number of questions' }
    return { ok: true, value: { capped: Number(s) } }
  }
  if (field === 'breachPolicy') {
    const m = /^(none|extra|extend)(?:\s+(\d+(?:[.,]\d+)?))?$/i.exec(s)
    if (!m) return { ok: false, reason: 'expected "none", "extra" or "extend <hours>"' }
    const kind = m[1]!.toLowerCase()
    if (kind === 'extend') {
      if (!m[2]) return { ok: false, reason: 'expected "extend <hours>", e.g. "extend 2"' }
      return { ok: true, value: { kind: 'extend_window', hours: Number(m[2].replace(',', '.')) } }
    }
    return m[2]
      ? { ok: false, reason: `"${s}": no hours after "${kind}"` }
      : { ok: true, value: { kind: kind === 'extra' ? 'extra_appeal' : 'none' } }
  }
  if (field === 'slots') {
    if (none) return { ok: true, value: [] }
    const parts = s.split(/[\s,;]+/).filter(Boolean)
    for (const p of parts)
      if (!/(Z|[+-]\d\d:?\d\d)$/.test(p) || !DateTime.fromISO(p, { setZone: true }).isValid)
        return { ok: false, reason: `"${p}": expected a start with its offset, e.g. 2026-12-05T10:00+01:00` }
    return { ok: true, value: parts }
  }
  if (field === 'topUps') {
    if (none) return { ok: true, value: [] }
    const list: unknown[] = []
    for (const p of s
      .split(/[,;\n]+/)
      .map((x) => x.trim())
      .filter(Boolean)) {
      const m = /^(\d+)\s*(questions?|hours?)\s+(?:for\s+)?(\d+)\s*(?:⭐|stars?)?$/i.exec(p)
      if (!m) return { ok: false, reason: `"${p}": expected "<n> questions <price>" or "<n> hours <price>"` }
      const n = Number(m[1])
      list.push(
        m[2]!.toLowerCase().startsWith('q')
          ? { kind: 'questions', questions: n, priceStars: Number(m[3]) }
          : { kind: 'hours', hours: n, priceStars: Number(m[3]) },
      )
    }
    return { ok: true, value: list }
  }
  return undefined
}

/** Weekdays ("sat") and dates ("2026-12-31") with no new assignments; "-" for none. */
function daysOff(text: string, field: string): Parsed {
  const s = text.trim().toLowerCase()
  if (s === '-' || s === '—') return { ok: true, value: [] }
  const parts = s.split(/[\s,;]+/).filter(Boolean)
  for (const p of parts) {
    if ((WEEKDAYS as readonly string[]).includes(p)) continue
    if (!date(p, field).ok)
      return { ok: false, field, reason: `"${p}": expected a weekday (mon…sun) or a date YYYY-MM-DD` }
  }
  return { ok: true, value: [...new Set(parts)] }
}

/** The edit an accepted answer makes; `lang` is the editor's language (a title is set in it). */
export function editFor(t: Target, value: Parsed & { ok: true }, lang: Language): Edit {
  const v = value.value
  return (doc) => {
    if (t.kind === 'tariff' || t.kind === 'plan') {
      const item = (t.kind === 'tariff' ? doc.tariffs : doc.plans).find((x) => x.code === t.code)
      if (!item) return 'gone'
      if (t.field === 'title') item.title[lang] = v as string
      else (item as unknown as Record<string, unknown>)[t.field] = v
      return
    }
    if (t.kind === 'antiFlood') {
      doc.antiFlood = { perMinute: v as number }
      return
    }
    if (t.kind === 'rule') {
      if ((RETENTION_FIELDS as string[]).includes(t.field))
        (doc.rules.retention as Record<string, unknown>)[t.field] = v
      else (doc.rules as Record<string, unknown>)[t.field] = v
      return
    }
    if (t.kind === 'daysOff') {
      const staff = [...doc.staff.admins, ...doc.staff.experts]
      if (!staff.includes(t.userId)) return 'gone'
      const list = v as string[]
      if (list.length) doc.expertSettings.daysOff[String(t.userId)] = list
      else delete doc.expertSettings.daysOff[String(t.userId)]
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
    return shown((item as unknown as Record<string, unknown>)[t.field])
  }
  if (t.kind === 'antiFlood') return doc.antiFlood ? String(doc.antiFlood.perMinute) : '-'
  if (t.kind === 'rule') return shown(ruleValue(doc, t.field))
  if (t.kind === 'daysOff') return (doc.expertSettings.daysOff[String(t.userId)] ?? []).join(', ') || '-'
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

/** A field's value in the words an answer is typed in (so the current value can be sent back edited). */
function shown(v: unknown): string {
  if (Array.isArray(v)) {
    if (v.length === 0) return '-'
    return v
      .map((x) =>
        typeof x === 'string'
          ? x
          : x.kind === 'questions'
            ? `${x.questions} question${x.questions === 1 ? '' : 's'} ${x.priceStars}`
            : `${x.hours} hour${x.hours === 1 ? '' : 's'} ${x.priceStars}`,
      )
      .join(', ')
  }
  if (v && typeof v === 'object' && 'capped' in v) return String((v as { capped: number }).capped)
  if (v && typeof v === 'object') {
    const b = v as { kind: string; hours?: number }
    return b.kind === 'extend_window' ? `extend ${b.hours}` : b.kind === 'extra_appeal' ? 'extra' : 'none'
  }
  return String(v)
}

/** The field a schema issue names (`tariffs[3].priceStars` -> `priceStars`), for the localized refusal. */
export function issueField(path: string): string {
  const names = path.match(/[A-Za-z]+/g) ?? []
  return names[names.length - 1] ?? path
}

/** A rule's value in a document. */
export function ruleValue(doc: DeskConfig, field: RuleField): number | string[] {
  return (RETENTION_FIELDS as string[]).includes(field)
    ? doc.rules.retention[field as keyof DeskConfig['rules']['retention']]
    : (doc.rules[field as Exclude<RuleField, keyof DeskConfig['rules']['retention']>] as number | string[])
}
