import { GrammyError } from 'grammy'
import { isBlocked, isTopicUnusable } from '../telegram/api'
import { cut } from '../text'

/**
 * How the lanes read Telegram's errors. Everything not named here is transient (network, 5xx, an unexpected 400)
 * and fails the job, which pg-boss retries with backoff while the item stays pending in order.
 */

export { isBlocked, isTopicUnusable }

function desc(err: unknown): string | undefined {
  return err instanceof GrammyError ? err.description : undefined
}

/** TOPIC_CLOSED: the topic still exists; reopening it keeps its history. */
export function isTopicClosed(err: unknown): boolean {
  return err instanceof GrammyError && err.error_code === 400 && /TOPIC_CLOSED/i.test(err.description)
}

/**
 * The message itself cannot be copied: a type copyMessage refuses, protected content, or the source was deleted
 * before it was copied. Retrying cannot help; the sender is told instead.
 */
export function isUncopyable(err: unknown): boolean {
  const d = desc(err)
  return (
    d !== undefined &&
    (err as GrammyError).error_code === 400 &&
    /can't be copied|protected content|message to copy not found|message to forward not found|MESSAGE_ID_INVALID|poll can't|quiz/i.test(
      d,
    )
  )
}

/** An edit that changes nothing, or whose target is gone or no longer editable: nothing left to do. */
export function isEditSettled(err: unknown): boolean {
  const d = desc(err)
  return (
    d !== undefined &&
    /message is not modified|message to edit not found|message can't be edited|TOPIC_NOT_MODIFIED|there is no text in the message|there is no caption/i.test(
      d,
    )
  )
}

/** Seconds Telegram asked us to wait (429), when auto-retry gave up waiting in-process. */
export function retryAfterSeconds(err: unknown): number | undefined {
  if (!(err instanceof GrammyError) || err.error_code !== 429) return undefined
  return err.parameters?.retry_after ?? 5
}

export function shortError(err: unknown): string {
  if (err instanceof GrammyError) return cut(`${err.error_code} ${err.description}`, 300)
  return cut((err as Error)?.message ?? String(err), 300)
}

/**
 * Why a message could not be delivered, as a key of the locale files (desk-fail-*): staff read it in the desk's
 * language, never Telegram's English description (that one stays in the log and on the item's row).
 */
export function failReasonKey(err: unknown): string {
  const d = desc(err) ?? ''
  if (isBlocked(err)) return 'desk-fail-blocked'
  if (/protected content/i.test(d)) return 'desk-fail-protected'
  if (/message to copy not found|message to forward not found|MESSAGE_ID_INVALID/i.test(d))
    return 'desk-fail-gone'
  if (isUncopyable(err)) return 'desk-fail-uncopyable'
  if (/too long/i.test(d)) return 'desk-fail-too-long'
  return 'desk-fail-other'
}
