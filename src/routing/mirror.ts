import { GrammyError } from 'grammy'
import type { MessageEntity } from 'grammy/types'
import { errorSummary } from '../jobs/jobs'
import { BudgetWait } from '../telegram/budget'
import { recordClientBlocked } from './blocked'
import { isBlocked, isEditSettled, isTopicUnusable, retryAfterSeconds } from './errors'
import { DONE, type LaneScope, type Outcome } from './lane-scope'
import { markReacted, pendingEdits, setMirrorVersion, unreacted } from './messages.repository'

/**
 * What a lane does after its items (delivery.ts): edits of the source mirrored onto the copies, and the receipt
 * reaction on each accepted client message.
 */

export const RECEIPT_REACTION = '👀'

/** Mirrors real edits of text or caption onto the copies. */
export async function mirrorEdits(s: LaneScope): Promise<Outcome | undefined> {
  for (const e of await pendingEdits(s.deps.db, s.v.id, s.dir)) {
    s.lease.check()
    if (e.mirror_message_id === null || e.mirror_chat_id === null) {
      await setMirrorVersion(s.deps.db, e.id, e.version)
      continue
    }
    const c = e.content ?? {}
    try {
      if (e.content_type === 'text')
        await s.api.editMessageText(e.mirror_chat_id, e.mirror_message_id, c.text ?? '', {
          ...(c.entities?.length ? { entities: c.entities as MessageEntity[] } : {}),
        })
      else
        await s.api.editMessageCaption(e.mirror_chat_id, e.mirror_message_id, {
          caption: c.caption ?? '',
          ...(c.caption_entities?.length ? { caption_entities: c.caption_entities as MessageEntity[] } : {}),
        })
    } catch (err) {
      if (err instanceof BudgetWait) return { kind: 'defer', seconds: err.seconds }
      const wait = retryAfterSeconds(err)
      if (wait !== undefined) return { kind: 'defer', seconds: wait }
      if (s.dir === 'out' && isBlocked(err)) {
        await recordClientBlocked(s.deps, s.v)
        return DONE
      }
      // A copy in a topic that is gone, or an edit Telegram will never take: nothing more to do for it.
      if (
        !isEditSettled(err) &&
        !isTopicUnusable(err) &&
        !(err instanceof GrammyError && err.error_code === 400)
      )
        throw err
    }
    await setMirrorVersion(s.deps.db, e.id, e.version)
  }
  return undefined
}

/** The receipt on each accepted client message, once it is in the topic. Cosmetic: failures are not retried. */
export async function setReceipts(s: LaneScope): Promise<void> {
  const rows = await unreacted(s.deps.db, s.v.id)
  const done: number[] = []
  for (const r of rows) {
    try {
      await s.api.setMessageReaction(r.chat_id!, r.message_id!, [{ type: 'emoji', emoji: RECEIPT_REACTION }])
    } catch (err) {
      if (isBlocked(err)) {
        await recordClientBlocked(s.deps, s.v)
        done.push(...rows.map((x) => x.id))
        break
      }
      if (retryAfterSeconds(err) !== undefined) break
      s.deps.log.debug({ err: errorSummary(err) }, 'reaction not set')
    }
    done.push(r.id)
  }
  await markReacted(s.deps.db, done)
}
