import type { Generated } from 'kysely'

export interface RatingTables {
  /** A client's rating of a closed consultation: one per consultation, editable for the desk's rules.ratingEditDays. */
  consultation_rating: {
    consultation_id: number
    bot_id: number
    user_id: number
    /** The staff member it counts for: who answered most of its questions (null: nobody answered). */
    expert_id: number | null
    score: number
    comment: string | null
    created_at: Generated<Date>
    updated_at: Generated<Date>
  }
}
