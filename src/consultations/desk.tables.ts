import type { Generated } from 'kysely'

export type AppealState = 'open' | 'answered' | 'cancelled'

export interface DeskConsultationTables {
  /** A question or clarification round: one unit of the consultation's appeals on the ledger. */
  desk_appeal: {
    id: Generated<number>
    bot_id: number
    consultation_id: number
    number: number
    state: Generated<AppealState>
    request_id: string
    opened_by_message_id: number
    accepted_at: Date
    sla_minutes: number
    due_at: Date
    first_response_at: Date | null
    answered_by: number | null
    response_business_minutes: number | null
    in_time: boolean | null
    breached_at: Date | null
    ledger_outcome: string | null
    created_at: Generated<Date>
  }
  /** A refusal told to a chat: the next like it waits out the quiet period (src/consultations/refusal-told.ts). */
  refusal_told: {
    bot_id: number
    chat_id: number
    /** The refusal's reason and consultation ('no_consultation:-', 'window_closed:42'). */
    topic: string
    told_at: Generated<Date>
  }
}
