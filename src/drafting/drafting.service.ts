import { InlineKeyboard } from 'grammy'
import type { InlineKeyboardMarkup } from 'grammy/types'
import type { Insertable } from 'kysely'
import { DateTime } from 'luxon'
import { audit } from '../audit/audit'
import { type DeskDrafting, deskDrafting, findModel, type ModelPrice } from '../config/drafting'
import { type DeskRuntime, pick } from '../config/load'
import { recordStaffAnswer } from '../consultations/answers'
import { postToTopic } from '../consultations/desk.service'
import type { Database, Trx } from '../db/database'
import type { Deps } from '../deps'
import { errorSummary, type Outbox } from '../jobs/jobs'
import type { Refusal, ReservationView, ReserveLine } from '../ledger/ledger.model'
import { dailyPeriod, monthlyPeriod, type Period } from '../ledger/ledger.periods'
import { LedgerTx } from '../ledger/ledger.service'
import type { CompletionOutcome, Usage } from '../llm/provider'
import { CONSULTATION_SCOPE, DRAFTS_UNIT } from '../orders/allowances'
import { findTariff } from '../orders/tariffs'
import { draftRunQueue } from './drafting.jobs'
import type { ActionResult, DraftRefusal, ReconcileResult, RequestResult, RunResult } from './drafting.model'
import {
  claimForCall,
  conversationForPrompt,
  type Draft,
  type DraftingConsultation,
  dbNow,
  draftingConsultation,
  findDraft,
  findDraftByRequest,
  findEdit,
  hasEditingDraft,
  insertDraft,
  insertEdit,
  listUnknownDrafts,
  lockDraft,
  lockEditingDraft,
  openAppealOf,
  updateDraft,
} from './drafting.repository'
import type { DraftSource } from './drafting.tables'
import { budgetAmount, formatBudget, formatMoney, priceMinor } from './price'
import { buildPrompt } from './prompt'

/**
 * AI drafts for experts: reserve -> job -> LLM -> settle, and what experts and admins do with the result.
 *
 * Admission (`requestDraft`) is one short transaction: the draft row (unique by request id), one atomic ledger
 * reservation across every scope that applies (the consultation's drafts, the expert's day, the desk's month, with
 * the desk's concurrency limit), the job, and the topic note, all committed together or not at all. The provider
 * call runs in the job (`runDraft`), outside any transaction; its outcome settles the hold in another short one.
 * Nothing reaches the client until a staff member presses Send (`sendDraft`), which goes through the desk's own
 * path for an expert answer, so the appeal records its first response and who gave it.
 */

/** How long a draft's hold may stay reserved before the ledger's sweeper returns it (queue wait + call + margin). */
export const HOLD_TTL_SECONDS = 30 * 60
/** The job does not start a call whose hold would expire before the call's deadline (plus this margin). */
const START_MARGIN_MS = 30_000
/** An edit started with the Edit button takes the expert's next text in the topic within this many minutes. */
export const EDIT_WINDOW_MINUTES = 30
/** Drafts are cut to this many characters: the topic message (header + draft) and the client's copy fit 4096. */
export const DRAFT_TEXT_MAX = 3500

export const EXPERT_SCOPE = 'expert'
export const DESK_SCOPE = 'desk'
export const BUDGET_UNITS = { money: 'llm_money', tokens: 'llm_tokens' } as const

type LineKind = 'consultation' | 'expert' | 'budget'

function ledgerIn(deps: Deps, trx: Trx): LedgerTx {
  return new LedgerTx(trx, deps.config.ledger.overrunPolicy, HOLD_TTL_SECONDS)
}

/**
 * The request id: from the /draft message (unique in its chat), or from the message the button is on plus the
 * staff member who pressed it (a callback query's id differs on every tap, so it cannot be the key).
 */
export function draftRequestId(
  botId: number,
  input: { source: DraftSource; chatId: number; messageId: number; staffId: number },
): string {
  const base = `draft:${botId}:${input.chatId}:${input.messageId}`
  return input.source === 'command' ? base : `${base}:u${input.staffId}`
}

/** The "Draft answer" button for a message in a consultation topic (e.g. a client's message copied there). */
// ---------------------------------------------------------------------------------------------------------------
// Admission

export interface DraftRequestInput {
  consultationId: number
  staffId: number
  source: DraftSource
  /** The /draft message, or the message carrying the pressed button. */
  chatId: number
  messageId: number
  instruction?: string | null
  /** A model other than the desk's (must be on the allowlist). */
  model?: string | null
  /** The instant the admission is judged at (periods of the expert's day and the desk's month). Default: the database clock. */
  at?: Date
}

export async function requestDraft(
  deps: Deps,
  desk: DeskRuntime,
  input: DraftRequestInput,
): Promise<RequestResult> {
  const requestId = draftRequestId(desk.botId, input)
  return deps.jobs.transaction(deps.db, async (trx, outbox) => {
    const existing = await findDraftByRequest(trx, requestId)
    if (existing) return { status: 'duplicate', draftId: existing.id, requestId }
    const c = await draftingConsultation(trx, input.consultationId)
    if (!c || c.bot_id !== desk.botId) return { status: 'ignored' }

    const llm = deps.config.llm
    const settings = deskDrafting(llm, desk)
    const modelId = input.model?.trim() || settings.model
    const appeal = await openAppealOf(trx, c.id)
    const base = {
      bot_id: desk.botId,
      consultation_id: c.id,
      appeal_id: appeal?.id ?? null,
      request_id: requestId,
      requested_by: input.staffId,
      source: input.source,
      source_chat_id: input.chatId,
      source_message_id: input.messageId,
      instruction: input.instruction?.trim() || null,
      model: modelId,
    }
    const refuse = (refusal: DraftRefusal) => refuseDraft(trx, outbox, desk, base, refusal)

    if (!settings.enabled) return refuse({ reason: 'disabled' })
    if (!modelId || !deps.llm.configured) return refuse({ reason: 'provider_unavailable' })
    if (c.drafts === 0) return refuse({ reason: 'not_included', tariff: c.title })
    const model = findModel(llm, modelId)
    if (!model)
      return refuse({
        reason: 'model_not_allowed',
        model: modelId,
        allowed: llm.models.map((m) => m.id).join(', '),
      })
    if (!appeal) return refuse({ reason: 'no_open_appeal' })

    const tariff = findTariff(desk, c.tariff_code)
    const prompt = buildPrompt({
      tariffTitle: c.title,
      tariffDescription: tariff ? pick(tariff.description, c.lang, desk.defaultLanguage) : '',
      terms: pick(desk.terms.text, c.lang, desk.defaultLanguage),
      instructions: settings.instructions,
      instruction: base.instruction,
      conversation: await conversationForPrompt(trx, c.id),
      appealId: appeal.id,
      maxPromptTokens: llm.maxPromptTokens,
    })
    const maxOut = llm.maxOutputTokens
    const at = input.at ?? (await dbNow(trx))
    const ledger = ledgerIn(deps, trx)
    const { lines, kinds, budget } = await admissionLines(ledger, desk, settings, {
      consultationId: c.id,
      staffId: input.staffId,
      model,
      inputTokens: prompt.estimatedTokens,
      outputTokens: maxOut,
      at,
      questionAcceptedAt: appeal.accepted_at,
    })
    const r = await ledger.reserve({
      requestId,
      lines,
      concurrency: { key: `drafts:desk:${desk.botId}`, max: settings.concurrency },
      ttlSeconds: HOLD_TTL_SECONDS,
      at,
    })
    const refusal = r.admitted ? null : ledgerRefusal(deps, desk, c, r, kinds)
    const row = await insertDraft(trx, {
      ...base,
      state: r.admitted ? 'queued' : 'refused',
      refusal: refusal ? JSON.stringify(refusal) : null,
      prompt: r.admitted ? JSON.stringify(prompt.messages) : null,
      est_input_tokens: prompt.estimatedTokens,
      max_output_tokens: maxOut,
      budget_unit: budget?.unit ?? null,
      budget_reserved: budget?.amount ?? null,
      reserved_at: at,
    })
    // A concurrent delivery of the same update inserted it first (its reservation is the one the ledger kept).
    if (!row) return { status: 'duplicate', draftId: null, requestId }
    if (!r.admitted) {
      await postNote(trx, outbox, desk, c.id, refusalNote(refusal!), `draft:note:${requestId}`)
      return { status: 'refused', draftId: row.id, requestId, refusal: refusal! }
    }
    const drafts = r.lines[0]!.account!
    const maxTokens = prompt.estimatedTokens + maxOut
    await outbox.send(draftRunQueue, { draftId: row.id })
    await postNote(
      trx,
      outbox,
      desk,
      c.id,
      {
        key: 'drafting-ack',
        params: {
          id: row.id,
          left: drafts.available,
          total: drafts.granted,
          tokens: maxTokens,
          model: model.id,
        },
      },
      `draft:note:${requestId}`,
    )
    return {
      status: 'queued',
      draftId: row.id,
      requestId,
      left: drafts.available,
      total: drafts.granted,
      maxTokens,
    }
  })
}

/**
 * The ledger lines of a draft, in a fixed order: the consultation's drafts (by key: the account whose period, the
 * consultation's window, contains the instant the question was accepted — so a question accepted at 17:59 can
 * still be drafted for at 18:30, after the window closed), the expert's daily cap and the desk's monthly budget
 * (both of the instant the draft is asked for). The cap and budget accounts of the period are created on first use
 * by an idempotent grant in this same transaction; when the configured amount changed since, the account is adjusted
 * to it (journal reason `adjust`).
 */
async function admissionLines(
  ledger: LedgerTx,
  desk: DeskRuntime,
  settings: DeskDrafting,
  a: {
    consultationId: number
    staffId: number
    model: ModelPrice
    inputTokens: number
    outputTokens: number
    at: Date
    questionAcceptedAt: Date
  },
): Promise<{
  lines: ReserveLine[]
  kinds: LineKind[]
  budget: { unit: 'money' | 'tokens'; amount: number } | null
}> {
  const tz = desk.schedule.timezone
  const lines: ReserveLine[] = [
    {
      account: { scope: CONSULTATION_SCOPE, subject: a.consultationId, unit: DRAFTS_UNIT },
      amount: 1,
      at: a.questionAcceptedAt,
    },
  ]
  const kinds: LineKind[] = ['consultation']
  if (settings.expertDailyCap !== null) {
    const subject = `${desk.botId}:${a.staffId}`
    await ensureAccount(
      ledger,
      EXPERT_SCOPE,
      subject,
      DRAFTS_UNIT,
      dailyPeriod(a.at, tz),
      tz,
      settings.expertDailyCap,
    )
    lines.push({ account: { scope: EXPERT_SCOPE, subject, unit: DRAFTS_UNIT }, amount: 1 })
    kinds.push('expert')
  }
  let budget: { unit: 'money' | 'tokens'; amount: number } | null = null
  if (settings.monthlyBudget !== null) {
    const { unit, amount: limit } = settings.monthlyBudget
    const subject = String(desk.botId)
    await ensureAccount(ledger, DESK_SCOPE, subject, BUDGET_UNITS[unit], monthlyPeriod(a.at, tz), tz, limit)
    // A ledger amount is positive: a free model still holds one unit while it runs.
    const amount = Math.max(1, budgetAmount(unit, a.model, a.inputTokens, a.outputTokens))
    lines.push({ account: { scope: DESK_SCOPE, subject, unit: BUDGET_UNITS[unit] }, amount })
    kinds.push('budget')
    budget = { unit, amount }
  }
  return { lines, kinds, budget }
}

async function ensureAccount(
  ledger: LedgerTx,
  scope: string,
  subject: string,
  unit: string,
  period: Period,
  timeZone: string,
  amount: number,
): Promise<void> {
  const g = await ledger.grant({
    requestId: `drafting:${scope}:${subject}:${unit}:${period.start.toISOString()}`,
    scope,
    subject,
    unit,
    periodStart: period.start,
    periodEnd: period.end,
    amount,
    timeZone,
  })
  if (g.ok || g.reason !== 'conflict' || g.accountId === null) return
  const current = await ledger.balance({ accountId: g.accountId })
  if (current && current.granted !== amount)
    await ledger.adjust({
      accountId: g.accountId,
      dGranted: amount - current.granted,
      note: `drafting: configured limit changed from ${current.granted} to ${amount}`,
    })
}

/** A ledger refusal as the topic shows it, with the numbers of the line that refused. */
function ledgerRefusal(
  deps: Deps,
  desk: DeskRuntime,
  c: DraftingConsultation,
  r: Refusal,
  kinds: LineKind[],
): DraftRefusal {
  if (r.reason === 'over_concurrency')
    return { reason: 'too_many_running', running: r.concurrency?.active ?? 0, max: r.concurrency?.max ?? 0 }
  const kind = r.line === null ? undefined : kinds[r.line]
  const a = r.account
  if (r.reason === 'no_account' || r.reason === 'inactive')
    return kind === 'consultation' ? { reason: 'not_active', state: c.state } : { reason: 'unavailable' }
  if ((r.reason !== 'exhausted' && r.reason !== 'held_by_active') || !a || !kind)
    return { reason: 'unavailable' }
  if (kind === 'consultation')
    return { reason: 'no_drafts_left', left: Math.max(0, a.available), total: a.granted, held: a.activeHolds }
  if (kind === 'expert') {
    const end = DateTime.fromJSDate(a.periodEnd, { zone: a.timeZone })
    return {
      reason: 'expert_cap',
      used: a.used,
      held: a.activeHolds,
      cap: a.granted,
      resetsAt: end.toFormat('HH:mm'),
      zone: a.timeZone,
    }
  }
  const unit = a.unit === BUDGET_UNITS.tokens ? 'tokens' : 'money'
  const llm = deps.config.llm
  return {
    reason: 'desk_budget',
    unit,
    used: formatBudget(llm, unit, a.used),
    held: formatBudget(llm, unit, a.reserved),
    limit: formatBudget(llm, unit, a.granted),
    needed: formatBudget(llm, unit, r.lines[r.line!]!.amount),
    month: DateTime.fromJSDate(a.periodStart, { zone: a.timeZone })
      .setLocale(desk.defaultLanguage)
      .toFormat('LLLL yyyy'),
  }
}

async function refuseDraft(
  trx: Trx,
  outbox: Outbox,
  desk: DeskRuntime,
  base: Omit<Insertable<Database['draft']>, 'state'>,
  refusal: DraftRefusal,
): Promise<RequestResult> {
  const row = await insertDraft(trx, { ...base, state: 'refused', refusal: JSON.stringify(refusal) })
  if (!row) return { status: 'duplicate', draftId: null, requestId: base.request_id }
  await postNote(
    trx,
    outbox,
    desk,
    base.consultation_id,
    refusalNote(refusal),
    `draft:note:${base.request_id}`,
  )
  return { status: 'refused', draftId: row.id, requestId: base.request_id, refusal }
}

/** The locale key and parameters of a refusal (drafting.ftl: drafting-refused-<reason>). */
export function refusalNote(r: DraftRefusal): { key: string; params: Record<string, string | number> } {
  const { reason, ...params } = r
  return {
    key: `drafting-refused-${reason.replace(/_/g, '-')}`,
    params: params as Record<string, string | number>,
  }
}

async function postNote(
  trx: Trx,
  outbox: Outbox,
  desk: DeskRuntime,
  consultationId: number,
  note: { key: string; params?: Record<string, string | number> },
  dedupeKey: string,
  markup?: InlineKeyboardMarkup,
): Promise<void> {
  await postToTopic(trx, outbox, {
    consultationId,
    botId: desk.botId,
    key: note.key,
    params: note.params ?? {},
    dedupeKey,
    ...(markup ? { markup } : {}),
  })
}

// ---------------------------------------------------------------------------------------------------------------
// The job: one provider call, then settle

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
        : 'the draft waited too long in the queue; not sent'
    return settle(deps, d, { kind: 'unbilled', reason, providerRequestId: null }, 'queued')
  }

  const outcome = await deps.llm.complete({
    model: model!,
    messages: d.prompt!,
    maxOutputTokens: d.max_output_tokens ?? deps.config.llm.maxOutputTokens,
    requestId: d.request_id,
  })
  deps.log.info(
    {
      draft: d.id,
      consultation: d.consultation_id,
      outcome: outcome.kind,
      ...(outcome.kind === 'ok' ? { usage: outcome.usage } : { reason: outcome.reason }),
      providerRequestId: outcome.providerRequestId,
    },
    'draft: provider call finished',
  )
  return settle(deps, d, outcome)
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
      deps.log.warn({ draft: d.id, attempt, err: errorSummary(err) }, 'draft: settle failed; retrying')
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

  if (outcome.kind === 'ok') {
    const hold = await ledger.reservation(d.request_id)
    const usage = outcome.usage
    const budgetActual =
      usage && model && d.budget_unit ? budgetAmount(d.budget_unit, model, usage.input, usage.output) : null
    const actuals = hold ? actualsFor(hold, d, budgetActual) : undefined
    const s = await ledger.commit(d.request_id, actuals, {
      note: usage
        ? `draft ${d.id}: ${usage.input} + ${usage.output} tokens`
        : `draft ${d.id}: usage not reported; charged the reserved upper bound`,
    })
    if (!s.ok)
      deps.log.error({ draft: d.id, reason: s.reason, state: s.state }, 'draft: ledger refused the commit')
    const raw = outcome.text.trim()
    const truncated = raw.length > DRAFT_TEXT_MAX
    const text = truncated ? `${raw.slice(0, DRAFT_TEXT_MAX - 1)}…` : raw
    const cost = usage && model ? priceMinor(model, usage.input, usage.output) : null
    const charged = usage
      ? deps.i18n.t(desk.defaultLanguage, 'drafting-usage', {
          input: usage.input,
          output: usage.output,
          cost: cost === null ? '?' : formatMoney(llm, cost),
        })
      : deps.i18n.t(desk.defaultLanguage, 'drafting-usage-unreported', { held })
    await updateDraft(trx, d.id, {
      state: text ? 'ready' : 'failed',
      text: text || null,
      truncated,
      input_tokens: usage?.input ?? null,
      output_tokens: usage?.output ?? null,
      cost,
      overrun: s.ok && s.overrun,
      provider_request_id: outcome.providerRequestId,
      finish_reason: outcome.finishReason,
      prompt: null,
      error: s.ok ? (text ? null : 'empty draft') : `ledger: ${s.reason}${s.state ? ` (${s.state})` : ''}`,
    })
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
      return { status: 'failed', charged: false, reason: 'empty draft' }
    }
    await postDraft(trx, outbox, deps, desk, { ...d, text, truncated, version: d.version }, charged)
    return { status: 'ready', overrun: s.ok && s.overrun }
  }

  if (outcome.kind === 'unbilled') {
    const s = await ledger.release(d.request_id, { note: `draft ${d.id}: ${outcome.reason}` })
    await updateDraft(trx, d.id, { state: 'failed', error: outcome.reason, prompt: null })
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
      deps.log.error({ draft: d.id, reason: s.reason, state: s.state }, 'draft: ledger refused the release')
    return { status: 'failed', charged: false, reason: outcome.reason }
  }

  // Sent, outcome unknown: the hold stays (it may have been spent) until an admin reconciles it.
  const s = await ledger.markUnknown(d.request_id, { note: `draft ${d.id}: ${outcome.reason}` })
  if (!s.ok)
    deps.log.error({ draft: d.id, reason: s.reason, state: s.state }, 'draft: ledger refused mark-unknown')
  await updateDraft(trx, d.id, {
    state: 'unknown',
    error: s.ok ? outcome.reason : `${outcome.reason}; ledger: ${s.reason}`,
    provider_request_id: outcome.providerRequestId,
    prompt: null,
  })
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

/** One actual per reserved line: a draft is one unit of the drafts lines; the budget line gets the priced usage. */
function actualsFor(hold: ReservationView, d: Draft, budgetActual: number | null): number[] | undefined {
  const last = hold.amounts.length - 1
  return hold.amounts.map((amount, i) => (i === last && d.budget_unit ? (budgetActual ?? amount) : 1))
}

/** What the draft holds at most, for staff texts: tokens, plus the budget amount when the desk has one. */
function heldText(deps: Deps, d: Draft): string {
  const desk = deps.desk(d.bot_id)
  return deps.i18n.t(desk.defaultLanguage, 'drafting-held', {
    tokens: (d.est_input_tokens ?? 0) + (d.max_output_tokens ?? 0),
    money:
      d.budget_unit === 'money' && d.budget_reserved !== null
        ? formatMoney(deps.config.llm, d.budget_reserved)
        : 'none',
  })
}

function retryMarkup(deps: Deps, desk: DeskRuntime, consultationId: number): InlineKeyboardMarkup {
  return new InlineKeyboard().text(
    deps.i18n.t(desk.defaultLanguage, 'drafting-btn-retry'),
    `dr:new:${consultationId}`,
  )
}

/** Posts a draft's current version in the topic with Send / Edit / Discard (once per version). */
async function postDraft(
  trx: Trx,
  outbox: Outbox,
  deps: Deps,
  desk: DeskRuntime,
  d: Pick<Draft, 'id' | 'consultation_id' | 'text' | 'truncated' | 'version' | 'model'>,
  usage: string,
): Promise<void> {
  const t = (key: string) => deps.i18n.t(desk.defaultLanguage, key)
  const v = d.version
  const markup = new InlineKeyboard()
    .text(t('drafting-btn-send'), `dr:s:${d.id}:${v}`)
    .text(t('drafting-btn-edit'), `dr:e:${d.id}:${v}`)
    .text(t('drafting-btn-discard'), `dr:d:${d.id}:${v}`)
  await postNote(
    trx,
    outbox,
    desk,
    d.consultation_id,
    {
      key: 'drafting-draft',
      params: {
        id: String(d.id),
        version: v,
        model: d.model ?? '',
        usage,
        truncated: d.truncated ? 'yes' : 'no',
        text: d.text ?? '',
      },
    },
    `draft:post:${d.id}:${v}`,
    markup,
  )
}

// ---------------------------------------------------------------------------------------------------------------
// Staff actions on a posted draft

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
    const raw = input.text.trim()
    const truncated = raw.length > DRAFT_TEXT_MAX
    const text = truncated ? `${raw.slice(0, DRAFT_TEXT_MAX - 1)}…` : raw
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

// ---------------------------------------------------------------------------------------------------------------
// Reconciliation (admins)

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
