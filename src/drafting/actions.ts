import { audit } from '../audit/audit'
import { mayActOn } from '../config/access'
import type { DeskRuntime } from '../config/load'
import { recordStaffAnswer } from '../consultations/answers'
import type { Trx } from '../db/database'
import type { Deps } from '../deps'
import type { ActionResult } from './drafting.model'
import {
  consultationGroup,
  type Draft,
  findEdit,
  hasEditingDraft,
  insertEdit,
  lockDraft,
  lockEditingDraft,
  updateDraft,
} from './drafting.repository'

import { draftText, postDraft, postNote } from './drafting.service'

/** What staff do with a posted draft: Send (the desk's path for an answer), Discard, Edit and its capture. */

/** An edit started with the Edit button takes the expert's next text in the topic within this many minutes. */
export const EDIT_WINDOW_MINUTES = 30
export interface DraftAction {
  draftId: number
  /** The version the pressed button was on. */
  version: number
  staffId: number
}

/**
 * Send to client: the desk's path for an expert answer (recordStaffAnswer: the appeal gets its first response and
 * who answered, the ledger unit of the appeal is committed, the text goes through the client lane), in the same
 * transaction that marks the draft sent and records who approved it. A second tap finds it sent.
 */
export async function sendDraft(deps: Deps, desk: DeskRuntime, a: DraftAction): Promise<ActionResult> {
  return deps.jobs.transaction(deps.db, async (trx, outbox) => {
    const d = await lockDraft(trx, a.draftId)
    if (!d || d.bot_id !== desk.botId) return { status: 'not_found' }
    if (!(await mayActOnDraft(trx, desk, d, a.staffId))) return { status: 'other-group' }
    if (d.state === 'sent' || d.state === 'discarded') return { status: 'already', state: d.state }
    if (d.state !== 'ready' && d.state !== 'editing') return { status: 'not_ready', state: d.state }
    if (d.version !== a.version) return { status: 'stale', version: d.version }
    const r = await recordStaffAnswer(trx, outbox, deps, desk, {
      consultationId: d.consultation_id,
      staffId: a.staffId,
      item: { kind: 'text', text: d.text ?? '' },
    })
    if (r.status !== 'recorded') return { status: 'not_ready', state: `consultation ${r.status}` }
    await updateDraft(trx, d.id, {
      state: 'sent',
      approved_by: a.staffId,
      sent_item_id: r.itemId,
      sent_at: new Date(),
      editing_by: null,
      editing_since: null,
    })
    await audit(trx, {
      botId: desk.botId,
      actorId: a.staffId,
      action: 'draft.sent',
      subjectType: 'draft',
      subjectId: d.id,
      details: {
        consultationId: d.consultation_id,
        version: d.version,
        requestedBy: d.requested_by,
        approvedBy: a.staffId,
        itemId: r.itemId,
        appealId: r.answered?.appealId ?? null,
        withheld: r.withheld,
      },
    })
    return r.withheld ? { status: 'withheld' } : { status: 'done' }
  })
}

export async function discardDraft(deps: Deps, desk: DeskRuntime, a: DraftAction): Promise<ActionResult> {
  return deps.jobs.transaction(deps.db, async (trx) => {
    const d = await lockDraft(trx, a.draftId)
    if (!d || d.bot_id !== desk.botId) return { status: 'not_found' }
    if (!(await mayActOnDraft(trx, desk, d, a.staffId))) return { status: 'other-group' }
    if (d.state === 'sent' || d.state === 'discarded') return { status: 'already', state: d.state }
    if (d.state !== 'ready' && d.state !== 'editing') return { status: 'not_ready', state: d.state }
    await updateDraft(trx, d.id, {
      state: 'discarded',
      discarded_by: a.staffId,
      discarded_at: new Date(),
      editing_by: null,
      editing_since: null,
    })
    await audit(trx, {
      botId: desk.botId,
      actorId: a.staffId,
      action: 'draft.discarded',
      subjectType: 'draft',
      subjectId: d.id,
      details: { consultationId: d.consultation_id, version: d.version },
    })
    return { status: 'done' }
  })
}

/** Edit: the staff member's next text in the topic becomes the draft's next version (offered again with Send). */
export async function startEdit(deps: Deps, desk: DeskRuntime, a: DraftAction): Promise<ActionResult> {
  return deps.jobs.transaction(deps.db, async (trx, outbox) => {
    const d = await lockDraft(trx, a.draftId)
    if (!d || d.bot_id !== desk.botId) return { status: 'not_found' }
    if (!(await mayActOnDraft(trx, desk, d, a.staffId))) return { status: 'other-group' }
    if (d.state === 'sent' || d.state === 'discarded') return { status: 'already', state: d.state }
    if (d.state !== 'ready' && d.state !== 'editing') return { status: 'not_ready', state: d.state }
    if (d.version !== a.version) return { status: 'stale', version: d.version }
    if (d.state === 'editing' && d.editing_by === a.staffId) return { status: 'already', state: d.state }
    await updateDraft(trx, d.id, { state: 'editing', editing_by: a.staffId, editing_since: new Date() })
    await postNote(
      trx,
      outbox,
      desk,
      d.consultation_id,
      { key: 'drafting-edit-prompt', params: { id: String(d.id), minutes: EDIT_WINDOW_MINUTES } },
      `draft:edit:${d.id}:${d.version}:${a.staffId}`,
    )
    return { status: 'done' }
  })
}

/**
 * Stop (in the topic while the draft is written, and in the requesting expert's private chat while it streams):
 * marks the draft's stop flag under its row lock; the job running the provider call, in whichever process, sees it
 * within a moment (stream.ts watchStop), cancels the call and settles only what was used; the part written so far is
 * posted as a draft (never sent to the client). A draft still queued is not called at all. A second press, or a
 * press after the draft was finished, changes nothing. Judged in the draft's consultation's own group, at the press
 * and again here under the lock. The settle (run.ts) takes the same lock: a press that finds the draft still
 * queued or calling wins even if the call has just finished (the settle honours the flag), one after it is told the
 * draft is finished, so the answer always names the outcome.
 */
export async function stopDraft(
  deps: Deps,
  desk: DeskRuntime,
  a: { draftId: number; staffId: number },
): Promise<ActionResult> {
  return deps.jobs.transaction(deps.db, async (trx) => {
    const d = await lockDraft(trx, a.draftId)
    if (!d || d.bot_id !== desk.botId || d.source === 'handoff') return { status: 'not_found' }
    if (!(await mayActOnDraft(trx, desk, d, a.staffId))) return { status: 'other-group' }
    if (d.stop_requested_at) return { status: 'already', state: 'stopped' }
    if (d.state !== 'queued' && d.state !== 'calling') return { status: 'already', state: 'finished' }
    await updateDraft(trx, d.id, { stop_requested_by: a.staffId, stop_requested_at: new Date() })
    await audit(trx, {
      botId: desk.botId,
      actorId: a.staffId,
      action: 'draft.stopped',
      subjectType: 'draft',
      subjectId: d.id,
      details: { consultationId: d.consultation_id, state: d.state, requestedBy: d.requested_by },
    })
    return { status: 'done' }
  })
}

/** A draft's buttons are judged in its consultation's own group, not in the chat where they were pressed. */
async function mayActOnDraft(trx: Trx, desk: DeskRuntime, d: Draft, staffId: number): Promise<boolean> {
  const c = await consultationGroup(trx, d.consultation_id)
  return !!c && mayActOn(desk, c, staffId)
}

/**
 * Whether a staff member's text in a topic belongs to drafting: they are editing a draft, or this very message was
 * already taken as an edit (a redelivery). The desk relays it to the client only when not.
 */
export function isEditingDraft(
  deps: Deps,
  desk: DeskRuntime,
  input: { staffId: number; chatId: number; messageId: number },
): Promise<boolean> {
  return hasEditingDraft(deps.db, desk.botId, input.staffId, input.chatId, input.messageId)
}

export type CaptureResult = 'captured' | 'duplicate' | 'none'

/**
 * A staff message in a consultation topic while that staff member is editing a draft there: it becomes the
 * draft's next version, posted with the buttons again, and is never relayed to the client by itself. A redelivered
 * update finds its draft_edit row ('duplicate': still not relayed). 'none': not an edit, the desk handles it.
 */
export async function captureEdit(
  deps: Deps,
  desk: DeskRuntime,
  input: { consultationId: number; staffId: number; chatId: number; messageId: number; text: string },
): Promise<CaptureResult> {
  if (await findEdit(deps.db, desk.botId, input.chatId, input.messageId)) return 'duplicate'
  return deps.jobs.transaction(deps.db, async (trx, outbox) => {
    const d = await lockEditingDraft(trx, input.consultationId, input.staffId, EDIT_WINDOW_MINUTES)
    if (!d) return (await findEdit(trx, desk.botId, input.chatId, input.messageId)) ? 'duplicate' : 'none'
    const version = d.version + 1
    if (!(await insertEdit(trx, { ...input, botId: desk.botId, draftId: d.id, version }))) return 'duplicate'
    const { text, truncated } = draftText(input.text)
    await updateDraft(trx, d.id, {
      state: 'ready',
      text,
      truncated,
      version,
      editing_by: null,
      editing_since: null,
    })
    await audit(trx, {
      botId: desk.botId,
      actorId: input.staffId,
      action: 'draft.edited',
      subjectType: 'draft',
      subjectId: d.id,
      details: { consultationId: d.consultation_id, version, messageId: input.messageId },
    })
    const usage = deps.i18n.t(desk.defaultLanguage, 'drafting-edited-by', { staff: String(input.staffId) })
    await postDraft(trx, outbox, deps, desk, { ...d, text, truncated, version }, usage)
    return 'captured'
  })
}
