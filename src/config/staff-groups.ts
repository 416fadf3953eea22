import type { DeskRuntime } from './load'

/**
 * A desk's staff supergroups (issue 16). `staffChatId` is the desk's home group: admins, disputes, payment and
 * reconciliation notices, /report over the whole desk. `staffGroups`, when set, lists the groups consultations go to,
 * each with its experts and its own Telegram budget (20 messages a minute per group); the home group takes
 * consultations only when it is listed there. Unset: the home group alone, with every expert, as before.
 *
 * A consultation's group is chosen once, at activation (src/routing/staff-groups.ts), and stored on the
 * consultation (staff_chat_id; null on consultations activated before groups existed: the home group).
 */
export interface StaffGroup {
  chatId: number
  experts: number[]
}

type GroupsOf = Pick<DeskRuntime, 'staffChatId' | 'staffGroups' | 'staff'>

/** Work that needs a staff group on a desk that has none yet (being set up): a job retries it later. */
export class NoStaffGroup extends Error {
  override name = 'NoStaffGroup'
  constructor(slug: string) {
    super(`desk ${slug} has no staff group yet`)
  }
}

/** The groups that take new consultations (none on a desk being set up). */
export function staffGroupsOf(desk: GroupsOf): StaffGroup[] {
  if (desk.staffGroups?.length) return desk.staffGroups
  if (desk.staffChatId === undefined) return []
  return [{ chatId: desk.staffChatId, experts: desk.staff.experts }]
}

/** The desk's home group; NoStaffGroup on a desk being set up (callers that can skip check staffChatId first). */
export function homeChat(desk: Pick<DeskRuntime, 'staffChatId' | 'slug'>): number {
  if (desk.staffChatId === undefined) throw new NoStaffGroup(desk.slug)
  return desk.staffChatId
}

/** The group a consultation's topic, card, summary and notices live in. */
export function staffChatOf(
  desk: Pick<DeskRuntime, 'staffChatId' | 'slug'>,
  c: { staff_chat_id: number | null },
): number {
  return c.staff_chat_id ?? homeChat(desk)
}

/** Whether a chat is one of the desk's staff groups (the home group or a listed one). */
export function isStaffGroup(
  desk: Pick<GroupsOf, 'staffChatId' | 'staffGroups'>,
  chatId: number | undefined,
): boolean {
  if (chatId === undefined) return false
  return (
    (desk.staffChatId !== undefined && chatId === desk.staffChatId) ||
    (desk.staffGroups ?? []).some((g) => g.chatId === chatId)
  )
}

/** The experts who may act in a group (the /assign buttons there). */
export function expertsOfGroup(desk: GroupsOf, chatId: number): number[] {
  const listed = desk.staffGroups?.find((g) => g.chatId === chatId)
  if (listed) return listed.experts
  return chatId === desk.staffChatId ? desk.staff.experts : []
}
