import { audit } from '../audit/audit'
import { findModel } from '../config/drafting'
import type { DeskRuntime } from '../config/load'
import type { Deps } from '../deps'
import type { Usage } from '../llm/provider'
import type { ReconcileResult } from './drafting.model'
import { listUnknownDrafts, lockDraft, updateDraft } from './drafting.repository'
import { actualsFor, heldText, ledgerIn, postNote } from './drafting.service'
import { budgetAmount, formatMoney, priceMinor } from './price'

/** Admins settle drafts whose provider outcome is unknown (`/drafts`, `/draft_commit`, `/draft_release`). */

export interface UnknownDraftView {
  id: number
  consultationId: number
  requestedBy: number
  createdAt: Date
  held: string
  reason: string | null
  providerRequestId: string | null
}

/** Drafts whose provider outcome is unknown, oldest first: held on the ledger until an admin reconciles them. */
export async function unknownDrafts(deps: Deps, desk: DeskRuntime): Promise<UnknownDraftView[]> {
  return (await listUnknownDrafts(deps.db, desk.botId)).map((d) => ({
    id: d.id,
    consultationId: d.consultation_id,
    requestedBy: d.requested_by,
    createdAt: d.created_at,
    held: heldText(deps, d),
    reason: d.error,
    providerRequestId: d.provider_request_id,
  }))
}

/**
 * Settles a draft whose outcome was unknown, audited: commit (with the usage the provider's dashboard shows, or
 * the reserved upper bound when none is given) or release (the provider confirms nothing was billed).
 */
export async function reconcileDraft(
  deps: Deps,
  desk: DeskRuntime,
  input: { draftId: number; adminId: number; action: 'commit' | 'release'; usage?: Usage },
): Promise<ReconcileResult> {
  return deps.jobs.transaction(deps.db, async (trx, outbox) => {
    const d = await lockDraft(trx, input.draftId)
    if (!d || d.bot_id !== desk.botId) return { status: 'not_found' }
    if (d.state !== 'unknown')
      return { status: 'not_unknown', state: d.state, reconciliation: d.reconciliation }
    const llm = deps.config.llm
    const ledger = ledgerIn(deps, trx)
    const note = `draft ${d.id}: reconciled by ${input.adminId}`
    const model = d.model ? findModel(llm, d.model) : undefined
    let charged = ''
    let reconciliation: string
    if (input.action === 'commit') {
      const hold = await ledger.reservation(d.request_id)
      const u = input.usage
      const budgetActual =
        u && model && d.budget_unit ? budgetAmount(d.budget_unit, model, u.input, u.output) : null
      const s = await ledger.commit(d.request_id, hold ? actualsFor(hold, d, budgetActual) : undefined, {
        note,
      })
      if (!s.ok) return { status: 'ledger_refused', reason: `${s.reason}${s.state ? ` (${s.state})` : ''}` }
      const cost = u && model ? formatMoney(llm, priceMinor(model, u.input, u.output)) : '?'
      charged = u
        ? deps.i18n.t(desk.defaultLanguage, 'drafting-charged-usage', {
            input: u.input,
            output: u.output,
            cost,
          })
        : deps.i18n.t(desk.defaultLanguage, 'drafting-charged-bound', { held: heldText(deps, d) })
      reconciliation = u
        ? `committed: ${u.input} + ${u.output} tokens = ${cost}`
        : `committed: the reserved upper bound (${(d.est_input_tokens ?? 0) + (d.max_output_tokens ?? 0)} tokens)`
      await updateDraft(trx, d.id, {
        state: 'failed',
        input_tokens: u?.input ?? null,
        output_tokens: u?.output ?? null,
        cost: u && model ? priceMinor(model, u.input, u.output) : null,
        reconciled_by: input.adminId,
        reconciled_at: new Date(),
        reconciliation,
      })
    } else {
      const s = await ledger.release(d.request_id, { note })
      if (!s.ok) return { status: 'ledger_refused', reason: `${s.reason}${s.state ? ` (${s.state})` : ''}` }
      reconciliation = 'released'
      await updateDraft(trx, d.id, {
        state: 'failed',
        reconciled_by: input.adminId,
        reconciled_at: new Date(),
        reconciliation,
      })
    }
    await audit(trx, {
      botId: desk.botId,
      actorId: input.adminId,
      action: 'draft.reconciled',
      subjectType: 'draft',
      subjectId: d.id,
      details: {
        consultationId: d.consultation_id,
        action: input.action,
        usage: input.usage ?? null,
        requestId: d.request_id,
        providerRequestId: d.provider_request_id,
      },
    })
    await postNote(
      trx,
      outbox,
      desk,
      d.consultation_id,
      {
        key: input.action === 'commit' ? 'drafting-reconciled-commit' : 'drafting-reconciled-release',
        params: { id: String(d.id), admin: String(input.adminId), charged },
      },
      `draft:reconciled:${d.id}`,
    )
    return input.action === 'commit' ? { status: 'committed', charged } : { status: 'released' }
  })
}
