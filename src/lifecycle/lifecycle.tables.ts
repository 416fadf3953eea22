import type { Generated, JSONColumnType } from 'kysely'
import type { BreachPolicy } from '../orders/orders.tables'

export type BreachOutcome = 'none' | 'extended' | 'extra_appeal' | 'skipped'

/** What the SLA and window jobs did (migrations/2026-11-30T0000_baseline.ts): each column is set once, by a conditional UPDATE. */
export interface LifecycleTables {
  appeal_sla: {
    appeal_id: number
    bot_id: number
    consultation_id: number
    reminded_at: Date | null
    breach_policy: JSONColumnType<BreachPolicy | null, string | null, string | null>
    breach_outcome: BreachOutcome | null
    breach_detail: JSONColumnType<Record<string, unknown> | null, string | null, string | null>
    refund_flagged_at: Date | null
    client_blocked_at: Date | null
    created_at: Generated<Date>
  }
  consultation_lifecycle: {
    consultation_id: number
    bot_id: number
    closing_soon_for: Date | null
    window_closed_at: Date | null
    topic_closed_at: Date | null
    created_at: Generated<Date>
  }
}
