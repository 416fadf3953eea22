import { type Selectable, sql } from 'kysely'
import type { Db, Trx } from '../db/database'
import type { RoutingTables } from './routing.tables'

/** All Kysely code for topic routes. A route is keyed (bot_id, support_chat_id, message_thread_id). */

export type Route = Selectable<RoutingTables['desk_route']>
type Q = Db | Trx

/** The consultation a topic belongs to (any state: a replaced topic still names its consultation). */
export function findRouteByThread(q: Q, botId: number, supportChatId: number, threadId: number) {
  return q
    .selectFrom('desk_route')
    .selectAll()
    .where('bot_id', '=', botId)
    .where('support_chat_id', '=', supportChatId)
    .where('message_thread_id', '=', threadId)
    .executeTakeFirst()
}

/** Where the consultation's topic is now, if it has one. */
export function activeRoute(q: Q, consultationId: number) {
  return q
    .selectFrom('desk_route')
    .selectAll()
    .where('consultation_id', '=', consultationId)
    .where('state', '=', 'active')
    .executeTakeFirst()
}

export async function insertRoute(
  trx: Trx,
  r: {
    botId: number
    supportChatId: number
    threadId: number
    consultationId: number
    userId: number
    topicName: string
    summaryPending: boolean
  },
): Promise<Route> {
  return trx
    .insertInto('desk_route')
    .values({
      bot_id: r.botId,
      support_chat_id: r.supportChatId,
      message_thread_id: r.threadId,
      consultation_id: r.consultationId,
      user_id: r.userId,
      topic_name: r.topicName,
      summary_pending: r.summaryPending,
    })
    .returningAll()
    .executeTakeFirstOrThrow()
}

/** Marks the consultation's live topic as replaced (deleted, closed or archived); returns it. */
export function replaceActiveRoute(trx: Trx, consultationId: number, reason: string) {
  return trx
    .updateTable('desk_route')
    .set({ state: 'replaced', replaced_reason: reason, replaced_at: sql`now()` })
    .where('consultation_id', '=', consultationId)
    .where('state', '=', 'active')
    .returningAll()
    .executeTakeFirst()
}

/** What a lane records about a topic after Telegram answered: the pinned card, the summary, the current name. */
export type RoutePatch = Partial<{
  card_message_id: number
  card_pinned_message_id: number
  summary_pending: boolean
  topic_name: string
}>

export async function updateRoute(q: Q, r: Route, patch: RoutePatch): Promise<void> {
  await q
    .updateTable('desk_route')
    .set(patch)
    .where('bot_id', '=', r.bot_id)
    .where('support_chat_id', '=', r.support_chat_id)
    .where('message_thread_id', '=', r.message_thread_id)
    .execute()
}
