import { InlineKeyboard } from 'grammy'
import type { Insertable } from 'kysely'
import { DateTime } from 'luxon'
import { mayActOn } from '../config/access'
import { type DeskDrafting, deskDrafting, findModel, type ModelPrice } from '../config/drafting'
import { type DeskRuntime, pick } from '../config/load'
import type { Database, Trx } from '../db/database'
import type { Deps } from '../deps'
import type { Outbox } from '../jobs/jobs'
import type { Refusal, ReserveLine } from '../ledger/ledger.model'
import { dailyPeriod, monthlyPeriod, type Period } from '../ledger/ledger.periods'
import type { LedgerTx } from '../ledger/ledger.service'
import { CONSULTATION_SCOPE, DRAFTS_UNIT } from '../orders/allowances'
import { findTariff } from '../orders/tariffs'
import { draftRunQueue } from './drafting.jobs'
import type { DraftRefusal, RequestResult } from './drafting.model'
import {
  conversationForPrompt,
  type DraftingConsultation,
  dbNow,
  draftingConsultation,
  findDraftByRequest,
  insertDraft,
  openAppealOf,
} from './drafting.repository'
import {
  BUDGET_UNITS,
  DESK_SCOPE,
  EXPERT_SCOPE,
  HOLD_TTL_SECONDS,
  ledgerIn,
  postNote,
} from './drafting.service'
import type { DraftSource } from './drafting.tables'
import { budgetAmount, formatBudget } from './price'
import { type BuiltPrompt, buildPrompt } from './prompt'

/**
 * Admission of a draft (`requestDraft`): one short transaction with the draft row (unique by request id), one atomic
 * ledger reservation across every scope that applies, the job and the topic note; or a refusal with its numbers.
 */

export type LineKind = 'consultation' | 'expert' | 'budget'

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
    // Judged in the consultation's own group, not in the chat where the button was pressed.
    if (!mayActOn(desk, c, input.staffId)) return { status: 'other-group' }

    const llm = deps.config.llm
    const settings = deskDrafting(llm, desk)
    const modelId = input.model?.trim() || settings.model
    const appeal = await openAppealOf(trx, c.id)
    const base = draftBase(desk, c, appeal, {
      requestId,
      requestedBy: input.staffId,
      source: input.source,
      chatId: input.chatId,
      messageId: input.messageId,
      instruction: input.instruction?.trim() || null,
      model: modelId,
    })
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
      ...reservedFields({ prompt, maxOut, budget, at, admitted: r.admitted }),
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
      // Stop, while the draft is queued or written (a later press is told it is finished).
      new InlineKeyboard().text(deps.i18n.t(desk.defaultLanguage, 'drafting-btn-stop'), `dr:x:${row.id}`),
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

/** A draft row as a /draft (or its button) and a hand-off summary both start it: who asked, where, for what. */
export function draftBase(
  desk: DeskRuntime,
  c: Pick<DraftingConsultation, 'id'>,
  appeal: { id: number } | undefined,
  a: {
    requestId: string
    requestedBy: number
    source: DraftSource
    chatId: number
    messageId: number
    instruction?: string | null
    model: string | null
  },
) {
  return {
    bot_id: desk.botId,
    consultation_id: c.id,
    appeal_id: appeal?.id ?? null,
    request_id: a.requestId,
    requested_by: a.requestedBy,
    source: a.source,
    source_chat_id: a.chatId,
    source_message_id: a.messageId,
    instruction: a.instruction ?? null,
    model: a.model,
  }
}

/**
 * What the admission priced, on the draft row: the prompt (only when admitted: the job reads it), its estimate, the
 * output bound, the budget held and when.
 */
export function reservedFields(a: {
  prompt: Pick<BuiltPrompt, 'messages' | 'estimatedTokens'>
  maxOut: number
  budget: { unit: 'money' | 'tokens'; amount: number } | null
  at: Date
  admitted: boolean
}) {
  return {
    prompt: a.admitted ? JSON.stringify(a.prompt.messages) : null,
    est_input_tokens: a.prompt.estimatedTokens,
    max_output_tokens: a.maxOut,
    budget_unit: a.budget?.unit ?? null,
    budget_reserved: a.budget?.amount ?? null,
    reserved_at: a.at,
  }
}

/**
 * The ledger lines of a draft, in a fixed order: the consultation's drafts (by key: the account whose period, the
 * consultation's window, contains the instant the question was accepted — so a question accepted at 17:59 can
 * still be drafted for at 18:30, after the window closed), the expert's daily cap and the desk's monthly budget
 * (both of the instant the draft is asked for). The cap and budget accounts of the period are created on first use
 * by an idempotent grant in this same transaction; when the configured amount changed since, the account is adjusted
 * to it (journal reason `adjust`).
 */
export async function admissionLines(
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
export function ledgerRefusal(
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
