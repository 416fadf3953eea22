import { plan as planSchema } from '../config/plan.schema'
import { type Language, type PlanConfig, type TariffConfig, tariffSchema } from '../config/schema'
import type { Edit } from './edit'
import { SettingsInvalid, type SettingsIssue } from './settings'

/**
 * A new tariff or plan (issue 24): the fields the chat's /settings asks for step by step (src/bot/features/settings
 * /ask.ts) and the dashboard's forms send (src/dashboard/dashboard.settings.ts), checked and added here for both.
 * Each field is checked with its own schema first, so a refusal names the field; the rest of the item takes the
 * schema's defaults. Pure functions of the document: no I/O.
 */
export const TARIFF_STEPS = [
  'code',
  'title',
  'priceStars',
  'windowHours',
  'appeals',
  'slaBusinessHours',
] as const
export const PLAN_STEPS = ['code', 'title', 'priceStars', 'questions', 'slaBusinessHours'] as const
export type Step = (typeof TARIFF_STEPS)[number] | (typeof PLAN_STEPS)[number]
export type Kind = 'tariff' | 'plan'
export type NewFields = Partial<Record<Step, unknown>>

const MAX_TITLE = 100

/** One field's value checked with its schema: the reason it is refused, or undefined. */
export function checkStep(kind: Kind, step: Step, value: unknown): string | undefined {
  if (step === 'title') {
    const s = typeof value === 'string' ? value.trim() : ''
    return s && [...s].length <= MAX_TITLE ? undefined : `expected 1 to ${MAX_TITLE} characters`
  }
  const shape = (kind === 'tariff' ? tariffSchema.shape : planSchema.shape) as Record<
    string,
    { safeParse(v: unknown): { success: boolean; error?: { issues: { message: string }[] } } }
  >
  const r = shape[step]!.safeParse(value)
  return r.success ? undefined : (r.error?.issues[0]?.message ?? 'invalid')
}

/** A typed answer to one step (the chat): its value, or the reason it is refused. */
export function readStep(
  kind: Kind,
  step: Step,
  text: string,
): { ok: true; value: string | number } | { ok: false; reason: string } {
  const s = text.trim()
  let value: string | number = s
  if (step !== 'code' && step !== 'title') {
    const n = s.replace(',', '.')
    if (!/^\d+(\.\d+)?$/.test(n)) return { ok: false, reason: 'expected a number' }
    value = Number(n)
  }
  const reason = checkStep(kind, step, value)
  return reason ? { ok: false, reason } : { ok: true, value }
}

/** Every field of a new item checked (the dashboard's form): the issues, each naming its field. */
export function checkNew(kind: Kind, fields: NewFields): SettingsIssue[] {
  const issues: SettingsIssue[] = []
  for (const step of kind === 'tariff' ? TARIFF_STEPS : PLAN_STEPS) {
    const reason = checkStep(
      kind,
      step,
      typeof fields[step] === 'string' ? (fields[step] as string).trim() : fields[step],
    )
    if (reason) issues.push({ path: step, message: reason })
  }
  return issues
}

function titled(doc: { defaultLanguage: Language }, lang: Language, title: unknown) {
  const name = String(title).trim()
  return { [doc.defaultLanguage]: name, [lang]: name }
}

function refuse(
  kind: Kind,
  r: { success: boolean; error?: { issues: { path: PropertyKey[]; message: string }[] } },
): never {
  throw new SettingsInvalid(
    (r.error?.issues ?? [{ path: [kind], message: 'invalid' }]).map((i) => ({
      path: String(i.path[0] ?? kind),
      message: i.message,
    })),
  )
}

/**
 * Adds a tariff (title and description in the desk's language and the editor's); its code must be new. A code
 * already used is refused naming `code`.
 */
export function addTariff(fields: NewFields, startMode: 'immediate' | 'on_request', lang: Language): Edit {
  return (doc) => {
    const issues = checkNew('tariff', fields)
    if (issues.length) throw new SettingsInvalid(issues)
    const code = String(fields.code).trim()
    if (doc.tariffs.some((x) => x.code === code))
      throw new SettingsInvalid([{ path: 'code', message: 'already used' }])
    const names = titled(doc, lang, fields.title)
    const r = tariffSchema.safeParse({
      code,
      title: names,
      description: names,
      priceStars: fields.priceStars,
      windowHours: fields.windowHours,
      appeals: fields.appeals,
      slaBusinessHours: fields.slaBusinessHours,
      startMode,
    })
    if (!r.success) refuse('tariff', r)
    doc.tariffs.push(r.data as TariffConfig)
  }
}

/**
 * Adds a plan: its terms start as the desk's terms text under a version of its own (`<code>-<settings version>`,
 * edited later like any terms); the rest takes the schema's defaults (attachments and transcripts included, no
 * carry-over, a refund keeps what was used). A code already used is refused naming `code`.
 */
export function addPlan(fields: NewFields, lang: Language, version: number): Edit {
  return (doc) => {
    const issues = checkNew('plan', fields)
    if (issues.length) throw new SettingsInvalid(issues)
    const code = String(fields.code).trim()
    if (doc.plans.some((x) => x.code === code))
      throw new SettingsInvalid([{ path: 'code', message: 'already used' }])
    const names = titled(doc, lang, fields.title)
    const r = planSchema.safeParse({
      code,
      title: names,
      description: names,
      priceStars: fields.priceStars,
      questions: fields.questions,
      slaBusinessHours: fields.slaBusinessHours,
      terms: { version: `${code}-${version}`, text: doc.terms.text },
    })
    if (!r.success) refuse('plan', r)
    doc.plans.push(r.data as PlanConfig)
  }
}
