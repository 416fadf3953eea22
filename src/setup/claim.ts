import { sql } from 'kysely'
import type { Db } from '../db/database'
import { changeDeskIn, committed, type DeskSettings } from '../settings/settings'
import { CLAIM_PREFIX, newCode } from './codes'
import { makeOwner, ownerOf, telegramName } from './staff-doc'

/**
 * The owner's claim (issue 24): a desk nobody runs yet (no owner, no admins) gets, at start, one open claim code in
 * PostgreSQL; the app prints `t.me/<bot>?start=<code>`. Whoever opens it first becomes the owner, in the
 * transaction that marks the code used. A code expires after CLAIM_TTL_HOURS; the next start after that prints a
 * new one. Every start while it is open prints the same code (two processes starting at once too: one open claim
 * per desk, a unique index).
 */
export const CLAIM_TTL_HOURS = 24

export interface OpenClaim {
  code: string
  expiresAt: Date
}

/** The desk's open claim, created when there is none (an expired one is closed first). */
export async function ensureOwnerClaim(db: Db, botId: number): Promise<OpenClaim> {
  return db.transaction().execute(async (trx) => {
    await trx
      .updateTable('desk_claim')
      .set({ state: 'expired' })
      .where('bot_id', '=', botId)
      .where('state', '=', 'open')
      .where('expires_at', '<=', sql<Date>`now()`)
      .execute()
    await sql`insert into desk_claim (code, bot_id, expires_at)
      values (${newCode(CLAIM_PREFIX)}, ${botId}, now() + make_interval(hours => ${CLAIM_TTL_HOURS}))
      on conflict (bot_id) where state = 'open' do nothing`.execute(trx)
    const row = await trx
      .selectFrom('desk_claim')
      .select(['code', 'expires_at'])
      .where('bot_id', '=', botId)
      .where('state', '=', 'open')
      .executeTakeFirstOrThrow()
    return { code: row.code, expiresAt: row.expires_at }
  })
}

export type ClaimOutcome =
  | { ok: true; already: boolean }
  | { ok: false; reason: 'unknown' | 'used' | 'expired' | 'owned' }

class Refused extends Error {
  constructor(readonly reason: 'owned') {
    super(reason)
  }
}

/**
 * `/start <claim code>`: one transaction locks the claim, makes the person the owner through the desk's settings
 * (changeDeskIn: validated, audited, seen by every process) and marks the code used. A second person, a second use,
 * an expired code or a desk that has an owner already: refused, nothing changed. The same person opening it again
 * (or Telegram redelivering the update) is told they are the owner.
 */
export async function claimOwnership(
  db: Db,
  botId: number,
  code: string,
  user: { id: number; first_name: string; last_name?: string | undefined },
): Promise<ClaimOutcome> {
  let changed: DeskSettings | undefined
  try {
    const r = await db.transaction().execute(async (trx): Promise<ClaimOutcome> => {
      const claim = await trx
        .selectFrom('desk_claim')
        .select(['state', 'used_by', sql<boolean>`expires_at <= now()`.as('expired')])
        .where('code', '=', code)
        .where('bot_id', '=', botId)
        .forUpdate()
        .executeTakeFirst()
      if (!claim) return { ok: false, reason: 'unknown' }
      if (claim.state === 'used')
        return claim.used_by === user.id ? { ok: true, already: true } : { ok: false, reason: 'used' }
      if (claim.state === 'expired' || claim.expired) return { ok: false, reason: 'expired' }
      changed = await changeDeskIn(trx, botId, { userId: user.id, source: 'telegram' }, 'any', (doc) => {
        if (ownerOf(doc) !== undefined) throw new Refused('owned')
        makeOwner(doc, user.id, telegramName(user))
      })
      await trx
        .updateTable('desk_claim')
        .set({ state: 'used', used_by: user.id, used_at: sql<Date>`now()` })
        .where('code', '=', code)
        .execute()
      return { ok: true, already: false }
    })
    // This process sees the new owner at once (the others within about two seconds).
    if (changed) committed(db, botId, changed)
    return r
  } catch (e) {
    if (e instanceof Refused) return { ok: false, reason: e.reason }
    throw e
  }
}
