import type { Message } from 'grammy/types'
import type { Generated, JSONColumnType } from 'kysely'

export interface SeveralTables {
  /** Where a client's messages that name no consultation go, when they have several (src/consultations/several.ts). */
  client_route: {
    bot_id: number
    user_id: number
    /** The consultation chosen; null: none yet (or it was deleted). */
    consultation_id: number | null
    /** The choice has been asked and not answered: further messages are held without asking again. */
    asking: Generated<boolean>
    updated_at: Generated<Date>
  }
  /** A message held until the client chooses its consultation (then admitted there once and deleted). */
  held_message: {
    bot_id: number
    chat_id: number
    message_id: number
    user_id: number
    lang: string
    message: JSONColumnType<Message, string, string>
    created_at: Generated<Date>
  }
}
