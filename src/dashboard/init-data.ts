import { createHmac, timingSafeEqual } from 'node:crypto'

/**
 * Telegram Mini App launch data (`Telegram.WebApp.initData`, the `tgWebAppData` launch parameter): a query string
 * signed by Telegram with a key derived from the bot's token. Checked as core.telegram.org/bots/webapps says:
 *
 *   secret_key        = HMAC-SHA256(key = "WebAppData", message = bot token)
 *   data_check_string = every received field except `hash`, as "key=value" (value URL-decoded), sorted by key,
 *                       joined with "\n"
 *   valid             = hex(HMAC-SHA256(key = secret_key, message = data_check_string)) == hash
 *
 * `signature` (Bot API 8.0, an Ed25519 signature for third parties) is one of the received fields, so it is part of
 * the data-check-string; it is not checked itself (that is for apps that do not hold the token). `auth_date` must be
 * recent: a signed initData is a bearer credential for as long as the server accepts it.
 */

export interface InitDataUser {
  id: number
  first_name?: string
  last_name?: string
  username?: string
  language_code?: string
}

export interface InitData {
  user: InitDataUser
  authDate: Date
  /** Set when the app was opened from a direct link (t.me/<bot>?startapp=...). */
  startParam: string | undefined
  chatType: string | undefined
}

export type InitDataCheck =
  | { ok: true; data: InitData }
  | { ok: false; reason: 'missing' | 'malformed' | 'bad-hash' | 'stale' | 'from-future' | 'no-user' }

export interface InitDataOptions {
  now: Date
  /** auth_date older than this is refused. */
  maxAgeSeconds: number
  /** auth_date ahead of `now` by more than this is refused (clock skew between Telegram and this server). */
  maxSkewSeconds?: number
}

/** The key every initData of this bot is signed with; computed once per desk by the caller if it likes. */
export function initDataSecret(botToken: string): Buffer {
  return createHmac('sha256', 'WebAppData').update(botToken).digest()
}

/** The signature Telegram would put in `hash` for these fields (tests sign their own launch data with it). */
export function initDataHash(fields: Iterable<[string, string]>, botToken: string): string {
  const lines = [...fields]
    .filter(([k]) => k !== 'hash')
    .map(([k, v]) => `${k}=${v}`)
    .sort()
  return createHmac('sha256', initDataSecret(botToken)).update(lines.join('\n')).digest('hex')
}

const HEX_SHA256 = /^[0-9a-f]{64}$/

export function checkInitData(
  raw: string | undefined | null,
  botToken: string,
  o: InitDataOptions,
): InitDataCheck {
  if (!raw) return { ok: false, reason: 'missing' }
  if (raw.length > 8192) return { ok: false, reason: 'malformed' }
  const params = new URLSearchParams(raw)
  const fields = new Map<string, string>()
  for (const [k, v] of params) {
    // A field given twice could be read one way here and another way by whoever parses it next.
    if (fields.has(k)) return { ok: false, reason: 'malformed' }
    fields.set(k, v)
  }
  const hash = fields.get('hash')
  if (!hash || !HEX_SHA256.test(hash)) return { ok: false, reason: 'malformed' }

  const expected = Buffer.from(initDataHash(fields, botToken), 'hex')
  if (!timingSafeEqual(expected, Buffer.from(hash, 'hex'))) return { ok: false, reason: 'bad-hash' }

  // Only signed data is read from here on.
  const authDate = Number(fields.get('auth_date'))
  if (!Number.isSafeInteger(authDate) || authDate <= 0) return { ok: false, reason: 'malformed' }
  const ageSeconds = o.now.getTime() / 1000 - authDate
  if (ageSeconds > o.maxAgeSeconds) return { ok: false, reason: 'stale' }
  if (-ageSeconds > (o.maxSkewSeconds ?? 300)) return { ok: false, reason: 'from-future' }

  let user: InitDataUser | undefined
  try {
    const u = JSON.parse(fields.get('user') ?? 'null') as InitDataUser | null
    if (u && Number.isSafeInteger(u.id) && u.id > 0) user = u
  } catch {
    return { ok: false, reason: 'malformed' }
  }
  if (!user) return { ok: false, reason: 'no-user' }
  return {
    ok: true,
    data: {
      user,
      authDate: new Date(authDate * 1000),
      startParam: fields.get('start_param'),
      chatType: fields.get('chat_type'),
    },
  }
}
