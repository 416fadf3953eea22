import { digestText, inDigestText } from './antiflood'
import type { LaneScope } from './lane-scope'
import { type Item, markSent } from './messages.repository'
import type { Route } from './routes.repository'

/** The anti-flood digest (antiflood.ts decides and words it): sent into the topic, each text mapped to it. */
/**
 * A client's messages past the anti-flood rate, as one message (antiflood.ts): each text maps to it; the photos
 * and files it lists are copied next (deliver).
 */
export async function sendDigest(s: LaneScope, route: Route, batch: Item[]): Promise<void> {
  const chat = route.support_chat_id
  const thread = route.message_thread_id
  const m = await s.api.sendMessage(chat, digestText(s.deps, s.desk.defaultLanguage, batch), {
    message_thread_id: thread,
    link_preview_options: { is_disabled: true },
  })
  for (const item of batch.filter(inDigestText))
    await markSent(s.deps.db, item.id, {
      chatId: chat,
      threadId: thread,
      messageId: m.message_id,
      version: item.version,
    })
}
