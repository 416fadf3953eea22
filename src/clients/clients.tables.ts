import type { Generated } from 'kysely'

export interface ClientTables {
  /** A Telegram user who talked to a desk's bot. */
  client: {
    bot_id: number
    user_id: number
    first_name: string
    last_name: string | null
    username: string | null
    language_code: string | null
    /** IANA zone the client chose; null = the desk's zone. */
    time_zone: string | null
    banned_at: Date | null
    banned_by: number | null
    /** Set when a send failed with 403; cleared when the client writes again. */
    blocked_bot_at: Date | null
    created_at: Generated<Date>
    updated_at: Generated<Date>
    /** When the client's personal data was erased by /forget (src/privacy); null otherwise. */
    forgotten_at: Generated<Date | null>
  }
}
