import { deskRole, isAdminRole } from '../config/access'
import type { DeskRuntime, LoadedConfig } from '../config/load'
import { deskLanguage } from '../config/rules.schema'
import type { Language } from '../config/schema'
import { checkInitData, type InitDataCheck, type InitDataUser } from './init-data'

/**
 * Who may see a desk's dashboard: whoever Telegram vouches for (initData signed with THAT desk's bot token, fresh)
 * and who is on that desk's staff. The desk is the one named in the URL (/dashboard/<slug>/): the Mini App of each
 * bot points at its own desk, so initData signed by another desk's bot fails the signature here, and a user who is
 * staff only elsewhere is refused as not staff. Nothing is read from the database to decide.
 */

export type Role = 'admin' | 'expert'

export interface Viewer {
  desk: DeskRuntime
  userId: number
  user: InitDataUser
  role: Role
  lang: Language
  /** When the launch data stops being accepted (auth_date + the configured age). */
  expiresAt: Date
}

export type Access =
  | { ok: true; viewer: Viewer }
  /** 404: no such desk; 401: no or bad launch data; 403: signed and fresh, but not staff of this desk. */
  | { ok: false; status: 401 | 403 | 404; reason: string }

export function findDesk(config: Pick<LoadedConfig, 'desks'>, slug: string): DeskRuntime | undefined {
  return config.desks.find((d) => d.slug === slug)
}

/** The dashboard's role (src/config/access.ts: the owner sees what an admin sees); undefined: not staff. */
export function roleOf(desk: DeskRuntime, userId: number): Role | undefined {
  const r = deskRole(desk, userId)
  return isAdminRole(r) ? 'admin' : r === 'expert' ? 'expert' : undefined
}

/** `Authorization: tma <initData>`, the scheme Mini App backends commonly use. */
export function initDataFromHeader(header: string | undefined): string | undefined {
  const m = /^tma (.+)$/s.exec(header ?? '')
  return m?.[1]
}

export function authorize(
  config: Pick<LoadedConfig, 'desks' | 'dashboard'>,
  slug: string,
  initData: string | undefined,
  now: Date,
): Access {
  const desk = findDesk(config, slug)
  if (!desk) return { ok: false, status: 404, reason: 'no-desk' }
  const maxAge = config.dashboard.authMaxAgeSeconds
  const check: InitDataCheck = checkInitData(initData, desk.token, { now, maxAgeSeconds: maxAge })
  if (!check.ok) return { ok: false, status: 401, reason: check.reason }
  const { user, authDate } = check.data
  const role = roleOf(desk, user.id)
  if (!role) return { ok: false, status: 403, reason: 'not-staff' }
  return {
    ok: true,
    viewer: {
      desk,
      userId: user.id,
      user,
      role,
      // The page speaks the language the desk speaks to this user in the chat.
      lang: deskLanguage(desk, user.language_code),
      expiresAt: new Date(authDate.getTime() + maxAge * 1000),
    },
  }
}
