import { InlineKeyboard } from 'grammy'
import type { InlineKeyboardMarkup } from 'grammy/types'
import type { DeskRuntime } from '../config/load'
import { postToTopic } from '../consultations/desk.service'
import type { Trx } from '../db/database'
import type { Deps } from '../deps'
import type { Outbox } from '../jobs/jobs'
import type { ReservationView } from '../ledger/ledger.model'
import { LedgerTx } from '../ledger/ledger.service'
import { cut, textLength } from '../text'
import type { Draft } from './drafting.repository'
import { formatMoney } from './price'

/**
 * AI drafts for experts: reserve -> job -> LLM -> settle, and what experts and admins do with the result.
 *
 * Admission (`requestDraft`) is one short transaction: the draft row (unique by request id), one atomic ledger
 * reservation across every scope that applies (the consultation's drafts, the expert's day, the desk's month, with
 * the desk's concurrency limit), the job, and the topic note, all committed together or not at all. The provider
 * call runs in the job (`runDraft`), outside any transaction; its outcome settles the hold in another short one.
 * Nothing reaches the client until a staff member presses Send (`sendDraft`), which goes through the desk's own
 * path for an expert answer, so the appeal records its first response and who gave it.
 *
 * The use cases, one file each: request.ts (admission), run.ts (the job and its settle), actions.ts (Send, Edit,
 * Discard, an edit's capture), reconcile.ts (admins settle unknown outcomes). This file holds what they share: the
 * hold's TTL, the draft text limit, the ledger bound to a transaction, and the topic notes.
 */

/** How long a draft's hold may stay reserved before the ledger's sweeper returns it (queue wait + call + margin). */
export const HOLD_TTL_SECONDS = 30 * 60
/** Drafts are cut to this many characters: the topic message (header + draft) and the client's copy fit 4096. */
export const DRAFT_TEXT_MAX = 3500

/** A draft's text (model output or an expert's edit) trimmed and cut to DRAFT_TEXT_MAX between graphemes. */
export function draftText(raw: string): { text: string; truncated: boolean } {
  const trimmed = raw.trim()
  return {
    text: cut(trimmed, DRAFT_TEXT_MAX, { ellipsis: '…' }),
    truncated: textLength(trimmed) > DRAFT_TEXT_MAX,
  }
}

export const EXPERT_SCOPE = 'expert'
export const DESK_SCOPE = 'desk'
export const BUDGET_UNITS = { money: 'llm_money', tokens: 'llm_tokens' } as const

/** The ledger inside the caller's transaction; a draft's hold lasts HOLD_TTL_SECONDS. */
export function ledgerIn(deps: Deps, trx: Trx): LedgerTx {
  return new LedgerTx(trx, deps.config.ledger.overrunPolicy, HOLD_TTL_SECONDS)
}

/** A topic note of the drafting flow (a refusal, a result, a prompt), once per dedupe key. */
export async function postNote(
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

/**
 * One actual per reserved line: a draft is one unit of the drafts lines; the budget line gets the priced usage.
 * 'at_most_reserved' (a stopped draft, whose usage is counted here, not reported): never more than was reserved.
 */
export function actualsFor(
  hold: ReservationView,
  d: Draft,
  budgetActual: number | null,
  mode: 'as_used' | 'at_most_reserved' = 'as_used',
): number[] | undefined {
  const last = hold.amounts.length - 1
  return hold.amounts.map((amount, i) => {
    if (i !== last || !d.budget_unit) return 1
    const actual = budgetActual ?? amount
    return mode === 'at_most_reserved' ? Math.min(actual, amount) : actual
  })
}

/** What the draft holds at most, for staff texts: tokens, plus the budget amount when the desk has one. */
export function heldText(deps: Deps, d: Draft): string {
  const desk = deps.desk(d.bot_id)
  return deps.i18n.t(desk.defaultLanguage, 'drafting-held', {
    tokens: (d.est_input_tokens ?? 0) + (d.max_output_tokens ?? 0),
    money:
      d.budget_unit === 'money' && d.budget_reserved !== null
        ? formatMoney(deps.config.llm, d.budget_reserved)
        : 'none',
  })
}

/** Posts a draft's current version in the topic with Send / Edit / Discard (once per version). */
export async function postDraft(
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
