import type { DeskRuntime } from '../config/load'
import type { Db } from '../db/database'
import { changeDeskIn, committed, SettingsConflict, SettingsInvalid } from '../settings/settings'
import {
  isOwner,
  ownerOf,
  removeStaff,
  roleOf,
  type StaffRole,
  setRole,
  staffName,
  telegramName,
} from './staff-doc'

/**
 * /staff (issue 24): the staff list with a button per person to change the role or remove them. Owner only, and
 * checked again on every press against the desk's current settings (inside the change). The owner cannot be
 * removed or demoted; a change the settings refuse (an expert still named on a tariff) is refused with the reason.
 */
export interface StaffEntry {
  userId: number
  name: string
  role: StaffRole
}

/**
 * The staff, owner first: each by the desk's name for them, else the Telegram name they last wrote to the bot
 * with (people listed in a YAML file have no name there), else "Staff member" - never a bare id.
 */
export async function listStaff(db: Db, desk: DeskRuntime): Promise<StaffEntry[]> {
  const owner = ownerOf(desk)
  const ids = [
    ...new Set([...(owner !== undefined ? [owner] : []), ...desk.staff.admins, ...desk.staff.experts]),
  ]
  const telegram = await telegramNames(
    db,
    desk.botId,
    ids.filter((id) => desk.expertSettings.names[String(id)] === undefined),
  )
  return ids.map((id) => ({
    userId: id,
    name: desk.expertSettings.names[String(id)] ?? telegram.get(id) ?? '',
    role: roleOf(desk, id)!,
  }))
}

export type StaffAction = 'admin' | 'expert' | 'remove'

export type StaffChangeOutcome =
  | { ok: true; name: string; action: StaffAction }
  | { ok: false; reason: 'owner-only' | 'is-owner' | 'not-staff' | 'invalid' | 'conflict'; detail?: string }

class Refused extends Error {
  constructor(readonly reason: 'owner-only' | 'is-owner' | 'not-staff') {
    super(reason)
  }
}

export async function changeStaff(
  db: Db,
  botId: number,
  by: number,
  target: number,
  action: StaffAction,
  /** The dashboard's staff page: its source for the audit, and the settings version the page showed. */
  opts: { source?: 'telegram' | 'dashboard'; expectedVersion?: number } = {},
): Promise<StaffChangeOutcome> {
  let name = ''
  try {
    const actor = { userId: by, source: opts.source ?? 'telegram' }
    const changed = await db.transaction().execute((trx) =>
      changeDeskIn(trx, botId, actor, opts.expectedVersion ?? 'any', (doc) => {
        if (!isOwner(doc, by)) throw new Refused('owner-only')
        const role = roleOf(doc, target)
        if (role === undefined) throw new Refused('not-staff')
        if (role === 'owner') throw new Refused('is-owner')
        name = staffName(doc, target)
        if (action === 'remove') removeStaff(doc, target)
        else setRole(doc, target, action)
      }),
    )
    committed(db, botId, changed)
    if (!name) name = (await telegramNames(db, botId, [target])).get(target) ?? ''
    return { ok: true, name, action }
  } catch (e) {
    if (e instanceof Refused) return { ok: false, reason: e.reason }
    if (e instanceof SettingsConflict) return { ok: false, reason: 'conflict' }
    if (e instanceof SettingsInvalid)
      return {
        ok: false,
        reason: 'invalid',
        detail: e.issues.map((i) => `${i.path}: ${i.message}`).join('; '),
      }
    throw e
  }
}

/** `/myname <name>`: a staff member sets the name cards and lists show for them (1-64 characters). */
export async function setOwnName(
  db: Db,
  botId: number,
  userId: number,
  name: string,
): Promise<'ok' | 'not-staff' | 'bad-name'> {
  const clean = name.trim()
  if ([...clean].length < 1 || [...clean].length > 64) return 'bad-name'
  try {
    const changed = await db.transaction().execute((trx) =>
      changeDeskIn(trx, botId, { userId, source: 'telegram' }, 'any', (doc) => {
        if (roleOf(doc, userId) === undefined) throw new Refused('not-staff')
        doc.expertSettings.names[String(userId)] = clean
      }),
    )
    committed(db, botId, changed)
    return 'ok'
  } catch (e) {
    if (e instanceof Refused) return 'not-staff'
    throw e
  }
}

/** The Telegram names staff last wrote to the bot with (the client rows /start and payments keep). */
async function telegramNames(db: Db, botId: number, ids: number[]): Promise<Map<number, string>> {
  if (ids.length === 0) return new Map()
  const rows = await db
    .selectFrom('client')
    .select(['user_id', 'first_name', 'last_name'])
    .where('bot_id', '=', botId)
    .where('user_id', 'in', ids)
    .execute()
  return new Map(
    rows.map((c) => [
      c.user_id,
      telegramName({ first_name: c.first_name, last_name: c.last_name ?? undefined }),
    ]),
  )
}
