import type { Message, Update } from 'grammy/types'

/**
 * How an update is queued in the inbox: its order key (updates with one key are handled one at a time, in update_id
 * order), its priority and its kind.
 */
export interface InboxKeys {
  chatKey: string
  priority: number
  kind: string
}

/** Payments first: a successful_payment means Telegram took the client's Stars. */
export const PRIORITY_PAYMENT = 0
/** Button presses next: the client's button spins until it is answered. */
export const PRIORITY_BUTTON = 1
export const PRIORITY_OTHER = 2

/**
 * The order key: the chat, and in a forum the topic - each topic of the staff group is its own consultation, so
 * one busy topic does not hold up the others (General is thread 0). An update without a chat is keyed by its sender.
 */
function keyOfMessage(m: Pick<Message, 'chat' | 'message_thread_id' | 'is_topic_message'>): string {
  if (m.chat.type === 'private') return String(m.chat.id)
  const thread = m.is_topic_message && m.message_thread_id ? m.message_thread_id : 0
  return `${m.chat.id}:${thread}`
}

export function inboxKeys(u: Update): InboxKeys {
  const m = u.message ?? u.edited_message ?? u.channel_post ?? u.edited_channel_post
  if (m) {
    const kind = u.message?.successful_payment
      ? 'successful_payment'
      : u.message?.refunded_payment
        ? 'refunded_payment'
        : u.message
          ? 'message'
          : u.edited_message
            ? 'edited_message'
            : 'channel_post'
    return {
      chatKey: keyOfMessage(m),
      priority:
        kind === 'successful_payment' || kind === 'refunded_payment' ? PRIORITY_PAYMENT : PRIORITY_OTHER,
      kind,
    }
  }
  const cq = u.callback_query
  if (cq) {
    const cm = cq.message
    const chatKey =
      cm && cm.date !== 0
        ? keyOfMessage(cm as Message)
        : cm
          ? keyOfMessage({ chat: cm.chat })
          : `u${cq.from.id}`
    return { chatKey, priority: PRIORITY_BUTTON, kind: 'callback_query' }
  }
  // The bot's own membership of a group (src/setup): in that group's order, so its looks are recorded in turn.
  const mcm = u.my_chat_member
  if (mcm && mcm.chat.type !== 'private')
    return { chatKey: `${mcm.chat.id}:0`, priority: PRIORITY_OTHER, kind: 'my_chat_member' }
  const kind = Object.keys(u).find((k) => k !== 'update_id') ?? 'unknown'
  const from = (u as unknown as Record<string, { from?: { id: number } } | undefined>)[kind]?.from
  return { chatKey: from ? `u${from.id}` : `k${kind}`, priority: PRIORITY_OTHER, kind }
}
