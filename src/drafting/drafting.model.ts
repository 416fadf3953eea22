/**
 * Drafting's vocabulary: refusals with the numbers behind them (the topic's text comes from the same numbers the
 * admission used) and the results of each use case. Texts live in src/bot/locales/<lang>/drafting.ftl.
 */

export type DraftRefusal =
  /** Drafting is switched off for the desk. */
  | { reason: 'disabled' }
  /** No model or no LLM_API_KEY configured (before anything is reserved), or a clear provider error after it. */
  | { reason: 'provider_unavailable' }
  /** The consultation's tariff includes no drafts. */
  | { reason: 'not_included'; tariff: string }
  | { reason: 'model_not_allowed'; model: string; allowed: string }
  /** No open question to answer (the latest was answered already). */
  | { reason: 'no_open_appeal' }
  /** The consultation is not in its window (not started, over, or refunded). */
  | { reason: 'not_active'; state: string }
  /** The consultation's allowance: left of total; held = drafts in progress holding part of it. */
  | { reason: 'no_drafts_left'; left: number; total: number; held: number }
  /**
   * The expert's daily cap: used (and held) of cap today; resets at the desk's local midnight (`resetsAt`, in the
   * desk's zone, which staff read every time in: no zone named, src/time/format.ts staffZone).
   */
  | { reason: 'expert_cap'; used: number; held: number; cap: number; resetsAt: string }
  /** The desk's monthly budget: used and held of the limit, and what this draft would need at most. */
  | {
      reason: 'desk_budget'
      unit: 'money' | 'tokens'
      used: string
      held: string
      limit: string
      needed: string
      month: string
    }
  | { reason: 'too_many_running'; running: number; max: number }
  /** The ledger (database) could not decide: nothing was reserved. */
  | { reason: 'unavailable' }

export type RequestResult =
  | {
      status: 'queued'
      draftId: number
      requestId: string
      /** Drafts left on the consultation after this one's hold, of the tariff's total. */
      left: number
      total: number
      /** The upper bound of tokens this draft may use (estimated input + max output). */
      maxTokens: number
    }
  | { status: 'refused'; draftId: number; requestId: string; refusal: DraftRefusal }
  /** The same request again (redelivered update, double tap): nothing new happened. */
  | { status: 'duplicate'; draftId: number | null; requestId: string }
  /** Not a consultation of this desk. */
  | { status: 'ignored' }
  /** The consultation lives in a staff group where this person may not act: nothing was done. */
  | { status: 'other-group' }

export type RunResult =
  | { status: 'ready'; overrun: boolean }
  | { status: 'failed'; charged: false; reason: string }
  | { status: 'unknown'; reason: string }
  /** Nothing to do: settled already, or not queued. */
  | { status: 'skipped'; state: string }

export type ActionResult =
  | { status: 'done' }
  /** Sent, but the consultation was refunded under the "stop" policy: the desk withholds it from the client. */
  | { status: 'withheld' }
  | { status: 'already'; state: string }
  /** The button was on an older version of the draft (it was edited since). */
  | { status: 'stale'; version: number }
  | { status: 'not_ready'; state: string }
  | { status: 'not_found' }
  /** The draft's consultation lives in a staff group where this person may not act: nothing was done. */
  | { status: 'other-group' }

export type ReconcileResult =
  | { status: 'committed'; charged: string }
  | { status: 'released' }
  | { status: 'not_unknown'; state: string; reconciliation: string | null }
  | { status: 'not_found' }
  | { status: 'ledger_refused'; reason: string }
