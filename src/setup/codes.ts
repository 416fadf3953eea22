import { randomBytes } from 'node:crypto'

/**
 * Deep-link codes (`t.me/<bot>?start=<code>`; Telegram allows 1-64 characters of A-Za-z0-9_-). A prefix says what
 * the code is, the rest is 128 random bits in base64url: not guessable, and never reused.
 */
export const CLAIM_PREFIX = 'own_'
export const INVITE_PREFIX = 'inv_'

export function newCode(prefix: string): string {
  return prefix + randomBytes(16).toString('base64url')
}

export const CODE_RE = /^[A-Za-z0-9_-]{1,64}$/

export function deepLink(botUsername: string, code: string): string {
  return `t.me/${botUsername}?start=${code}`
}
