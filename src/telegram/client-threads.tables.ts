import type { Generated } from 'kysely'

/** What a consultation's topic in the client's private chat is (Bot API 9.3+). */
export type ClientTopicState = 'wanted' | 'open' | 'broken' | 'off'

export interface ClientThreadTables {
  /** The bot's own messages in a client's chat, each with the consultation it was sent for (issue 26). */
  consultation_client_message: {
    bot_id: number
    chat_id: number
    message_id: number
    consultation_id: number
  }
  /**
   * A consultation's topic in the client's private chat. off: the bot has no private-chat topics; broken: Telegram
   * refused to create it or to send into it, so the plain chat is used from then on.
   */
  client_topic: {
    consultation_id: number
    bot_id: number
    user_id: number
    thread_id: number | null
    state: Generated<ClientTopicState>
    updated_at: Generated<Date>
  }
}
