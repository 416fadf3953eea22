import type { ConversationData, ConversationStorage, VersionedState } from '@grammyjs/conversations'
import type { Context } from 'grammy'
import { sql } from 'kysely'
import type { Db } from '../db/database'

/**
 * Postgres storage for @grammyjs/conversations: the replay state of a private chat's conversations lives in
 * conversation_state, so a restart, a second bot process or a deploy in the middle of /paysupport loses nothing, and
 * no process keeps conversation state in memory.
 *
 * Only private chats have conversations. Every other update (a pre-checkout query has no chat at all, the staff
 * group's messages) reads nothing, so the plugin costs those updates no database round trip. Writes are ordered
 * per chat by the inbox (src/intake: one update of a chat at a time), which is why a plain upsert is enough.
 */
export function conversationStorage<C extends Context>(
  db: Db,
  botId: number,
): ConversationStorage<C, ConversationData> {
  const chatOf = (ctx: C): number | undefined => (ctx.chat?.type === 'private' ? ctx.chat.id : undefined)
  return {
    type: 'context',
    // Bump when a conversation's code changes in a way that makes stored replays invalid: old state is dropped.
    version: 1,
    adapter: {
      async read(ctx) {
        const chatId = chatOf(ctx)
        if (chatId === undefined) return undefined
        const row = await db
          .selectFrom('conversation_state')
          .select('data')
          .where('bot_id', '=', botId)
          .where('chat_id', '=', chatId)
          .executeTakeFirst()
        return row?.data as VersionedState<ConversationData> | undefined
      },
      async write(ctx, state) {
        const chatId = chatOf(ctx)
        if (chatId === undefined) return
        const data = JSON.stringify(state)
        await db
          .insertInto('conversation_state')
          .values({ bot_id: botId, chat_id: chatId, data })
          .onConflict((oc) => oc.columns(['bot_id', 'chat_id']).doUpdateSet({ data, updated_at: sql`now()` }))
          .execute()
      },
      async delete(ctx) {
        const chatId = chatOf(ctx)
        if (chatId === undefined) return
        await db
          .deleteFrom('conversation_state')
          .where('bot_id', '=', botId)
          .where('chat_id', '=', chatId)
          .execute()
      },
    },
  }
}
