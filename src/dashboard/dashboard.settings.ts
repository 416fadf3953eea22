import { z } from 'zod'
import type { DeskConfig, Language } from '../config/schema'
import type { Deps } from '../deps'
import { addPlan, addTariff, checkNew, type NewFields } from '../settings/create'
import { type Edit, editDesk, type GuardedOutcome } from '../settings/edit'
import {
  currentValue,
  editFor,
  issueField,
  PLAN_FIELDS,
  parseAnswer,
  RULE_FIELDS,
  TARIFF_FIELDS,
  type Target,
} from '../settings/fields'
import { deletePlan as deletePlanGuarded } from '../settings/removals'
import { type DeskSettings, readDesk } from '../settings/settings'
import { deepLink } from '../setup/codes'
import { createInvite, MAX_USES } from '../setup/invites'
import { changeStaff, listStaff } from '../setup/staff-admin'
import { isDeskAdmin, isOwner } from '../setup/staff-doc'
import { WEEKDAYS } from '../time/business-time'
import type { Viewer } from './access'
import { DashboardError } from './dashboard.service'
import type { FieldTargetDto, InviteDto, RefusalDto, SettingsAnswerDto, SettingsDto } from './settings.model'

/**
 * The dashboard's settings pages (issue 24, part 5: "the same settings pages for those who have it"): the owner and
 * admins edit tariffs and plans (every field the chat edits, create, pause, delete), hours, texts, anti-flood, staff
 * and their days off. Nothing here writes on its own: every change goes through the services the chat's /settings,
 * /staff and /invite use (src/settings/edit.ts editDesk with the version the page was drawn from,
 * src/settings/fields.ts to read a typed value, src/settings/create.ts for a new tariff or plan,
 * src/settings/removals.ts to delete a plan, src/setup/staff-admin.ts, src/setup/invites.ts), so it is validated by
 * the desk's schema, version-checked, audited (source `dashboard`) and announced to every process the same way.
 * Experts get 403 for every settings call, reads included.
 */

/** An answer with its own status (409 and 400 carry a body the page shows: the current value, the fields). */
export class SettingsAnswer {
  constructor(
    readonly status: number,
    readonly body: SettingsAnswerDto | InviteDto,
  ) {}
}

const version = z.number().int().positive()
const code = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,31}$/)
const lang = z.enum(['ru', 'en'])
const day = z.enum(WEEKDAYS as unknown as [string, ...string[]])
const isoDay = z.string().regex(/^\d{4}-\d{2}-\d{2}$/)

const target = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('tariff'), code, field: z.enum(TARIFF_FIELDS) }),
  z.object({ kind: z.literal('plan'), code, field: z.enum(PLAN_FIELDS) }),
  z.object({ kind: z.literal('antiFlood') }),
  z.object({ kind: z.literal('rule'), field: z.enum(RULE_FIELDS) }),
  z.object({ kind: z.literal('daysOff'), userId: z.number().int().positive() }),
  z.object({ kind: z.literal('weekday'), day }),
  z.object({ kind: z.literal('holiday') }),
  z.object({ kind: z.literal('extra') }),
  z.object({ kind: z.literal('text'), which: z.enum(['terms', 'privacy']), lang }),
])

export const fieldBody = z.object({ version, target, value: z.string().max(4100) })
export const pauseBody = z.object({ version, paused: z.boolean() })
export const versionBody = z.object({ version })
export const zoneBody = z.object({ version, zone: z.string().max(64) })
export const dateBody = z.object({ version, date: isoDay })
export const staffBody = z.object({ version, action: z.enum(['admin', 'expert', 'remove']) })
export const inviteBody = z.object({ role: z.enum(['expert', 'admin']), uses: z.number().int() })
/** A new tariff or plan: the fields the chat's step-by-step asks for (checked in src/settings/create.ts). */
const newFields = {
  version,
  code: z.string().max(64),
  title: z.string().max(200),
  // Checked by the item's schema, so a wrong one is refused by its name.
  priceStars: z.unknown(),
  slaBusinessHours: z.unknown(),
}
export const tariffBody = z.object({
  ...newFields,
  windowHours: z.unknown(),
  appeals: z.unknown(),
  startMode: z.enum(['immediate', 'on_request']),
})
export const planBody = z.object({ ...newFields, questions: z.unknown() })

function adminOf(viewer: Viewer): void {
  if (!isDeskAdmin(viewer.desk, viewer.userId)) throw new DashboardError(403, 'admins-only')
}

async function current(deps: Deps, viewer: Viewer): Promise<DeskSettings> {
  const s = await readDesk(deps.db, viewer.desk.botId)
  if (!s) throw new DashboardError(404, 'not-found')
  return s
}

async function dto(deps: Deps, viewer: Viewer, s: DeskSettings): Promise<SettingsDto> {
  const doc = s.doc
  // Each field as the chat shows it when asking for it: the same words are typed back (src/settings/fields.ts).
  const typed = <F extends string>(fields: readonly F[], target: (f: F) => Target) =>
    Object.fromEntries(fields.map((f) => [f, currentValue(target(f), doc, viewer.lang) ?? ''])) as Record<
      F,
      string
    >
  const staff = await listStaff(deps.db, viewer.desk)
  // The zones the desk offers (rules.zones), as the chat's zone picker shows them, the desk's own included.
  const offered = doc.rules.zones
  const zones = offered.includes(doc.schedule.timezone) ? [...offered] : [doc.schedule.timezone, ...offered]
  return {
    version: s.version,
    owner: isOwner(doc, viewer.userId),
    tariffs: doc.tariffs.map((t) => ({
      code: t.code,
      title: t.title,
      priceStars: t.priceStars,
      windowHours: t.windowHours,
      appeals: t.appeals,
      slaBusinessHours: t.slaBusinessHours,
      startMode: t.startMode,
      paused: t.paused,
      fields: typed(TARIFF_FIELDS, (field) => ({ kind: 'tariff', code: t.code, field })),
    })),
    plans: doc.plans.map((p) => ({
      code: p.code,
      title: p.title,
      priceStars: p.priceStars,
      questions: p.questions,
      paused: p.paused ?? false,
      fields: typed(PLAN_FIELDS, (field) => ({ kind: 'plan', code: p.code, field })),
    })),
    antiFlood: currentValue({ kind: 'antiFlood' }, doc, viewer.lang) ?? '-',
    rules: typed(RULE_FIELDS, (field) => ({ kind: 'rule', field })),
    schedule: {
      timezone: doc.schedule.timezone,
      weekly: doc.schedule.weekly,
      holidays: doc.schedule.holidays,
      extraWorkingDays: doc.schedule.extraWorkingDays,
    },
    zones,
    texts: { terms: doc.terms.text, termsVersion: doc.terms.version, privacy: doc.privacy },
    staff: staff.map((x) => ({
      id: x.userId,
      name: x.name,
      role: x.role,
      daysOff: currentValue({ kind: 'daysOff', userId: x.userId }, doc, viewer.lang) ?? '-',
    })),
  }
}

export async function readSettings(deps: Deps, viewer: Viewer): Promise<SettingsDto> {
  adminOf(viewer)
  return dto(deps, viewer, await current(deps, viewer))
}

/** An outcome of editDesk as the page's answer: 200, or 409 / 400 / 403 / 404 with what the page shows. */
async function answer(deps: Deps, viewer: Viewer, out: GuardedOutcome, t?: Target): Promise<SettingsAnswer> {
  switch (out.status) {
    case 'done':
      return new SettingsAnswer(200, { status: 'done', settings: await dto(deps, viewer, out.settings) })
    case 'conflict': {
      const now = t && currentValue(t, out.settings.doc, viewer.lang)
      return new SettingsAnswer(409, {
        error: 'conflict',
        settings: await dto(deps, viewer, out.settings),
        ...(now !== undefined ? { current: now } : {}),
      })
    }
    case 'invalid':
      return new SettingsAnswer(400, {
        error: 'invalid',
        issues: out.issues.map((i) => ({ field: issueField(i.path), path: i.path, message: i.message })),
      })
    case 'forbidden':
      return new SettingsAnswer(403, { error: 'forbidden' })
    case 'gone':
      return new SettingsAnswer(404, { error: 'gone' })
    case 'refused': {
      // What is running forbids it (a plan with current subscribers): nothing written, the numbers said.
      const reason = REFUSALS[out.key]
      if (!reason) throw new Error(`no dashboard reason for the refusal ${out.key}`)
      const now = await current(deps, viewer)
      return new SettingsAnswer(409, {
        error: 'refused',
        reason,
        ...(typeof out.params.count === 'number' ? { count: out.params.count } : {}),
        settings: await dto(deps, viewer, now),
      })
    }
  }
}

/** The guards' refusals (src/settings/removals.ts, locale keys for the chat) as the page's reasons. */
const REFUSALS: Record<string, RefusalDto> = { 'st-plan-delete-live': 'live-subscribers' }

function edit(deps: Deps, viewer: Viewer, v: number, change: Edit, t?: Target): Promise<SettingsAnswer> {
  adminOf(viewer)
  return editDesk(deps.db, viewer.desk.botId, viewer.userId, v, change, 'dashboard').then((out) =>
    answer(deps, viewer, out, t),
  )
}

/** One field typed in the page, read exactly as the chat reads a typed answer (src/settings/fields.ts). */
export function editField(deps: Deps, viewer: Viewer, b: z.infer<typeof fieldBody>): Promise<SettingsAnswer> {
  adminOf(viewer)
  const t = b.target as FieldTargetDto as Target
  const parsed = parseAnswer(t, b.value)
  if (!parsed.ok)
    return Promise.resolve(
      new SettingsAnswer(400, {
        error: 'invalid',
        issues: [{ field: parsed.field, message: parsed.reason }],
      }),
    )
  return edit(deps, viewer, b.version, editFor(t, parsed, viewer.lang as Language), t)
}

function item(doc: DeskConfig, kind: 'tariffs' | 'plans', c: string) {
  return (doc[kind] as { code: string; paused?: boolean | undefined }[]).find((x) => x.code === c)
}

export function pause(
  deps: Deps,
  viewer: Viewer,
  kind: 'tariffs' | 'plans',
  c: string,
  b: z.infer<typeof pauseBody>,
): Promise<SettingsAnswer> {
  return edit(deps, viewer, b.version, (doc) => {
    const x = item(doc, kind, c)
    if (!x) return 'gone'
    x.paused = b.paused
  })
}

/** Deleting a tariff: no longer sold, its open invoices refused at pre-checkout; paid orders keep their snapshot. */
export function deleteTariff(deps: Deps, viewer: Viewer, c: string, v: number): Promise<SettingsAnswer> {
  return edit(deps, viewer, v, (doc) => {
    const i = doc.tariffs.findIndex((y) => y.code === c)
    if (i < 0) return 'gone'
    doc.tariffs.splice(i, 1)
  })
}

/**
 * Deleting a plan (src/settings/removals.ts, as the chat): refused (409 `refused`, with their number) while it has
 * current subscribers, for whom Pause is the way; else it is no longer offered.
 */
export async function deletePlan(deps: Deps, viewer: Viewer, c: string, v: number): Promise<SettingsAnswer> {
  adminOf(viewer)
  const out = await deletePlanGuarded(deps.db, viewer.desk.botId, viewer.userId, v, c, 'dashboard')
  return answer(deps, viewer, out)
}

/** The new-item forms: every field checked first (400 naming each refused one), then added as the chat adds it. */
function create(
  deps: Deps,
  viewer: Viewer,
  kind: 'tariff' | 'plan',
  b: NewFields & { version: number },
  add: Edit,
) {
  adminOf(viewer)
  const issues = checkNew(kind, b)
  if (issues.length)
    return Promise.resolve(
      new SettingsAnswer(400, {
        error: 'invalid',
        issues: issues.map((i) => ({ field: i.path, message: i.message })),
      }),
    )
  return edit(deps, viewer, b.version, add)
}

export function createTariff(
  deps: Deps,
  viewer: Viewer,
  b: z.infer<typeof tariffBody>,
): Promise<SettingsAnswer> {
  return create(deps, viewer, 'tariff', b, addTariff(b, b.startMode, viewer.lang as Language))
}

/** A new plan: bought at once by clients (its card in /plan and /start), terms as the desk's (src/settings/create.ts). */
export function createPlan(deps: Deps, viewer: Viewer, b: z.infer<typeof planBody>): Promise<SettingsAnswer> {
  return create(deps, viewer, 'plan', b, addPlan(b, viewer.lang as Language, b.version))
}

export function setZone(deps: Deps, viewer: Viewer, b: z.infer<typeof zoneBody>): Promise<SettingsAnswer> {
  adminOf(viewer)
  if (!viewer.desk.rules.zones.includes(b.zone))
    return Promise.resolve(
      new SettingsAnswer(400, {
        error: 'invalid',
        issues: [{ field: 'timezone', message: 'not one of the offered zones' }],
      }),
    )
  return edit(deps, viewer, b.version, (doc) => {
    doc.schedule.timezone = b.zone
  })
}

/** Removes a holiday or an extra working day (the chat's "x" buttons). */
export function removeDay(
  deps: Deps,
  viewer: Viewer,
  which: 'holidays' | 'extra',
  b: z.infer<typeof dateBody>,
): Promise<SettingsAnswer> {
  return edit(deps, viewer, b.version, (doc) => {
    if (which === 'holidays') doc.schedule.holidays = doc.schedule.holidays.filter((d) => d !== b.date)
    else delete doc.schedule.extraWorkingDays[b.date]
  })
}

/** A role change or a removal (owner only, as /staff): changeStaff, with the version the page showed. */
export async function staffAction(
  deps: Deps,
  viewer: Viewer,
  userId: number,
  b: z.infer<typeof staffBody>,
): Promise<SettingsAnswer> {
  adminOf(viewer)
  const botId = viewer.desk.botId
  const out = await changeStaff(deps.db, botId, viewer.userId, userId, b.action, {
    source: 'dashboard',
    expectedVersion: b.version,
  })
  const now = await current(deps, viewer)
  if (out.ok) return new SettingsAnswer(200, { status: 'done', settings: await dto(deps, viewer, now) })
  if (out.reason === 'conflict')
    return new SettingsAnswer(409, { error: 'conflict', settings: await dto(deps, viewer, now) })
  if (out.reason === 'owner-only') return new SettingsAnswer(403, { error: 'forbidden' })
  if (out.reason === 'not-staff') return new SettingsAnswer(404, { error: 'gone' })
  return new SettingsAnswer(400, {
    error: 'invalid',
    issues: [
      { field: 'staff', message: out.reason === 'is-owner' ? 'the owner' : (out.detail ?? 'invalid') },
    ],
  })
}

/** The bot's username for invite links, asked of Telegram once per process (it does not change while running). */
const usernames = new Map<number, string>()
async function botUsername(deps: Deps, botId: number): Promise<string> {
  const known = usernames.get(botId)
  if (known) return known
  const me = await deps.api(botId).getMe()
  usernames.set(botId, me.username)
  return me.username
}

/**
 * An invite link (as /invite): the owner any role, an admin experts only; the link is shown in the page and, as
 * with /invite, sent to the inviter's private chat.
 */
export async function invite(
  deps: Deps,
  viewer: Viewer,
  b: z.infer<typeof inviteBody>,
): Promise<SettingsAnswer> {
  adminOf(viewer)
  const username = await botUsername(deps, viewer.desk.botId)
  const out = await createInvite(
    deps,
    viewer.desk,
    viewer.userId,
    b.role,
    b.uses,
    viewer.lang,
    undefined,
    username,
  )
  if (out.ok)
    return new SettingsAnswer(200, {
      link: `https://${deepLink(username, out.code)}`,
      role: b.role,
      uses: out.uses,
      expiresAt: out.expiresAt.toISOString(),
    })
  if (out.reason === 'uses')
    return new SettingsAnswer(400, {
      error: 'invalid',
      issues: [{ field: 'uses', message: `expected a whole number from 1 to ${MAX_USES}` }],
    })
  return new SettingsAnswer(403, { error: 'forbidden' })
}
