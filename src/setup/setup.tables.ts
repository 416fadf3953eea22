import type { Generated } from 'kysely'

export interface SetupTables {
  /** The owner's one-time claim code of a desk without an owner (src/setup/claim.ts). */
  desk_claim: {
    code: string
    bot_id: number
    state: 'open' | 'used' | 'expired'
    created_at: Generated<Date>
    expires_at: Date
    used_by: number | null
    used_at: Date | null
  }
  /** A staff invite link (src/setup/invites.ts): a role, a number of uses, an expiry. */
  staff_invite: {
    code: string
    bot_id: number
    role: 'expert' | 'admin'
    uses_total: number
    uses_left: number
    created_by: number
    /** The inviter's language when they asked for the link: they are told in it who joined. */
    created_lang: string
    created_at: Generated<Date>
    expires_at: Date
  }
  /** Who used an invite (one use per person). */
  staff_invite_use: {
    code: string
    user_id: number
    used_at: Generated<Date>
  }
  /**
   * What the bot last saw of a group it is (or was) in (src/setup/groups.ts): present or not, and what is missing for
   * it to be a staff group, in the words of GroupProblem. `revision` moves on every change (a notice per change).
   */
  staff_group_state: {
    bot_id: number
    chat_id: number
    title: string
    present: boolean
    problems: string[]
    added_by: number | null
    revision: Generated<number>
    checked_at: Generated<Date>
  }
}
