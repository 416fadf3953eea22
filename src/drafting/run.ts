import { InlineKeyboard } from 'grammy'
import type { InlineKeyboardMarkup } from 'grammy/types'
import { findModel } from '../config/drafting'
import type { DeskRuntime } from '../config/load'
import type { Trx } from '../db/database'
import type { Deps } from '../deps'
import { errorSummary, type Outbox } from '../jobs/jobs'
import type { CompletionOutcome } from '../llm/provider'
import { metrics } from '../metrics'
import { notify } from '../telegram/notify'
import type { RunResult } from './drafting.model'
import { claimForCall, type Draft, dbNow, findDraft, lockDraft, updateDraft } from './drafting.repository'
import { actualsFor, draftText, heldText, ledgerIn, postDraft, postNote } from './drafting.service'
import { handoffDelivered } from './handoff'
import { budgetAmount, formatMoney, priceMinor } from './price'
import { startStream, watchStop } from './stream'

/** The draft job (`runDraft`): one provider call outside any transaction, then the settle of the hold. */

/** The job does not start a call whose hold would expire before the call's deadline (plus this margin). */
const START_MARGIN_MS = 30_000
export async function runDraft(deps: Deps, draftId: number): Promise<RunResult> {
  const d = await findDraft(deps.db, draftId)
  if (!d) return { status: 'skipped', state: 'missing' }
  // A previous attempt got as far as the call: it may have reached the provider. Never call twice.
  if (d.state === 'calling')
    return settle(deps, d, {
      kind: 'unknown',
      reason: 'the worker stopped during the provider call',
      providerRequestId: null,
    })
  if (d.state !== 'queued') return { status: 'skipped', state: d.state }
  const model = d.model ? findModel(deps.config.llm, d.model) : undefined
  const timeoutMs = deps.config.llm.timeoutMs

  const claim = await deps.db.transaction().execute(async (trx) => {
    const row = await lockDraft(trx, draftId)
    if (row?.state !== 'queued') return 'gone' as const
    const hold = await ledgerIn(deps, trx).reservation(row.request_id)
    if (hold?.state !== 'reserved') return 'hold_gone' as const
    if (!model || !row.prompt) return 'model_gone' as const
    if (row.stop_requested_at) return 'stopped' as const
    const now = await dbNow(trx)
    if (hold.expiresAt && hold.expiresAt.getTime() - now.getTime() < timeoutMs + START_MARGIN_MS)
      return 'late' as const
    await claimForCall(trx, draftId)
    return 'ok' as const
  })
  if (claim === 'gone') return { status: 'skipped', state: 'not queued' }
  if (claim !== 'ok') {
    const reason =
      claim === 'model_gone'
        ? `model ${d.model} is no longer allowed`
        : claim === 'stopped'
          ? 'stopped before the call; not sent'
          : 'the draft waited too long in the queue; not sent'
    return settle(deps, d, { kind: 'unbilled', reason, providerRequestId: null }, 'queued')
  }

  // A hand-off summary is read by its new owner when it is ready; a draft is streamed to whoever asked for it.
  const streamer = d.source === 'handoff' ? null : await startStream(deps, d)
  const stop = new AbortController()
  const unwatch = watchStop(deps, d.id, () => stop.abort())
  let outcome: CompletionOutcome
  try {
    outcome = await deps.llm.complete({
      model: model!,
      messages: d.prompt!,
      maxOutputTokens: d.max_output_tokens ?? deps.config.llm.maxOutputTokens,
      requestId: d.request_id,
      stop: stop.signal,
      ...(streamer ? { onText: (text: string) => streamer.update(text) } : {}),
    })
  } finally {
    unwatch()
  }
  deps.log.info(
    {
      draft_id: d.id,
      consultation_id: d.consultation_id,
      outcome: outcome.kind,
      ...(outcome.kind === 'ok'
        ? { usage: outcome.usage }
        : outcome.kind === 'stopped'
          ? { chunks: outcome.chunks }
          : { reason: outcome.reason }),
      providerRequestId: outcome.providerRequestId,
    },
    'draft: provider call finished',
  )
  const result = await settle(deps, d, outcome)
  await streamer?.finish()
  return result
}

/**
 * Settles the hold with the outcome, in one transaction with the draft's state and the topic note. Retried a few
 * times in-process: a draft the provider already wrote (and billed) should not be lost to a brief database error.
 */
async function settle(
  deps: Deps,
  d: Draft,
  outcome: CompletionOutcome,
  from: 'calling' | 'queued' = 'calling',
): Promise<RunResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await deps.jobs.transaction(deps.db, (trx, outbox) =>
        settleIn(trx, outbox, deps, d.id, outcome, from),
      )
    } catch (err) {
      if (attempt >= 3) throw err
      deps.log.warn({ draft_id: d.id, attempt, err: errorSummary(err) }, 'draft: settle failed; retrying')
      await new Promise((r) => setTimeout(r, 250 * attempt))
    }
  }
}

async function settleIn(
  trx: Trx,
  outbox: Outbox,
  deps: Deps,
  draftId: number,
  outcome: CompletionOutcome,
  from: 'calling' | 'queued',
): Promise<RunResult> {
  const d = await lockDraft(trx, draftId)
  if (!d || d.state !== from) return { status: 'skipped', state: d?.state ?? 'missing' }
  const desk = deps.desk(d.bot_id)
  const ledger = ledgerIn(deps, trx)
  const llm = deps.config.llm
  const model = d.model ? findModel(llm, d.model) : undefined
  const held = heldText(deps, d)

  if (outcome.kind === 'ok' || outcome.kind === 'stopped') {
    // A Stop and the call's end are ordered by this row's lock (stopDraft takes it too). A Stop committed before
    // this settle wins even if the call finished meanwhile: its presser was told "Stopping", so the draft settles
    // as stopped, charged as one. A Stop after it finds the draft finished and says so.
    const stopped = outcome.kind === 'stopped' || d.stop_requested_at !== null
    const hold = await ledger.reservation(d.request_id)
    // Stopped: the prompt was read in full (its estimate, as reserved) and the chunks received were generated; a
    // stopped stream reports no usage. Never more than the reservation's bound.
    const maxOut = d.max_output_tokens ?? llm.maxOutputTokens
    const usage = stopped
      ? { input: d.est_input_tokens ?? 0, output: Math.min(outcome.chunks, maxOut) }
      : outcome.usage
    const budgetActual =
      usage && model && d.budget_unit ? budgetAmount(d.budget_unit, model, usage.input, usage.output) : null
    const actuals = hold
      ? actualsFor(hold, d, budgetActual, stopped ? 'at_most_reserved' : 'as_used')
      : undefined
    const s = await ledger.commit(d.request_id, actuals, {
      note: usage
        ? `draft ${d.id}: ${usage.input} + ${usage.output} tokens${stopped ? ' (stopped)' : ''}`
        : `draft ${d.id}: usage not reported; charged the reserved upper bound`,
    })
    if (!s.ok)
      deps.log.error({ draft_id: d.id, reason: s.reason, state: s.state }, 'draft: ledger refused the commit')
    const { text, truncated } = draftText(outcome.text)
    const cost = usage && model ? priceMinor(model, usage.input, usage.output) : null
    // Counted when the draft is settled (once: the draft row is locked in state `from`).
    if (usage) {
      metrics.llmTokens.inc({ direction: 'input' }, usage.input)
      metrics.llmTokens.inc({ direction: 'output' }, usage.output)
    }
    if (cost !== null) metrics.llmCost.inc({ currency: llm.currency }, cost)
    const charged = usage
      ? deps.i18n.t(desk.defaultLanguage, stopped ? 'drafting-usage-stopped' : 'drafting-usage', {
          input: usage.input,
          output: usage.output,
          cost: cost === null ? '?' : formatMoney(llm, cost),
        })
      : deps.i18n.t(desk.defaultLanguage, 'drafting-usage-unreported', { held })
    const handoff = d.source === 'handoff'
    await updateDraft(trx, d.id, {
      state: text ? (handoff ? 'delivered' : 'ready') : 'failed',
      text: text || null,
      truncated,
      input_tokens: usage?.input ?? null,
      output_tokens: usage?.output ?? null,
      cost,
      overrun: s.ok && s.overrun,
      provider_request_id: outcome.providerRequestId,
      finish_reason: stopped ? 'stopped' : outcome.kind === 'ok' ? outcome.finishReason : null,
      prompt: null,
      error: s.ok ? (text ? null : 'empty draft') : `ledger: ${s.reason}${s.state ? ` (${s.state})` : ''}`,
    })
    if (handoff) {
      await handoffDelivered(outbox, desk, d, text || null, charged)
      return text
        ? { status: 'ready', overrun: s.ok && s.overrun }
        : { status: 'failed', charged: false, reason: 'empty' }
    }
    if (!text) {
      await postNote(
        trx,
        outbox,
        desk,
        d.consultation_id,
        { key: 'drafting-empty', params: { id: String(d.id), usage: charged } },
        `draft:result:${d.id}`,
        retryMarkup(deps, desk, d.consultation_id),
      )
      await streamFinal(outbox, desk, d, 'drafting-stream-failed', '')
      return { status: 'failed', charged: false, reason: 'empty draft' }
    }
    await postDraft(trx, outbox, deps, desk, { ...d, text, truncated, version: d.version }, charged)
    await streamFinal(outbox, desk, d, stopped ? 'drafting-stream-stopped' : 'drafting-stream-done', text)
    return { status: 'ready', overrun: s.ok && s.overrun }
  }

  if (outcome.kind === 'unbilled') {
    const s = await ledger.release(d.request_id, { note: `draft ${d.id}: ${outcome.reason}` })
    await updateDraft(trx, d.id, { state: 'failed', error: outcome.reason, prompt: null })
    if (d.source === 'handoff') await handoffDelivered(outbox, desk, d, null, outcome.reason)
    else
      await postNote(
        trx,
        outbox,
        desk,
        d.consultation_id,
        { key: 'drafting-failed-unbilled', params: { id: String(d.id), reason: outcome.reason } },
        `draft:result:${d.id}`,
        retryMarkup(deps, desk, d.consultation_id),
      )
    if (!s.ok && s.state !== 'expired')
      deps.log.error(
        { draft_id: d.id, reason: s.reason, state: s.state },
        'draft: ledger refused the release',
      )
    return { status: 'failed', charged: false, reason: outcome.reason }
  }

  // Sent, outcome unknown: the hold stays (it may have been spent) until an admin reconciles it.
  const s = await ledger.markUnknown(d.request_id, { note: `draft ${d.id}: ${outcome.reason}` })
  if (!s.ok)
    deps.log.error({ draft_id: d.id, reason: s.reason, state: s.state }, 'draft: ledger refused mark-unknown')
  await updateDraft(trx, d.id, {
    state: 'unknown',
    error: s.ok ? outcome.reason : `${outcome.reason}; ledger: ${s.reason}`,
    provider_request_id: outcome.providerRequestId,
    prompt: null,
  })
  if (d.source === 'handoff') await handoffDelivered(outbox, desk, d, null, outcome.reason)
  await streamFinal(outbox, desk, d, 'drafting-stream-failed', '')
  await postNote(
    trx,
    outbox,
    desk,
    d.consultation_id,
    { key: 'drafting-failed-unknown', params: { id: String(d.id), reason: outcome.reason, held } },
    `draft:result:${d.id}`,
  )
  return { status: 'unknown', reason: outcome.reason }
}

/**
 * The end of a streamed draft in the expert's private chat, once: the whole text (or the part written until a Stop)
 * as a message that stays, or why there is none. Through the outbox, so it waits for the chat's window without
 * holding a worker. Nothing when the draft was not streamed.
 */
async function streamFinal(outbox: Outbox, desk: DeskRuntime, d: Draft, key: string, text: string) {
  if (d.stream_chat_id === null) return
  await notify(outbox, {
    botId: desk.botId,
    chatId: d.stream_chat_id,
    lang: desk.defaultLanguage,
    key,
    params: { id: String(d.id), text },
    dedupeKey: `draft:stream:${d.id}`,
  })
}

function retryMarkup(deps: Deps, desk: DeskRuntime, consultationId: number): InlineKeyboardMarkup {
  return new InlineKeyboard().text(
    deps.i18n.t(desk.defaultLanguage, 'drafting-btn-retry'),
    `dr:new:${consultationId}`,
  )
}
