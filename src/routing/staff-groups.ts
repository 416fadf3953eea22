import { sql } from 'kysely'
import type { DeskRuntime } from '../config/load'
import { NoStaffGroup, staffGroupsOf } from '../config/staff-groups'
import type { Db, Trx } from '../db/database'

/**
 * The group for a new consultation (issue 16; the groups themselves: src/config/staff-groups.ts): its owner's group
 * (the first that lists the owner), else the least loaded one — fewest live consultations; ties go to the earlier
 * group in the config. Activation calls it under the desk's assignment lock (src/experts/assign.ts), so two
 * activations at once see each other's choice.
 */
export async function chooseStaffGroup(
  q: Db | Trx,
  desk: Pick<DeskRuntime, 'botId' | 'staffChatId' | 'staffGroups' | 'staff'>,
  ownerId?: number | null,
  /** The consultation being placed (already active in the caller's transaction): not its own load. */
  consultationId?: number,
): Promise<number> {
  const groups = staffGroupsOf(desk)
  if (groups.length === 0) throw new NoStaffGroup(`of bot ${desk.botId}`)
  if (ownerId != null) {
    const own = groups.find((g) => g.experts.includes(ownerId))
    if (own) return own.chatId
  }
  if (groups.length === 1) return groups[0]!.chatId
  const r = await sql<{ chat: number; n: number }>`
    select coalesce(staff_chat_id, ${desk.staffChatId}) as chat, count(*)::int as n from consultation
      where bot_id = ${desk.botId} and state = 'active' and id <> ${consultationId ?? 0}
      group by 1`.execute(q)
  const load = new Map(r.rows.map((x) => [Number(x.chat), x.n]))
  let best = groups[0]!
  for (const g of groups) if ((load.get(g.chatId) ?? 0) < (load.get(best.chatId) ?? 0)) best = g
  return best.chatId
}
