import type { ColumnType, Generated, JSONColumnType } from 'kysely'

type Timestamp = ColumnType<Date, Date | string, Date | string>
type GeneratedTimestamp = ColumnType<Date, Date | string | undefined, Date | string>

/**
 * refused: never admitted; queued: admitted, job written; calling: the provider call may have been sent; ready:
 * posted in the topic with buttons; editing: waiting for the expert's edited text; sent; discarded; failed: the
 * hold was released (nothing charged); unknown: outcome unknown, held until an admin reconciles it; delivered: a
 * hand-off summary given to the consultation's new owner in private (never to the client).
 */
export type DraftState =
  | 'refused'
  | 'queued'
  | 'calling'
  | 'ready'
  | 'editing'
  | 'sent'
  | 'discarded'
  | 'failed'
  | 'unknown'
  | 'delivered'

/** command: /draft; button: "Draft answer" / "Try again"; handoff: the summary for a new owner (migration 0640). */
export type DraftSource = 'command' | 'button' | 'handoff'

/** One chat message of the prompt (OpenAI chat format). */
export interface PromptMessage {
  role: 'system' | 'user' | 'assistant'
  content: string
}

/** Tables of AI drafting (migrations/2026-11-30T0000_baseline.ts). */
export interface DraftingTables {
  draft: {
    id: Generated<number>
    bot_id: number
    consultation_id: number
    appeal_id: number | null
    request_id: string
    requested_by: number
    source: DraftSource
    source_chat_id: number
    source_message_id: number
    instruction: string | null
    model: string | null
    state: DraftState
    refusal: JSONColumnType<Record<string, unknown> | null, string | null, string | null>
    prompt: JSONColumnType<PromptMessage[] | null, string | null, string | null>
    est_input_tokens: number | null
    max_output_tokens: number | null
    budget_unit: 'money' | 'tokens' | null
    budget_reserved: number | null
    reserved_at: Timestamp | null
    input_tokens: number | null
    output_tokens: number | null
    cost: number | null
    overrun: Generated<boolean>
    provider_request_id: string | null
    finish_reason: string | null
    text: string | null
    truncated: Generated<boolean>
    version: Generated<number>
    error: string | null
    editing_by: number | null
    editing_since: Timestamp | null
    approved_by: number | null
    sent_item_id: number | null
    sent_at: Timestamp | null
    discarded_by: number | null
    discarded_at: Timestamp | null
    reconciled_by: number | null
    reconciled_at: Timestamp | null
    reconciliation: string | null
    /** Stop pressed (the running job polls it and aborts the provider call). */
    stop_requested_by: number | null
    stop_requested_at: Timestamp | null
    /** The requesting expert's private chat the draft streams into, and the message there with Stop. */
    stream_chat_id: number | null
    stream_message_id: number | null
    created_at: GeneratedTimestamp
    updated_at: GeneratedTimestamp
  }
  /** An expert message taken as the edited text of a draft (never relayed to the client by itself). */
  draft_edit: {
    bot_id: number
    chat_id: number
    message_id: number
    draft_id: number
    version: number
    created_at: GeneratedTimestamp
  }
}
