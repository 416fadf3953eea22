import type { Generated } from 'kysely'

export type AppealState = 'open' | 'answered' | 'cancelled'

export interface DeskConsultationTables {
  /** The desk's side of a consultation (1:1): topic work, client blocked, lane leases. */
  desk_consultation: {
    consultation_id: number
    bot_id: number
    user_id: number
    topic_wanted: Generated<boolean>
    topics_created: Generated<number>
    card_dirty: Generated<boolean>
    title_dirty: Generated<boolean>
    /** A send to the client failed with 403; cleared when the client writes again. */
    client_blocked_at: Date | null
    /** A topic-lane job is queued and has not started draining (see migration 2026-11-30T0410). */
    in_queued: Generated<boolean>
    in_lease: string | null
    in_lease_until: Date | null
    out_lease: string | null
    out_lease_until: Date | null
    created_at: Generated<Date>
  }
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
}
