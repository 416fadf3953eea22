import type { Generated, JSONColumnType } from 'kysely'

export type DisputeState = 'open' | 'refunded' | 'declined' | 'closed'

export interface DisputeTables {
  /** A /paysupport ticket: the id is the ticket number the client sees. */
  dispute: {
    id: Generated<number>
    bot_id: number
    user_id: number
    payment_id: number | null
    telegram_payment_charge_id: string | null
    order_id: number | null
    lang: string
    reason: string
    state: Generated<DisputeState>
    /** The staff topic; null until the topic job created it. */
    thread_id: number | null
    /** An admin pressed Decline: their next message in the topic is the reason. */
    decline_pending_by: number | null
    resolution: string | null
    resolved_by: number | null
    resolved_at: Date | null
    /** The answer time promised to the client. */
    reply_by: Date
    created_at: Generated<Date>
    updated_at: Generated<Date>
  }
  /** @grammyjs/conversations replay state per private chat (the plugin keeps nothing in memory). */
  conversation_state: {
    bot_id: number
    chat_id: number
    data: JSONColumnType<object, string, string>
    updated_at: Generated<Date>
  }
}
