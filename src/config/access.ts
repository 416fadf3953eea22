import type { DeskConfig } from './schema'
import { isStaffGroup, staffChatOf } from './staff-groups'

/**
 * Who may act here: the desk's one access policy. Every check of a person's right (a bot feature's filter, a
 * button's press, a service's write, the dashboard's launch data) asks this module, so the rule is written once.
 *
 * - In the desk (a private chat with the bot, the dashboard): the owner, an admin, an expert, or none.
 * - In a group: the owner and the admins act in every group of the desk; an expert in the groups that list them
 *   (src/config/staff-groups.ts), and in the home group when it is not a listed group (its older topics); anyone
 *   else is none.
 * - An anonymous admin (a message with sender_chat = the group it is posted in) is an admin of that staff group
 *   only, and only where the desk says so (staff.anonymousAdmins); Telegram does not say who they are. Their id is
 *   the group's (a negative number), which is how services recognise them.
 * - On a consultation (a button or a command naming it): the role in the consultation's own group, never in the
 *   chat where a button was pressed, so an expert of group B cannot act on a group A consultation.
 * - Bots (and a channel posting into the group) are none.
 */
export type Role = 'owner' | 'admin' | 'expert' | 'none'

type Staff = Pick<DeskConfig['staff'], 'admins' | 'experts'> & {
  owner?: number | null | undefined
  anonymousAdmins?: boolean | undefined
}
export interface DeskAccess {
  staff: Staff
  staffChatId?: number | null | undefined
  staffGroups?: { chatId: number; experts: number[] }[] | undefined
}

/** Who sent an update: a user (`from`), or a chat posting as itself (`sender_chat`: an anonymous admin). */
export interface Sender {
  from?: { id: number; is_bot: boolean } | undefined
  sender_chat?: { id: number } | undefined
}

/** Where it was sent: the chat (undefined for an inline query). */
export interface Place {
  id: number
  type: string
}

export const isAdminRole = (r: Role): boolean => r === 'owner' || r === 'admin'
export const isStaffRole = (r: Role): boolean => r !== 'none'

/** A person's role in the desk as a whole (a private chat, the dashboard). */
export function deskRole(desk: Pick<DeskAccess, 'staff'>, userId: number): Role {
  const s = desk.staff
  if (s.owner != null && s.owner === userId) return 'owner'
  if (s.admins.includes(userId)) return 'admin'
  if (s.experts.includes(userId)) return 'expert'
  return 'none'
}

/** A person's role in a group's topics (answer, /draft, /assign...). */
export function groupRole(desk: DeskAccess, chatId: number, userId: number): Role {
  const r = deskRole(desk, userId)
  if (r !== 'expert') return r
  const listed = desk.staffGroups?.find((g) => g.chatId === chatId)
  if (listed) return listed.experts.includes(userId) ? r : 'none'
  return chatId === desk.staffChatId ? r : 'none'
}

/** An anonymous admin posting as `senderChatId` in `chatId`: an admin of that staff group where the desk allows. */
function anonymousRole(desk: DeskAccess, chatId: number, senderChatId: number): Role {
  const groups = { staffChatId: desk.staffChatId ?? undefined, staffGroups: desk.staffGroups }
  return senderChatId === chatId && desk.staff.anonymousAdmins === true && isStaffGroup(groups, chatId)
    ? 'admin'
    : 'none'
}

/** The role of whoever sent a message or pressed a button, where they did it (a private chat or a group). */
export function roleHere(desk: DeskAccess, chat: Place | undefined, sender: Sender): Role {
  if (sender.sender_chat) return chat ? anonymousRole(desk, chat.id, sender.sender_chat.id) : 'none'
  const u = sender.from
  if (!u || u.is_bot) return 'none'
  if (!chat || chat.type === 'private') return deskRole(desk, u.id)
  return groupRole(desk, chat.id, u.id)
}

/**
 * The role of a staff id (a user, or the group's id for an anonymous admin) on a consultation: in its own group.
 */
export function roleOn(
  desk: DeskAccess & { slug: string },
  c: { staff_chat_id: number | null },
  staffId: number,
): Role {
  const chat = staffChatOf({ staffChatId: desk.staffChatId ?? undefined, slug: desk.slug }, c)
  if (staffId === chat) return desk.staff.anonymousAdmins === true ? 'admin' : 'none'
  return groupRole(desk, chat, staffId)
}

/** Whether a person may act in a group's topics (the owner and admins everywhere; an expert where listed). */
export function mayActIn(desk: DeskAccess, chatId: number, userId: number): boolean {
  return isStaffRole(groupRole(desk, chatId, userId))
}

/** Whether a staff id may act on a consultation (a button or a command naming it), in its own group. */
export function mayActOn(
  desk: DeskAccess & { slug: string },
  c: { staff_chat_id: number | null },
  staffId: number,
): boolean {
  return isStaffRole(roleOn(desk, c, staffId))
}

/** Whether a person is on the desk's staff at all. */
export function isStaff(desk: Pick<DeskAccess, 'staff'>, userId: number): boolean {
  return isStaffRole(deskRole(desk, userId))
}

/** The owner or an admin of the desk. */
export function isDeskAdmin(desk: Pick<DeskAccess, 'staff'>, userId: number): boolean {
  return isAdminRole(deskRole(desk, userId))
}

export function isOwner(desk: Pick<DeskAccess, 'staff'>, userId: number): boolean {
  return deskRole(desk, userId) === 'owner'
}
