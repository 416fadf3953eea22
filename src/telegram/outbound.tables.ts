import type { Generated } from 'kysely'

export interface OutboundTables {
  outbound_message: {
    key: string
    bot_id: number
    chat_id: number
    message_id: number | null
    /** sent | blocked | failed */
    outcome: string
    sent_at: Generated<Date>
  }
}
