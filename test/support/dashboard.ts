import { randomBytes } from 'node:crypto'
import { initDataHash } from '../../src/dashboard/init-data'

/**
 * Launch data as Telegram signs it for a Mini App (core.telegram.org/bots/webapps): the fields as a query string,
 * `hash` = HMAC-SHA256 over the sorted "key=value" lines with the key HMAC-SHA256("WebAppData", bot token). Tests
 * sign with the desk's token (valid), another desk's token, or tamper afterwards (forged).
 */

export interface LaunchUser {
  id: number
  first_name?: string
  username?: string
  language_code?: string
}

export interface SignOptions {
  user: LaunchUser
  /** Seconds since the epoch; default now. */
  authDate?: number
  /** Extra fields (start_param, chat_type, ...). */
  extra?: Record<string, string>
  /** Field order in the query string (Telegram's is not the sorted one). */
  order?: 'telegram' | 'reversed'
}

export function signInitData(token: string, o: SignOptions): string {
  const fields: [string, string][] = [
    ['query_id', `AA${randomBytes(8).toString('base64url')}`],
    ['user', JSON.stringify({ first_name: 'Staff', language_code: 'en', ...o.user })],
    ['auth_date', String(o.authDate ?? Math.floor(Date.now() / 1000))],
    // Bot API 8.0: an Ed25519 signature for third parties; part of the data-check-string like any other field.
    ['signature', randomBytes(64).toString('base64url')],
    ...Object.entries(o.extra ?? {}),
  ]
  const hash = initDataHash(fields, token)
  const all: [string, string][] = [...fields, ['hash', hash]]
  if (o.order === 'reversed') all.reverse()
  return new URLSearchParams(all).toString()
}

/** The same launch data with one field changed after signing (what a forger can do without the token). */
export function tamper(initData: string, key: string, value: string): string {
  const p = new URLSearchParams(initData)
  p.set(key, value)
  return p.toString()
}

/** The URL hash Telegram opens a Mini App with. */
export function launchHash(initData: string, theme: Record<string, string> = {}): string {
  const p = new URLSearchParams({
    tgWebAppData: initData,
    tgWebAppVersion: '8.0',
    tgWebAppPlatform: 'tdesktop',
    tgWebAppThemeParams: JSON.stringify(theme),
  })
  return `#${p.toString()}`
}
