import type { DeskRuntime } from '../config/load'
import type { Db } from '../db/database'
import { changeDeskIn, committed, SettingsInvalid } from '../settings/settings'
import { isOwner, ownerOf, removeStaff, roleOf, type StaffRole, setRole, staffName } from './staff-doc'

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

export function listStaff(desk: DeskRuntime): StaffEntry[] {
  const ids = [
    ...(ownerOf(desk) !== undefined ? [ownerOf(desk)!] : []),
    ...desk.staff.admins,
    ...desk.staff.experts,
  ]
  return [...new Set(ids)].map((id) => ({ userId: id, name: staffName(desk, id), role: roleOf(desk, id)! }))
}

export type StaffAction = 'admin' | 'expert' | 'remove'

export type StaffChangeOutcome =
  | { ok: true; name: string; action: StaffAction }
  | { ok: false; reason: 'owner-only' | 'is-owner' | 'not-staff' | 'invalid'; detail?: string }

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
): Promise<StaffChangeOutcome> {
  let name = String(target)
  try {
    const changed = await db.transaction().execute((trx) =>
      changeDeskIn(trx, botId, { userId: by, source: 'telegram' }, 'any', (doc) => {
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
    return { ok: true, name, action }
  } catch (e) {
    if (e instanceof Refused) return { ok: false, reason: e.reason }
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
