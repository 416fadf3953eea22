import { isAdminRole, isStaffRole, type Role, roleHere, type Sender } from '../config/access'
import type { BotContext } from './context'

/**
 * The desk's access policy (src/config/access.ts) as the bot's features ask it: the role of whoever sent this
 * update, in the chat it came from. A button's presser is the callback query's `from` (the message it sits on is the
 * bot's own); a message's sender is its `from`, or its `sender_chat` for an anonymous admin.
 */
export function senderOf(ctx: BotContext): Sender {
  if (ctx.callbackQuery) return { from: ctx.callbackQuery.from }
  const m = ctx.msg
  if (m) return { from: m.from, sender_chat: m.sender_chat }
  return { from: ctx.from }
}

export function roleOfSender(ctx: BotContext, sender: Sender = senderOf(ctx)): Role {
  return roleHere(ctx.desk, ctx.chat, sender)
}

/** The owner or an admin, here (a filter for admin-only commands and buttons). */
export const isAdminHere = (ctx: BotContext): boolean => isAdminRole(roleOfSender(ctx))

/** Any staff role here. */
export const isStaffHere = (ctx: BotContext): boolean => isStaffRole(roleOfSender(ctx))

/**
 * The id an action is recorded under (audit rows, staff ids in services): the user's, or for an anonymous admin the
 * group's id they post as (src/config/access.ts: how services recognise them).
 */
export function actorIdOf(ctx: BotContext): number {
  const s = senderOf(ctx)
  return s.sender_chat?.id ?? s.from?.id ?? 0
}
