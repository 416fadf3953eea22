import { deskDrafting, findModel } from '../config/drafting'
import type { DeskRuntime } from '../config/load'
import { pick } from '../config/load'
import type { Deps } from '../deps'
import type { HandoffJob } from '../experts/handoff.jobs'
import type { Outbox } from '../jobs/jobs'
import { findTariff } from '../orders/tariffs'
import { notify } from '../telegram/notify'
import { draftRunQueue } from './drafting.jobs'
import type { DraftRefusal } from './drafting.model'
import {
  conversationForPrompt,
  type Draft,
  dbNow,
  draftingConsultation,
  findDraftByRequest,
  insertDraft,
  openAppealOf,
} from './drafting.repository'
import { HOLD_TTL_SECONDS, ledgerIn } from './drafting.service'
import { buildHandoffPrompt } from './prompt'
import { admissionLines, draftBase, ledgerRefusal, refusalNote, reservedFields } from './request'

/**
 * The hand-off summary (issue 25): when a consultation is handed over (/assign), its new owner gets a short LLM
 * summary of it in private. It is a draft of source `handoff` (one per assignment: request id
 * `handoff:<bot>:<assignment>`), admitted on the same ledger lines as any draft (the consultation's drafts, the
 * owner's daily cap, the desk's monthly budget), run by the same job (run.ts, not streamed), settled on the usage,
 * and delivered to the new owner (state `delivered`) instead of the topic; it has no Send button and never reaches
 * the client. A refusal (no drafts left, cap, budget, window over, tariff without drafts) tells the new owner
 * without a summary. A desk with drafting off (or no provider) sends nothing more than the hand-over notice.
 */

export type HandoffResult = 'queued' | 'refused' | 'duplicate' | 'skipped'

const HANDOFF_MAX_OUTPUT_TOKENS = 300

export async function requestHandoffSummary(deps: Deps, job: HandoffJob): Promise<HandoffResult> {
  const desk = deps.desk(job.botId)
  const requestId = `handoff:${job.botId}:${job.assignmentId}`
  return deps.jobs.transaction(deps.db, async (trx, outbox) => {
    if (await findDraftByRequest(trx, requestId)) return 'duplicate'
    const c = await draftingConsultation(trx, job.consultationId)
    if (!c || c.bot_id !== desk.botId) return 'skipped'
    const llm = deps.config.llm
    const settings = deskDrafting(llm, desk)
    const model = settings.model ? findModel(llm, settings.model) : undefined
    if (!settings.enabled || !model || !deps.llm.configured) return 'skipped'
    const appeal = await openAppealOf(trx, c.id)
    const base = draftBase(desk, c, appeal, {
      requestId,
      requestedBy: job.to,
      source: 'handoff',
      chatId: job.to,
      messageId: job.assignmentId,
      model: model.id,
    })
    const refuse = async (refusal: DraftRefusal): Promise<HandoffResult> => {
      const row = await insertDraft(trx, { ...base, state: 'refused', refusal: JSON.stringify(refusal) })
      if (!row) return 'duplicate'
      const n = refusalNote(refusal)
      await tellOwner(
        outbox,
        desk,
        row,
        'drafting-handoff-none',
        deps.i18n.t(desk.defaultLanguage, n.key, n.params),
      )
      return 'refused'
    }
    if (c.drafts === 0) return refuse({ reason: 'not_included', tariff: c.title })

    const tariff = findTariff(desk, c.tariff_code)
    const prompt = buildHandoffPrompt({
      tariffTitle: c.title,
      tariffDescription: tariff ? pick(tariff.description, c.lang, desk.defaultLanguage) : '',
      conversation: await conversationForPrompt(trx, c.id),
      maxPromptTokens: llm.maxPromptTokens,
    })
    const maxOut = Math.min(llm.maxOutputTokens, HANDOFF_MAX_OUTPUT_TOKENS)
    const at = await dbNow(trx)
    const ledger = ledgerIn(deps, trx)
    const { lines, kinds, budget } = await admissionLines(ledger, desk, settings, {
      consultationId: c.id,
      staffId: job.to,
      model,
      inputTokens: prompt.estimatedTokens,
      outputTokens: maxOut,
      at,
      // The consultation's drafts account whose period holds now (a plan's current period).
      questionAcceptedAt: at,
    })
    const r = await ledger.reserve({
      requestId,
      lines,
      concurrency: { key: `drafts:desk:${desk.botId}`, max: settings.concurrency },
      ttlSeconds: HOLD_TTL_SECONDS,
      at,
    })
    if (!r.admitted) return refuse(ledgerRefusal(deps, desk, c, r, kinds))
    const row = await insertDraft(trx, {
      ...base,
      state: 'queued',
      ...reservedFields({ prompt, maxOut, budget, at, admitted: true }),
    })
    if (!row) return 'duplicate'
    await outbox.send(draftRunQueue, { draftId: row.id })
    return 'queued'
  })
}

/**
 * The settled summary (or why there is none) to the new owner in private, once per draft. Called in the settle's
 * transaction (run.ts).
 */
export async function handoffDelivered(
  outbox: Outbox,
  desk: DeskRuntime,
  d: Draft,
  text: string | null,
  detail: string,
): Promise<void> {
  if (text)
    await notify(outbox, {
      botId: desk.botId,
      chatId: d.requested_by,
      lang: desk.defaultLanguage,
      key: 'drafting-handoff-summary',
      params: { consultation: String(d.consultation_id), text, usage: detail },
      dedupeKey: `draft:handoff:${d.id}`,
    })
  else await tellOwner(outbox, desk, d, 'drafting-handoff-none', detail)
}

async function tellOwner(
  outbox: Outbox,
  desk: DeskRuntime,
  d: Pick<Draft, 'id' | 'consultation_id' | 'requested_by'>,
  key: string,
  reason: string,
): Promise<void> {
  await notify(outbox, {
    botId: desk.botId,
    chatId: d.requested_by,
    lang: desk.defaultLanguage,
    key,
    params: { consultation: String(d.consultation_id), reason },
    dedupeKey: `draft:handoff:${d.id}`,
  })
}
