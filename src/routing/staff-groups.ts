import { sql } from 'kysely'
import type { DeskRuntime } from '../config/load'
import type { Db } from '../db/database'

/**
 * Several staff groups per desk (issue 16; config desks[].staffGroups): which group a new consultation's topic goes
 * to. Kept apart from the owner (src/experts, another piece of work) so the two can be joined: the caller passes the
 * consultation's owner when it has one.
 *
 * NOT wired yet: topics are still created in desk.staffChatId (src/routing/topics.ts); answering across groups is
 * not checked yet. Each group already has its own Telegram budget (src/telegram/budget.ts keys by chat).
 */
export interface StaffGroup {
  chatId: number
  experts: number[]
}

/** The desk's groups: staffGroups when set, else the one staffChatId with the desk's experts. */
export function staffGroupsOf(
  desk: Pick<DeskRuntime, 'staffChatId' | 'staffGroups' | 'staff'>,
): StaffGroup[] {
  if (desk.staffGroups?.length) return desk.staffGroups
  return [{ chatId: desk.staffChatId, experts: desk.staff.experts }]
}

/**
 * The group for a new consultation: its owner's group (the first that lists the owner), else the least loaded one
 * (fewest active topics; ties go to the earlier group in the config).
 */
export async function chooseStaffGroup(
  db: Db,
  desk: Pick<DeskRuntime, 'botId' | 'staffChatId' | 'staffGroups' | 'staff'>,
  ownerId?: number | null,
): Promise<number> {
  const groups = staffGroupsOf(desk)
  if (ownerId != null) {
    const own = groups.find((g) => g.experts.includes(ownerId))
    if (own) return own.chatId
  }
  if (groups.length === 1) return groups[0]!.chatId
  const ids = groups.map((g) => g.chatId)
  const r = await sql<{ chat: string; n: number }>`
    select support_chat_id::text as chat, count(*)::int as n from desk_route
      where bot_id = ${desk.botId} and state = 'active' and support_chat_id = any (${ids}::bigint[])
      group by support_chat_id`.execute(db)
  const load = new Map(r.rows.map((x) => [Number(x.chat), x.n]))
  let best = groups[0]!
  for (const g of groups) if ((load.get(g.chatId) ?? 0) < (load.get(best.chatId) ?? 0)) best = g
  return best.chatId
}
