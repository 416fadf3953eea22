import { isDeskAdmin } from '../config/access'
import type { DeskConfig } from '../config/schema'
import type { Db, Trx } from '../db/database'
import {
  changeDeskIn,
  committed,
  type DeskSettings,
  readDesk,
  SettingsConflict,
  SettingsInvalid,
  type SettingsIssue,
} from './settings'
import type { SettingsSource } from './settings.tables'

/**
 * One edit from Telegram (/settings, src/bot/features/settings): the change made with the version the editor saw,
 * the editor's right checked inside the same locked transaction (not only when the menu was drawn), and the outcome
 * as a value the chat can word.
 *
 * - `done`: written (or, under redelivery, already so: the change applied to the current document changes nothing).
 * - `conflict`: someone else changed the desk since the editor saw it, and this change would differ: nothing written;
 *   `settings` is what is there now (to show the current value).
 * - `invalid`: the schema refused it (each issue names the field); nothing written.
 * - `forbidden`: the editor is no longer an owner or admin of the desk; `gone`: the tariff/plan it names is not there.
 */
export type EditOutcome =
  | { status: 'done'; settings: DeskSettings }
  | { status: 'conflict'; settings: DeskSettings }
  | { status: 'invalid'; issues: SettingsIssue[] }
  | { status: 'forbidden' }
  | { status: 'gone' }

/** What an edit with a Guard may also answer: refused by the guard (a locale key and its parameters). */
export type GuardedOutcome =
  | EditOutcome
  | { status: 'refused'; key: string; params: Record<string, string | number> }

/**
 * A check that needs the database, made inside the edit's transaction after the desk's row is locked (e.g. "no live
 * subscriptions to this plan"): a refusal (a locale key and its parameters) or nothing.
 */
export type Guard = (
  trx: Trx,
  doc: DeskConfig,
) => Promise<{ key: string; params: Record<string, string | number> } | undefined>

/** What a mutation returns: nothing (edited in place), or 'gone' when the object it names is not in the document. */
// biome-ignore lint/suspicious/noConfusingVoidType: an edit changes the copy in place and returns nothing
export type Edit = (doc: DeskConfig) => void | 'gone'

class Forbidden extends Error {}
class Gone extends Error {}
class Refused extends Error {
  constructor(readonly refusal: { key: string; params: Record<string, string | number> }) {
    super(refusal.key)
  }
}

export { isDeskAdmin }

export async function editDesk(
  db: Db,
  botId: number,
  userId: number,
  expectedVersion: number,
  edit: Edit,
  /** Where the editor is: the chat's /settings, or the dashboard's settings pages (recorded in the audit row). */
  source: Extract<SettingsSource, 'telegram' | 'dashboard'> = 'telegram',
): Promise<EditOutcome> {
  return (await editDeskGuarded(db, botId, userId, expectedVersion, edit, source)) as EditOutcome
}

/** {@link editDesk} with a Guard: a check that needs the database, made under the desk's row lock. */
export async function editDeskGuarded(
  db: Db,
  botId: number,
  userId: number,
  expectedVersion: number,
  edit: Edit,
  source: Extract<SettingsSource, 'telegram' | 'dashboard'>,
  guard?: Guard,
): Promise<GuardedOutcome> {
  try {
    const settings = await db.transaction().execute(async (trx) => {
      if (guard) {
        // The row locked first (changeDeskIn locks it again in the same transaction): the guard's reads and the
        // change are made under the same lock every other edit of this desk takes.
        const row = await trx
          .selectFrom('desk_settings')
          .select('doc')
          .where('bot_id', '=', botId)
          .forUpdate()
          .executeTakeFirst()
        if (row && !isDeskAdmin(row.doc as DeskConfig, userId)) throw new Forbidden()
        const refusal = row && (await guard(trx, row.doc as DeskConfig))
        if (refusal) throw new Refused(refusal)
      }
      return changeDeskIn(trx, botId, { userId, source }, expectedVersion, (doc) => {
        if (!isDeskAdmin(doc, userId)) throw new Forbidden()
        if (edit(doc) === 'gone') throw new Gone()
      })
    })
    committed(db, botId, settings)
    return { status: 'done', settings }
  } catch (e) {
    if (e instanceof Forbidden) return { status: 'forbidden' }
    if (e instanceof Gone) return { status: 'gone' }
    if (e instanceof Refused) return { status: 'refused', ...e.refusal }
    if (e instanceof SettingsInvalid) return { status: 'invalid', issues: e.issues }
    if (!(e instanceof SettingsConflict)) throw e
  }
  const current = await readDesk(db, botId)
  if (!current) throw new Error(`no settings for bot ${botId}`)
  if (!isDeskAdmin(current.doc, userId)) return { status: 'forbidden' }
  // The same change made again (a redelivered update, or two admins typing the same value): already so.
  const copy = structuredClone(current.doc)
  let same = false
  try {
    same = edit(copy) !== 'gone' && JSON.stringify(copy) === JSON.stringify(current.doc)
  } catch (e) {
    // The change refused on the current document (e.g. a new tariff whose code someone has taken meanwhile): the
    // editor saw an older one, so it is a conflict, answered with the current settings.
    if (!(e instanceof SettingsInvalid || e instanceof Forbidden || e instanceof Gone)) throw e
  }
  if (same) return { status: 'done', settings: current }
  return { status: 'conflict', settings: current }
}
