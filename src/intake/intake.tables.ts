import type { Update } from 'grammy/types'
import type { Generated, JSONColumnType } from 'kysely'

export type InboxState = 'pending' | 'done' | 'parked'

export interface IntakeTables {
  /** Every update of every desk, stored before Telegram is told it arrived (see src/intake/README.md). */
  inbox_update: {
    bot_id: number
    update_id: number
    chat_key: string
    priority: number
    kind: string
    payload: JSONColumnType<Update, string, string>
    state: Generated<InboxState>
    received_at: Generated<Date>
    attempts: Generated<number>
    tries: Generated<number>
    next_attempt_at: Generated<Date>
    lease_owner: string | null
    lease_until: Date | null
    last_error: string | null
    done_at: Date | null
  }
}
