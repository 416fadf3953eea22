import type { Message, MessageEntity } from 'grammy/types'
import type { DeskRuntime } from '../config/load'
import { clockNow } from '../db/clock'
import type { Trx } from '../db/database'
import type { Deps } from '../deps'
import type { Outbox } from '../jobs/jobs'
import { lockConsultationView } from '../orders/orders.repository'
import { contentTypeOf, explicitReplyId, sameContent, storedContent } from '../routing/content'
import { findBySource, insertItem, recordEdit } from '../routing/messages.repository'
import { insertNote } from '../routing/notes'
import { wakeLane } from '../routing/routing.jobs'
import { answerAppeal, openAppeal } from './desk.repository'
import { refreshTopic } from './desk.service'
import { retryConflicts } from './retry'
import { firstResponse } from './sla'

/**
 * Staff messages to the client. Recording one is a short transaction on the consultation's lock: the message goes
 * into the client lane (copied later, in order), and if an appeal is open this is its first answer: first_response_at
 * (database clock), who answered, business minutes used and whether it was in time are recorded, and the appeal's
 * ledger unit is committed. Answers are delivered whatever the window says (accepted questions are answered after it
 * closes); only a refund under the "stop" policy withholds them.
 */

export type StaffItem =
  /** A message written in the topic, copied to the client. */
  | {
      kind: 'copy'
      message: Message
    }
  /** Text the bot sends on a staff member's behalf (e.g. an approved AI draft), with its entities. */
  | { kind: 'text'; text: string; entities?: MessageEntity[] }

export interface AnsweredAppeal {
  appealId: number
  number: number
  inTime: boolean
  businessMinutes: number
  ledger: string
}

export type StaffMessageResult =
  | { status: 'recorded'; itemId: number; withheld: boolean; answered: AnsweredAppeal | null }
  | { status: 'duplicate' }
  | { status: 'ignored' }

class DuplicateMessage extends Error {}

/** A staff message from a topic: record it and, for the first answer of an open appeal, close the appeal. */
export async function recordStaffMessage(
  deps: Deps,
  desk: DeskRuntime,
  input: { consultationId: number; staffId: number; message: Message },
): Promise<StaffMessageResult> {
  if (!contentTypeOf(input.message)) return { status: 'ignored' }
  try {
    return await retryConflicts(() =>
      deps.jobs.transaction(deps.db, (trx, outbox) =>
        recordStaffAnswer(trx, outbox, deps, desk, {
          consultationId: input.consultationId,
          staffId: input.staffId,
          item: { kind: 'copy', message: input.message },
        }),
      ),
    )
  } catch (err) {
    if (err instanceof DuplicateMessage) return { status: 'duplicate' }
    throw err
  }
}

/**
 * The transactional core, for callers with their own unit of work (AI drafting sends an approved draft with
 * `{ kind: 'text' }`). Locks the consultation row.
 */
export async function recordStaffAnswer(
  trx: Trx,
  outbox: Outbox,
  deps: Deps,
  desk: DeskRuntime,
  input: { consultationId: number; staffId: number; item: StaffItem },
): Promise<StaffMessageResult> {
  const c = await lockConsultationView(trx, input.consultationId)
  if (!c) return { status: 'ignored' }
  const at = await clockNow(trx)
  const it = input.item
  if (it.kind === 'copy') {
    const dup = await findBySource(trx, desk.botId, it.message.chat.id, it.message.message_id)
    if (dup) return { status: 'duplicate' }
  }
  const withheld = c.state === 'revoked' && c.refund_policy === 'stop'

  let answered: AnsweredAppeal | null = null
  const appeal = withheld ? undefined : await openAppeal(trx, c.id)
  if (appeal) {
    const settled = await deps.ledger
      .in(trx)
      .commit(appeal.request_id, 1, { note: `answered by ${input.staffId}` })
    // Committed normally; after a refund the unit may already be released: the answer counts all the same.
    const ledger = settled.ok ? settled.state : `${settled.reason}${settled.state ? `:${settled.state}` : ''}`
    const fr = firstResponse(desk, appeal, at)
    await answerAppeal(trx, appeal.id, {
      at,
      by: input.staffId,
      businessMinutes: fr.businessMinutes,
      inTime: fr.inTime,
      ledgerOutcome: ledger,
    })
    // A breached appeal shows 🔴 in the topic's name until it is answered: take it off now, not at the next sweep.
    if (appeal.breached_at) await refreshTopic(trx, outbox, c, { title: true })
    answered = {
      appealId: appeal.id,
      number: appeal.number,
      inTime: fr.inTime,
      businessMinutes: fr.businessMinutes,
      ledger,
    }
  }

  const base = {
    bot_id: desk.botId,
    consultation_id: c.id,
    direction: 'out' as const,
    from_id: input.staffId,
    appeal_id: answered?.appealId ?? null,
    state: withheld ? ('withheld' as const) : ('pending' as const),
    accepted_at: at,
  }
  const row =
    it.kind === 'copy'
      ? await insertItem(trx, {
          ...base,
          kind: 'copy',
          chat_id: it.message.chat.id,
          message_id: it.message.message_id,
          media_group_id: it.message.media_group_id ?? null,
          reply_to_message_id: explicitReplyId(it.message) ?? null,
          content_type: contentTypeOf(it.message)!,
          content: JSON.stringify(storedContent(it.message)),
        })
      : await insertItem(trx, {
          ...base,
          kind: 'text',
          content_type: 'text',
          content: JSON.stringify({
            text: it.text,
            ...(it.entities?.length ? { entities: it.entities } : {}),
          }),
        })
  if (!row) throw new DuplicateMessage()
  if (withheld) {
    if (await insertNote(trx, c, 'in', 'desk-note-withheld', {}, `desk:note:withheld:${c.id}`))
      await wakeLane(outbox, c.id, 'in')
  } else await wakeLane(outbox, c.id, 'out')
  return { status: 'recorded', itemId: row.id, withheld, answered }
}

/**
 * An edited message (client's in their chat, or staff's in a topic): if its text or caption really changed, the
 * copy is edited by its lane. Returns whether an edit was queued.
 */
export async function recordEditedMessage(deps: Deps, desk: DeskRuntime, m: Message): Promise<boolean> {
  const content = storedContent(m)
  return deps.jobs.transaction(deps.db, async (trx, outbox) => {
    const row = await findBySource(trx, desk.botId, m.chat.id, m.message_id)
    if (!row || row.consultation_id === null || row.kind !== 'copy') return false
    if (row.state !== 'pending' && row.state !== 'sent') return false
    if (sameContent(row.content, content)) return false
    const r = await recordEdit(trx, row.id, content)
    if (!r) return false
    await wakeLane(outbox, row.consultation_id, row.direction)
    return true
  })
}
