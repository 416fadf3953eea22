import type { Generated } from 'kysely'

export type AssignmentReason = 'tariff' | 'least_loaded' | 'handover'

export interface ExpertTables {
  /** Who owned a consultation when; the current owner is the row without ended_at (one per consultation). */
  expert_assignment: {
    id: Generated<number>
    bot_id: number
    consultation_id: number
    expert_id: number
    assigned_by: number | null
    reason: AssignmentReason
    started_at: Generated<Date>
    ended_at: Date | null
  }
  /** A staff member of a desk: the name cards show, /away, the round robin's last assignment. */
  expert_profile: {
    bot_id: number
    user_id: number
    name: string | null
    away_since: Date | null
    last_assigned_at: Date | null
    updated_at: Generated<Date>
  }
  /** /mute: no private alerts of this consultation for this expert. */
  expert_mute: {
    consultation_id: number
    expert_id: number
    created_at: Generated<Date>
  }
  /** Snippets added by admins with /snippet add. */
  desk_snippet: {
    bot_id: number
    name: string
    text: string
    created_by: number
    created_at: Generated<Date>
  }
}
