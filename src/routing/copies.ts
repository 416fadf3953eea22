import type { InlineKeyboardMarkup, ReplyParameters } from 'grammy/types'
import { deskDrafting } from '../config/drafting'
import { draftButtonMarkup } from './draft-button'
import type { LaneScope } from './lane-scope'
import { correspondingMessage, type Item, markSent, pendingItems } from './messages.repository'

/**
 * A lane's copies of a chat's messages into the other chat: copyMessage for one item (keeping its reply and the
 * "Draft answer" button), copyMessages for an album or a run of plain copies (batched within the target chat's
 * window). The lane (delivery.ts) decides what is sent when and what a failure means.
 */

/**
 * Copies per copyMessages call: Telegram takes up to 100 ids, but the group's budget is 20 a window and every copied
 * message counts (Telegram documents no rule for copyMessages), so a call never asks for more than a window holds.
 */
const COPY_BATCH_MAX = 20

/** A copy that can travel in a copyMessages: no album, no reply to keep, no button to attach. */
export async function batchable(s: LaneScope, item: Item): Promise<boolean> {
  if (item.kind !== 'copy' || item.media_group_id || item.reply_to_message_id || item.chat_id === null)
    return false
  return draftButton(s, item, s.dir === 'in' ? 0 : undefined) === undefined
}

/**
 * The head and the batchable copies right after it from the same chat, in order: at most COPY_BATCH_MAX, and never
 * more than the target chat's window holds (20 for the staff group, 3 for a client's private chat) — every copied
 * message counts, so a larger batch could never be granted and the lane would wait forever.
 */
export async function copyRun(s: LaneScope, head: Item, room: number): Promise<Item[]> {
  const run: Item[] = []
  const limits = s.deps.config.telegramLimits
  const window = s.dir === 'in' ? limits.group.count : limits.chat.count
  const limit = Math.max(1, Math.min(COPY_BATCH_MAX, window, room))
  for (const item of await pendingItems(s.deps.db, s.v.id, s.dir, limit)) {
    if (item.chat_id !== head.chat_id || !(await batchable(s, item))) break
    if (run.length && item.message_id! <= run[run.length - 1]!.message_id!) break
    run.push(item)
  }
  return run.length ? run : [head]
}

/** copyMessage for one item (keeping its reply), copyMessages for an album (keeping it an album). */
export async function copy(
  s: LaneScope,
  batch: Item[],
  chat: number,
  thread: number | undefined,
): Promise<void> {
  const head = batch[0]!
  const from = head.chat_id!
  const threadOpt = thread !== undefined ? { message_thread_id: thread } : {}
  if (batch.length === 1) {
    const reply = await replyTo(s, head, chat)
    const markup = draftButton(s, head, thread)
    const r = await s.api.copyMessage(chat, from, head.message_id!, {
      ...threadOpt,
      ...(reply ? { reply_parameters: reply } : {}),
      ...(markup ? { reply_markup: markup } : {}),
    })
    await markSent(s.deps.db, head.id, {
      chatId: chat,
      threadId: thread ?? null,
      messageId: r.message_id,
      version: head.version,
    })
    return
  }
  const ids = batch.map((b) => b.message_id!)
  const r = await s.api.copyMessages(chat, from, ids, threadOpt)
  // Telegram skips parts it cannot copy without saying which: map part to copy only when none was skipped.
  const exact = r.length === batch.length
  for (const [i, item] of batch.entries()) {
    const mirror = exact ? r[i] : i === 0 ? r[0] : undefined
    await markSent(s.deps.db, item.id, {
      chatId: chat,
      threadId: thread ?? null,
      messageId: mirror?.message_id ?? null,
      version: item.version,
    })
  }
}

/** "Draft answer" on a client's message in the topic, when the tariff includes drafts and the desk drafts. */
export function draftButton(
  s: LaneScope,
  item: Item,
  thread: number | undefined,
): InlineKeyboardMarkup | undefined {
  if (thread === undefined || item.direction !== 'in' || s.v.drafts <= 0) return undefined
  if (!deskDrafting(s.deps.config.llm, s.desk).enabled) return undefined
  return draftButtonMarkup(s.deps, s.desk, s.v.id)
}

/** The reply-to in the target chat: the copy (or original) of what the source replied to. */
export async function replyTo(
  s: LaneScope,
  item: Item,
  targetChat: number,
): Promise<ReplyParameters | undefined> {
  if (!item.reply_to_message_id || !item.chat_id) return undefined
  const id = await correspondingMessage(
    s.deps.db,
    s.v.bot_id,
    item.chat_id,
    item.reply_to_message_id,
    targetChat,
  )
  return id ? { message_id: id, allow_sending_without_reply: true } : undefined
}
