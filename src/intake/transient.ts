import { BotError, GrammyError, HttpError } from 'grammy'
import { isTransientDbError } from '../db/errors'

/**
 * An update whose handler failed with a transient error is handled again later from the inbox and counts no
 * attempt towards parking: the database (src/db/errors.ts) or Telegram (unreachable, 5xx, 429) was unavailable,
 * which says nothing about the update. Anything else is the update's own failure (a bug, a Telegram 400/403).
 */
export function isTransient(err: unknown): boolean {
  const e = err instanceof BotError ? err.error : err
  if (e instanceof HttpError) return true
  if (e instanceof GrammyError) return e.error_code >= 500 || e.error_code === 429
  return isTransientDbError(e)
}
