import { sql } from 'kysely'
import type { DeskConfig } from '../config/schema'
import type { Db, Trx } from '../db/database'
import { editDeskGuarded, type Guard, type GuardedOutcome } from './edit'

/**
 * Removals from /settings that must look at what is running (issue 24), each one edit under the desk's row lock
 * (src/settings/edit.ts, a Guard):
 * - a plan with live subscribers is not deleted: the refusal gives their number and points to Pause, which stops
 *   new sales while current subscriptions renew as bought (every part of a running subscription reads its plan).
 *   The count is exact: a plan's first charge and its link's creation read the plan under a share lock of the same
 *   row (src/settings/settings.ts planInDesk), so a subscription is either counted here or born seeing the plan
 *   gone (then its charge is refunded at once: src/subscriptions/charge-refusal.ts).
 * - a staff group with live consultations routed to it is not unbound: the refusal gives their number. A live
 *   consultation is one waiting or active, or a closed one with a question still open (answered after the window).
 *   Unbinding the home group makes the next listed group the home group; the last group unbound leaves the desk
 *   with none, and it sells nothing until one is bound again. The bot stays in the group (removing it is the
 *   owner's call in Telegram).
 */

export async function deletePlan(
  db: Db,
  botId: number,
  userId: number,
  version: number,
  code: string,
  source: 'telegram' | 'dashboard' = 'telegram',
): Promise<GuardedOutcome> {
  const guard: Guard = async (trx) => {
    const n = await liveSubscribers(trx, botId, code)
    return n > 0 ? { key: 'st-plan-delete-live', params: { count: n } } : undefined
  }
  return editDeskGuarded(
    db,
    botId,
    userId,
    version,
    (doc) => {
      const i = doc.plans.findIndex((p) => p.code === code)
      if (i < 0) return 'gone'
      doc.plans.splice(i, 1)
    },
    source,
    guard,
  )
}

/** The desk's staff groups: the home group first, then the listed ones. */
export function boundGroups(doc: Pick<DeskConfig, 'staffChatId' | 'staffGroups'>): number[] {
  const home = doc.staffChatId ?? undefined
  return [
    ...new Set([...(home !== undefined ? [home] : []), ...(doc.staffGroups ?? []).map((g) => g.chatId)]),
  ]
}

/** Takes a group off the desk's document; 'gone' when it is not one of its groups. */
export function removeStaffGroup(doc: DeskConfig, chatId: number): 'gone' | undefined {
  if (!boundGroups(doc).includes(chatId)) return 'gone'
  const listed = (doc.staffGroups ?? []).filter((g) => g.chatId !== chatId)
  if (doc.staffChatId === chatId) {
    const next = listed[0]?.chatId
    if (next === undefined) delete doc.staffChatId
    else doc.staffChatId = next
  }
  // One group left that is the home group: no list needed (the home group alone takes every consultation).
  if (listed.length === 0 || (listed.length === 1 && listed[0]!.chatId === doc.staffChatId))
    delete doc.staffGroups
  else doc.staffGroups = listed
  return undefined
}

export async function unbindGroup(
  db: Db,
  botId: number,
  userId: number,
  version: number,
  chatId: number,
): Promise<GuardedOutcome> {
  const guard: Guard = async (trx, doc) => {
    const n = await liveInGroup(trx, botId, doc, chatId)
    return n > 0 ? { key: 'st-group-unbind-live', params: { count: n } } : undefined
  }
  return editDeskGuarded(
    db,
    botId,
    userId,
    version,
    (doc) => removeStaffGroup(doc, chatId),
    'telegram',
    guard,
  )
}

/** Active subscriptions to a plan: a plan that has any is not removed (call under the desk's row lock). */
export async function liveSubscribers(trx: Trx, botId: number, code: string): Promise<number> {
  const r = await trx
    .selectFrom('subscription')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('bot_id', '=', botId)
    .where('plan_code', '=', code)
    .where('state', '=', 'active')
    .executeTakeFirstOrThrow()
  return r.n
}

/** Live consultations routed to a staff group: a group that has any is not unbound (under the desk's row lock). */
export async function liveInGroup(
  trx: Trx,
  botId: number,
  doc: Pick<DeskConfig, 'staffChatId'>,
  chatId: number,
): Promise<number> {
  const home = doc.staffChatId === chatId
  const r = await trx
    .selectFrom('consultation as c')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('c.bot_id', '=', botId)
    .where((eb) =>
      home
        ? eb.or([eb('c.staff_chat_id', '=', chatId), eb('c.staff_chat_id', 'is', null)])
        : eb('c.staff_chat_id', '=', chatId),
    )
    .where((eb) =>
      eb.or([
        eb('c.state', 'in', ['waiting', 'active']),
        eb.exists(
          eb
            .selectFrom('desk_appeal as a')
            .select('a.id')
            .whereRef('a.consultation_id', '=', 'c.id')
            .where('a.state', '=', 'open'),
        ),
      ]),
    )
    .executeTakeFirstOrThrow()
  return r.n
}
