import { stringify } from 'yaml'
import { botIdOf, ConfigError, parseConfig } from '../config/load'
import type { DeskConfig } from '../config/schema'
import type { Db, Trx } from '../db/database'
import { boundGroups, liveInGroup, liveSubscribers } from './removals'
import { changeDeskIn, createDeskIn, readDesk, SettingsInvalid, validateDesk } from './settings'

/**
 * YAML as the export and import format of the desks' settings (issue 24): `npm run config:export` writes what
 * PostgreSQL holds as a config file's `desks:`; `npm run config:import <file>` validates a file and writes each of
 * its desks as a new version (source 'import', audited), all desks in one transaction or none.
 */

/** Every desk's settings as a YAML config file with only `desks:` (what the import and a start read). */
export async function exportDesks(db: Db, now = new Date()): Promise<string> {
  const rows = await db
    .selectFrom('desk_settings')
    .select(['bot_id', 'version', 'doc', 'updated_at', 'source'])
    .orderBy('bot_id')
    .execute()
  const header = [
    `# consult-desk: the desks' settings exported from PostgreSQL at ${now.toISOString()}.`,
    '# `npm run config:import <this file>` writes them back as a new version; as CONFIG_FILE it seeds a new database.',
    ...rows.map(
      (r) =>
        `# bot ${r.bot_id}: settings version ${r.version}, last changed ${r.updated_at.toISOString()} (${r.source})`,
    ),
  ]
  const desks = rows.map((r) => validateDesk(r.doc))
  return `${header.join('\n')}\n${stringify({ desks }, { lineWidth: 0 })}`
}

export interface ImportedDesk {
  botId: number
  slug: string
  /** The version written (unchanged when the file's desk equals the row). */
  version: number
  outcome: 'created' | 'changed' | 'unchanged'
}

/**
 * Writes each desk of a config file as a new version of its bot's settings. A desk's bot is the one of its
 * `tokenEnv` token when that variable is set, else the stored desk with the same slug. A bad file, a desk whose bot
 * cannot be found, or a desk the schema refuses: ConfigError naming the file and field, and nothing is written.
 */
export async function importDesks(
  db: Db,
  file: string,
  text: string,
  env: NodeJS.ProcessEnv,
): Promise<ImportedDesk[]> {
  const config = parseConfig(file, text)
  const stored = await db.selectFrom('desk_settings').select(['bot_id', 'doc']).execute()
  const bySlug = new Map(stored.map((r) => [(r.doc as { slug?: string }).slug, r.bot_id]))
  const targets = config.desks.map((desk, i) => {
    const token = env[desk.tokenEnv]
    const botId = token ? botIdOf(token) : bySlug.get(desk.slug)
    if (botId === undefined)
      throw new ConfigError(
        token
          ? `${desk.tokenEnv} does not look like a bot token from @BotFather (desks[${i}])`
          : `${file}: desks[${i}]: no stored desk "${desk.slug}"; set ${desk.tokenEnv} to its bot's token`,
      )
    return { i, botId, desk: desk as DeskConfig }
  })
  const seen = new Set<number>()
  for (const t of targets) {
    if (seen.has(t.botId)) throw new ConfigError(`${file}: desks[${t.i}]: a second desk for the same bot`)
    seen.add(t.botId)
  }
  const actor = { userId: null, source: 'import' as const }
  try {
    return await db.transaction().execute(async (trx) => {
      const out: ImportedDesk[] = []
      for (const t of targets) {
        if (await createDeskIn(trx, t.botId, t.desk, actor)) {
          out.push({ botId: t.botId, slug: t.desk.slug, version: 1, outcome: 'created' })
          continue
        }
        // Locked before it is read: the removals checked below are against what this change replaces.
        await trx
          .selectFrom('desk_settings')
          .select('bot_id')
          .where('bot_id', '=', t.botId)
          .forUpdate()
          .execute()
        const before = await readDesk(trx, t.botId)
        const r = await changeDeskIn(trx, t.botId, actor, 'any', () => structuredClone(t.desk)).catch(
          (e: unknown) => {
            if (e instanceof SettingsInvalid)
              throw new ConfigError(
                e.issues.map((x) => `${file}: desks[${t.i}].${x.path}: ${x.message}`).join('\n'),
              )
            throw e
          },
        )
        if (before) await refuseRemovalsOfLive(trx, file, t.i, t.botId, before.doc, r.doc)
        out.push({
          botId: t.botId,
          slug: r.doc.slug,
          version: r.version,
          outcome: r.version > (before?.version ?? 0) ? 'changed' : 'unchanged',
        })
      }
      return out
    })
  } catch (e) {
    if (e instanceof SettingsInvalid)
      throw new ConfigError(e.issues.map((x) => `${file}: ${x.path}: ${x.message}`).join('\n'))
    throw e
  }
}

/**
 * An import removes a plan or a staff group only when /settings would (src/settings/removals.ts): not a plan with
 * active subscribers, not a group with live consultations. Checked after the change, under the desk's row lock the
 * change took, so a plan's first charge either is counted here or sees the plan gone. One refusal names the field
 * and fails the whole import: nothing is written.
 */
async function refuseRemovalsOfLive(
  trx: Trx,
  file: string,
  i: number,
  botId: number,
  before: DeskConfig,
  after: DeskConfig,
): Promise<void> {
  const kept = new Set(after.plans.map((p) => p.code))
  for (const p of before.plans) {
    if (kept.has(p.code)) continue
    const n = await liveSubscribers(trx, botId, p.code)
    if (n > 0)
      throw new ConfigError(
        `${file}: desks[${i}].plans: plan "${p.code}" is missing but has ${n} active subscription(s); keep it with paused: true instead`,
      )
  }
  const groups = new Set(boundGroups(after))
  for (const chatId of boundGroups(before)) {
    if (groups.has(chatId)) continue
    const n = await liveInGroup(trx, botId, before, chatId)
    if (n > 0)
      throw new ConfigError(
        `${file}: desks[${i}]: staff group ${chatId} is missing but has ${n} live consultation(s); keep it until they end`,
      )
  }
}
