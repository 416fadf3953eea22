import { sql } from 'kysely'
import type { DeskRuntime } from '../config/load'
import { claimUpdate } from '../db/once'
import type { Deps } from '../deps'
import { changeDeskIn, committed, type DeskSettings } from '../settings/settings'
import { notify } from '../telegram/notify'
import { formatInstant, staffZone } from '../time/format'
import { deepLink, INVITE_PREFIX, newCode } from './codes'
import { isDeskAdmin, isOwner, roleOf, setRole, telegramName } from './staff-doc'

/**
 * Staff invites (issue 24): `/invite expert [uses]` or `/invite admin [uses]` in the bot's private chat gives a deep
 * link valid INVITE_TTL_DAYS days for that many uses (1 unless said, at most MAX_USES). Opening it makes the person
 * staff with the role, named by their Telegram name: one transaction locks the invite, spends a use and changes the
 * desk's settings, so two people opening the last use cannot both join (the second is told it is used up).
 *
 * Who may invite: the owner any role; an admin experts only (an admin cannot make admins).
 */
export const INVITE_TTL_DAYS = 7
export const MAX_USES = 100

export type CreateInviteOutcome =
  | { ok: true; code: string; uses: number; expiresAt: Date }
  | { ok: false; reason: 'not-admin' | 'owner-only' | 'uses' | 'duplicate' }

export async function createInvite(
  deps: Deps,
  desk: DeskRuntime,
  by: number,
  role: 'expert' | 'admin',
  uses: number,
  lang: string,
  /**
   * The /invite update: claimed with the invite, so a redelivered update makes no second link. Undefined for the
   * dashboard's button (an HTTP request, not an update: the page sends it once per press).
   */
  updateId: number | undefined,
  /** The bot's username, for the link (t.me/<bot>?start=<code>). */
  botUsername: string,
): Promise<CreateInviteOutcome> {
  if (!isDeskAdmin(desk, by)) return { ok: false, reason: 'not-admin' }
  if (role === 'admin' && !isOwner(desk, by)) return { ok: false, reason: 'owner-only' }
  if (!Number.isInteger(uses) || uses < 1 || uses > MAX_USES) return { ok: false, reason: 'uses' }
  const code = newCode(INVITE_PREFIX)
  const row = await deps.jobs.transaction(deps.db, async (trx, outbox) => {
    if (updateId !== undefined && !(await claimUpdate(trx, desk.botId, updateId))) return undefined
    const r = await trx
      .insertInto('staff_invite')
      .values({
        code,
        bot_id: desk.botId,
        role,
        uses_total: uses,
        uses_left: uses,
        created_by: by,
        created_lang: lang,
        expires_at: sql<Date>`now() + make_interval(days => ${INVITE_TTL_DAYS})`,
      })
      .returning('expires_at')
      .executeTakeFirstOrThrow()
    // The link leaves through the outbox with the invite: it exists exactly when the invite does.
    await notify(outbox, {
      botId: desk.botId,
      chatId: by,
      lang,
      key: 'setup-invite-created',
      params: {
        role,
        uses,
        until: formatInstant(r.expires_at, staffZone(desk), lang),
        link: `https://${deepLink(botUsername, code)}`,
      },
      dedupeKey: `setup:invite:${code}`,
    })
    return r
  })
  if (!row) return { ok: false, reason: 'duplicate' }
  return { ok: true, code, uses, expiresAt: row.expires_at }
}

export type JoinOutcome =
  | { ok: true; role: 'expert' | 'admin'; already: boolean }
  | { ok: false; reason: 'unknown' | 'expired' | 'used-up' | 'owner' | 'is-admin' }

class Refused extends Error {
  constructor(readonly reason: 'owner' | 'is-admin') {
    super(reason)
  }
}

/**
 * `/start <invite code>`. The person who used this invite before (or a redelivered update) is told they are in,
 * nothing spent twice. The owner cannot be made an expert by a link, nor an admin demoted by an expert's link.
 */
export async function joinByInvite(
  deps: Deps,
  desk: DeskRuntime,
  code: string,
  user: { id: number; first_name: string; last_name?: string | undefined },
): Promise<JoinOutcome> {
  const botId = desk.botId
  let changed: DeskSettings | undefined
  try {
    const r = await deps.jobs.transaction(deps.db, async (trx, outbox): Promise<JoinOutcome> => {
      const inv = await trx
        .selectFrom('staff_invite')
        .select([
          'role',
          'uses_left',
          'created_by',
          'created_lang',
          sql<boolean>`expires_at <= now()`.as('expired'),
        ])
        .where('code', '=', code)
        .where('bot_id', '=', botId)
        .forUpdate()
        .executeTakeFirst()
      if (!inv) return { ok: false, reason: 'unknown' }
      const usedBefore = await trx
        .selectFrom('staff_invite_use')
        .select('user_id')
        .where('code', '=', code)
        .where('user_id', '=', user.id)
        .executeTakeFirst()
      if (usedBefore) return { ok: true, role: inv.role, already: true }
      if (inv.expired) return { ok: false, reason: 'expired' }
      if (inv.uses_left <= 0) return { ok: false, reason: 'used-up' }
      let already = false
      changed = await changeDeskIn(trx, botId, { userId: user.id, source: 'telegram' }, 'any', (doc) => {
        const now = roleOf(doc, user.id)
        if (now === 'owner') throw new Refused('owner')
        if (now === 'admin' && inv.role === 'expert') throw new Refused('is-admin')
        already = now === inv.role
        setRole(doc, user.id, inv.role, telegramName(user))
      })
      await trx
        .updateTable('staff_invite')
        .set({ uses_left: sql<number>`uses_left - 1` })
        .where('code', '=', code)
        .execute()
      await trx.insertInto('staff_invite_use').values({ code, user_id: user.id }).execute()
      // The inviter hears who joined (once: the use row above is unique per person and invite).
      if (inv.created_by !== user.id)
        await notify(outbox, {
          botId,
          chatId: inv.created_by,
          lang: inv.created_lang,
          key: inv.role === 'admin' ? 'setup-joined-admin' : 'setup-joined-expert',
          params: { name: telegramName(user) },
          dedupeKey: `setup:joined:${code}:${user.id}`,
        })
      return { ok: true, role: inv.role, already }
    })
    if (changed) committed(deps.db, botId, changed)
    return r
  } catch (e) {
    if (e instanceof Refused) return { ok: false, reason: e.reason }
    throw e
  }
}
