import { sql, type Transaction } from 'kysely'
import { DateTime } from 'luxon'
import type { z } from 'zod'
import { audit } from '../audit/audit'
import { isAdminRole, isDeskAdmin, roleOn } from '../config/access'
import { formatPath } from '../config/load'
import { type DeskConfig, deskSchema } from '../config/schema'
import type { Database, Db } from '../db/database'
import type { SettingsSource } from './settings.tables'

/**
 * A desk's settings in PostgreSQL (issue 24, README "Configuration", src/settings/README.md): the whole desk
 * document (one `desks[]` entry of the YAML, validated by the same schema) in one row per bot with a version.
 * Every change is one transaction: the row locked, the version checked, the change applied to a copy and
 * validated, the row written with version + 1, the terms versions recorded, an audit row (who, before/after) and a
 * notification at commit to every process (src/settings/cache.ts refreshes their in-memory desks from it).
 */

/** The channel a committed change is announced on; the payload is `<bot id>:<version>`. */
export const SETTINGS_CHANNEL = 'consult_desk_settings'

/** Someone else changed the desk first: `current` is the version now in the database. */
export class SettingsConflict extends Error {
  override name = 'SettingsConflict'
  constructor(readonly current: number) {
    super(`the desk's settings were changed meanwhile (now version ${current})`)
  }
}

export interface SettingsIssue {
  /** The field, as formatZodError names it: `tariffs[0].priceStars`, `schedule.weekly.mon[1]`. */
  path: string
  message: string
}

/** The change was refused; nothing was written. `issues` name each field and what is wrong with it. */
export class SettingsInvalid extends Error {
  override name = 'SettingsInvalid'
  constructor(readonly issues: SettingsIssue[]) {
    super(issues.map((i) => `${i.path}: ${i.message}`).join('\n'))
  }
}

/** The desk has no settings row (never started against this database). */
export class SettingsMissing extends Error {
  override name = 'SettingsMissing'
  constructor(readonly botId: number) {
    super(`no settings for bot ${botId}`)
  }
}

export interface SettingsActor {
  /** The Telegram user who changed it; null for the system (a file import, the seed). */
  userId: number | null
  source: SettingsSource
}

export interface DeskSettings {
  version: number
  doc: DeskConfig
}

/** Edits the copy it is given (and returns nothing), or returns a new document. */
// biome-ignore lint/suspicious/noConfusingVoidType: a mutator that edits the copy returns nothing
export type DeskMutation = (doc: DeskConfig) => DeskConfig | void

/** Fields bound to the running process (the token's variable, the webhook path and dashboard address): start-only. */
const FIXED = ['slug', 'tokenEnv'] as const

/** Zod's issues as fields and messages (unknown keys one per key, as formatZodError does). */
export function settingsIssues(error: z.ZodError): SettingsIssue[] {
  return error.issues.flatMap((i) =>
    i.code === 'unrecognized_keys'
      ? i.keys.map((k) => ({ path: formatPath([...i.path, k]), message: 'unknown key' }))
      : [{ path: formatPath(i.path), message: i.message }],
  )
}

/** Validates a desk document with the YAML's schema (defaults filled in), or throws SettingsInvalid. */
export function validateDesk(doc: unknown): DeskConfig {
  const r = deskSchema.safeParse(doc)
  if (!r.success) throw new SettingsInvalid(settingsIssues(r.error))
  return r.data
}

/** The current settings of a desk, validated with today's schema (defaults of newer fields filled in). */
export async function readDesk(
  db: Db | Transaction<Database>,
  botId: number,
): Promise<DeskSettings | undefined> {
  const row = await db
    .selectFrom('desk_settings')
    .select(['version', 'doc'])
    .where('bot_id', '=', botId)
    .executeTakeFirst()
  return row && { version: row.version, doc: validateDesk(row.doc) }
}

/**
 * The desk's document as committed now, read with a share lock in the caller's transaction: a change of the desk
 * (a demotion, a removal from the staff) committed first is seen, and one not committed yet waits until this
 * transaction ends. A write that must re-check the actor's right asks src/config/access.ts with it (not with the
 * in-memory desk, which follows the row a moment later). Undefined: no row.
 */
export async function lockDeskShared(
  trx: Transaction<Database>,
  botId: number,
): Promise<DeskConfig | undefined> {
  const row = await trx
    .selectFrom('desk_settings')
    .select('doc')
    .where('bot_id', '=', botId)
    .forShare()
    .executeTakeFirst()
  return row ? (row.doc as DeskConfig) : undefined
}

/** Whether a user is the owner or an admin of the desk now, in the caller's transaction ({@link lockDeskShared}). */
export async function isDeskAdminNow(
  trx: Transaction<Database>,
  botId: number,
  userId: number,
): Promise<boolean> {
  const doc = await lockDeskShared(trx, botId)
  return !!doc && isDeskAdmin(doc, userId)
}

/**
 * Whether a staff id (a user, or the group's id for an anonymous admin) is an admin on a consultation now, in its own
 * group (config/access roleOn: an anonymous admin counts where the committed desk still allows), in the caller's
 * transaction ({@link lockDeskShared}). The re-check of an admin-only topic command (/extend, /ban, /unban).
 */
export async function isAdminOnNow(
  trx: Transaction<Database>,
  botId: number,
  c: { staff_chat_id: number | null },
  staffId: number,
): Promise<boolean> {
  const doc = await lockDeskShared(trx, botId)
  return !!doc && isAdminRole(roleOn(doc, c, staffId))
}

/**
 * Does the desk's document in PostgreSQL still have this plan? Read under a share lock of the desk's row, the lock
 * every settings change takes for update (src/settings/edit.ts, a plan's delete with its check of live subscribers):
 * a plan's first charge and the subscription link's creation (src/subscriptions) call it, so a delete and the birth
 * of a subscription to that plan never overlap: either the delete counts the subscription (and is refused), or the
 * charge sees the plan gone. Shares do not wait on each other; take it after the order's lock and before any
 * subscription or consultation lock (a settings change holding this row may update consultations: src/setup/migrate.ts).
 * A desk without a row (never seeded) has every plan its config names: true.
 */
export async function planInDesk(trx: Transaction<Database>, botId: number, code: string): Promise<boolean> {
  const row = await trx
    .selectFrom('desk_settings')
    .select(
      sql<boolean>`coalesce(doc->'plans', '[]'::jsonb) @> ${JSON.stringify([{ code }])}::jsonb`.as('has'),
    )
    .where('bot_id', '=', botId)
    .forShare()
    .executeTakeFirst()
  return row ? row.has : true
}

/** The text of a terms version the desk ('desk') or one of its plans ('plan:<code>') has had, e.g. an order's. */
export async function termsText(
  db: Db,
  botId: number,
  version: string,
  kind = 'desk',
): Promise<Record<string, string> | undefined> {
  const row = await db
    .selectFrom('desk_terms')
    .select('text')
    .where('bot_id', '=', botId)
    .where('kind', '=', kind)
    .where('version', '=', version)
    .executeTakeFirst()
  return row?.text
}

/** {@link changeDeskIn} in its own transaction. */
export async function changeDesk(
  db: Db,
  botId: number,
  actor: SettingsActor,
  expectedVersion: number | 'any',
  mutate: DeskMutation,
): Promise<DeskSettings> {
  const r = await db.transaction().execute((trx) => changeDeskIn(trx, botId, actor, expectedVersion, mutate))
  committed(db, botId, r)
  return r
}

/**
 * One change of a desk's settings inside the caller's transaction: locks the row, checks `expectedVersion`
 * ('any' = no check; else SettingsConflict when it moved), applies `mutate` to a deep copy (it may edit the copy or
 * return a new document), validates the result with the schema (SettingsInvalid naming the fields), and writes
 * version + 1 with an audit row and a notification delivered at commit. A change of the terms' (or a plan's terms')
 * text under the same version gets a new version, so an order's terms_version always names the text it was sold
 * with (desk_terms keeps every text). A change that changes nothing writes nothing and returns the current version.
 * After the caller's commit, {@link committed} makes this process see it at once (other processes within ~2 s).
 */
export async function changeDeskIn(
  trx: Transaction<Database>,
  botId: number,
  actor: SettingsActor,
  expectedVersion: number | 'any',
  mutate: DeskMutation,
): Promise<DeskSettings> {
  const row = await trx
    .selectFrom('desk_settings')
    .select(['version', 'doc'])
    .where('bot_id', '=', botId)
    .forUpdate()
    .executeTakeFirst()
  if (!row) throw new SettingsMissing(botId)
  if (expectedVersion !== 'any' && row.version !== expectedVersion) throw new SettingsConflict(row.version)
  const before = validateDesk(row.doc)
  const draft = structuredClone(before)
  const next = validateDesk(mutate(draft) ?? draft)
  const fixed = FIXED.filter((k) => next[k] !== before[k]).map((k) => ({
    path: k,
    message: `cannot change while the desk runs (it is "${before[k]}")`,
  }))
  if (fixed.length) throw new SettingsInvalid(fixed)
  const version = row.version + 1
  newTermsVersions(before, next, version)
  const changed = changedKeys(before, next)
  if (changed.length === 0) return { version: row.version, doc: before }
  await recordTerms(trx, botId, next)
  await trx
    .updateTable('desk_settings')
    .set({
      version,
      doc: JSON.stringify(next),
      updated_at: sql<Date>`now()`,
      updated_by: actor.userId,
      source: actor.source,
    })
    .where('bot_id', '=', botId)
    .execute()
  await audit(trx, {
    botId,
    actorId: actor.userId,
    action: 'settings.changed',
    subjectType: 'desk_settings',
    subjectId: botId,
    details: {
      source: actor.source,
      from: row.version,
      to: version,
      before: Object.fromEntries(changed.map((k) => [k, before[k] ?? null])),
      after: Object.fromEntries(changed.map((k) => [k, next[k] ?? null])),
    },
  })
  await notify(trx, botId, version)
  return { version, doc: next }
}

/**
 * The first settings of a desk: the row written from the YAML desk (or the defaults of a first run) when the bot
 * has none (source 'seed'), else the row as it is (PostgreSQL wins). Processes starting together seed once.
 */
export async function seedDesk(
  db: Db,
  botId: number,
  doc: unknown,
): Promise<DeskSettings & { seeded: boolean }> {
  const valid = validateDesk(doc)
  return db.transaction().execute(async (trx) => {
    if (await createDeskIn(trx, botId, valid, { userId: null, source: 'seed' }))
      return { version: 1, doc: valid, seeded: true }
    const current = await readDesk(trx, botId)
    if (!current) throw new SettingsMissing(botId)
    return { ...current, seeded: false }
  })
}

/**
 * The first row of a desk (version 1) with its terms and an audit row (`settings.seeded`, or `settings.created`
 * for an import); false when the desk has a row already (nothing written).
 */
export async function createDeskIn(
  trx: Transaction<Database>,
  botId: number,
  doc: DeskConfig,
  actor: SettingsActor,
): Promise<boolean> {
  const valid = validateDesk(doc)
  const inserted = await trx
    .insertInto('desk_settings')
    .values({
      bot_id: botId,
      version: 1,
      doc: JSON.stringify(valid),
      updated_by: actor.userId,
      source: actor.source,
    })
    .onConflict((oc) => oc.column('bot_id').doNothing())
    .returning('version')
    .executeTakeFirst()
  if (!inserted) return false
  await recordTerms(trx, botId, valid)
  await audit(trx, {
    botId,
    actorId: actor.userId,
    action: actor.source === 'seed' ? 'settings.seeded' : 'settings.created',
    subjectType: 'desk_settings',
    subjectId: botId,
    details: { source: actor.source, to: 1 },
  })
  await notify(trx, botId, 1)
  return true
}

/** The top-level keys whose values differ. */
function changedKeys(before: DeskConfig, next: DeskConfig): (keyof DeskConfig)[] {
  const keys = new Set([...Object.keys(before), ...Object.keys(next)]) as Set<keyof DeskConfig>
  return [...keys].filter((k) => JSON.stringify(before[k]) !== JSON.stringify(next[k]))
}

/** A terms text changed under an unchanged version gets a new version: the desk-local date and the settings version. */
function newTermsVersions(before: DeskConfig, next: DeskConfig, settingsVersion: number): void {
  const stamp = `${DateTime.now().setZone(next.schedule.timezone).toISODate()}.${settingsVersion}`
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)
  if (next.terms.version === before.terms.version && !same(next.terms.text, before.terms.text))
    next.terms.version = stamp
  for (const p of next.plans) {
    const old = before.plans.find((q) => q.code === p.code)
    if (old && p.terms.version === old.terms.version && !same(p.terms.text, old.terms.text))
      p.terms.version = stamp
  }
}

/**
 * Records each terms text under its version; a version already recorded with another text is refused (a new text
 * needs a new version: orders name the version they were sold with).
 */
async function recordTerms(trx: Transaction<Database>, botId: number, doc: DeskConfig): Promise<void> {
  const all = [
    { kind: 'desk', path: 'terms.version', ...doc.terms },
    ...doc.plans.map((p, i) => ({ kind: `plan:${p.code}`, path: `plans[${i}].terms.version`, ...p.terms })),
  ]
  const issues: SettingsIssue[] = []
  for (const t of all) {
    await trx
      .insertInto('desk_terms')
      .values({ bot_id: botId, kind: t.kind, version: t.version, text: JSON.stringify(t.text) })
      .onConflict((oc) => oc.columns(['bot_id', 'kind', 'version']).doNothing())
      .execute()
    const kept = await trx
      .selectFrom('desk_terms')
      .select('text')
      .where('bot_id', '=', botId)
      .where('kind', '=', t.kind)
      .where('version', '=', t.version)
      .executeTakeFirstOrThrow()
    if (JSON.stringify(sortKeys(kept.text)) !== JSON.stringify(sortKeys(t.text)))
      issues.push({
        path: t.path,
        message: `version "${t.version}" was already used for another text: give the new text a new version`,
      })
  }
  if (issues.length) throw new SettingsInvalid(issues)
}

function sortKeys(o: Record<string, string | undefined>): [string, string | undefined][] {
  return Object.entries(o).sort(([a], [b]) => a.localeCompare(b))
}

async function notify(trx: Transaction<Database>, botId: number, version: number): Promise<void> {
  await sql`select pg_notify(${SETTINGS_CHANNEL}, ${`${botId}:${version}`})`.execute(trx)
}

// ---------------------------------------------------------------------------------------------------------------
// This process's caches (src/settings/cache.ts) of a database handle: told right after a commit

type Listener = (botId: number, s: DeskSettings) => void
const local = new WeakMap<Db, Set<Listener>>()

/** The caches of `db` (in this process) are told of every change committed through it. */
export function onCommitted(db: Db, listener: Listener): () => void {
  const set = local.get(db) ?? new Set()
  local.set(db, set)
  set.add(listener)
  return () => set.delete(listener)
}

/**
 * Tells this process's caches of `db` about a change committed by the caller (after {@link changeDeskIn}'s
 * transaction commits), so the next update this process handles sees it; other processes learn it from the
 * notification. changeDesk calls it itself.
 */
export function committed(db: Db, botId: number, s: DeskSettings): void {
  for (const l of local.get(db) ?? []) l(botId, s)
}
