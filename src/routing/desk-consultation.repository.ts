import { type Selectable, sql } from 'kysely'
import type { Db, Trx } from '../db/database'
import type { RoutingTables } from './routing.tables'

/**
 * The lanes' state of a consultation (desk_consultation: topic wanted, topics created, card and title to redo, the
 * client blocked, the lane leases), and what a topic shows of the consultation's appeals.
 */

export type DeskConsultation = Selectable<RoutingTables['desk_consultation']>
type Q = Db | Trx

/**
 * The lock order every writer of desk rows follows: the consultation row first, then desk_consultation, desk_message
 * and job rows. The admission holds the consultation FOR UPDATE and then takes desk_consultation; anything that
 * would take desk_consultation (or insert a row whose foreign key key-share-locks the consultation) before the
 * consultation could deadlock with it. KEY SHARE is enough: it waits for an admission in progress without holding
 * anything, and does not block other key-share holders.
 */
export async function lockConsultationKey(trx: Trx, consultationId: number): Promise<void> {
  await sql`select 1 from consultation where id = ${consultationId} for key share`.execute(trx)
}

export async function ensureDeskConsultation(
  trx: Trx,
  c: { id: number; bot_id: number; user_id: number },
  topicWanted = false,
): Promise<void> {
  await lockConsultationKey(trx, c.id)
  await trx
    .insertInto('desk_consultation')
    .values({ consultation_id: c.id, bot_id: c.bot_id, user_id: c.user_id, topic_wanted: topicWanted })
    .onConflict((oc) =>
      topicWanted ? oc.column('consultation_id').doUpdateSet({ topic_wanted: true }) : oc.doNothing(),
    )
    .execute()
}

export function findDeskConsultation(q: Q, consultationId: number) {
  return q
    .selectFrom('desk_consultation')
    .selectAll()
    .where('consultation_id', '=', consultationId)
    .executeTakeFirst()
}

export async function setDeskFlags(
  q: Q,
  consultationId: number,
  set: Partial<Pick<DeskConsultation, 'card_dirty' | 'title_dirty' | 'topic_wanted'>>,
): Promise<void> {
  await q.updateTable('desk_consultation').set(set).where('consultation_id', '=', consultationId).execute()
}

/**
 * Clears a work flag before the work is done (and the lane sets it again if the work fails), so a request that
 * arrives while the work runs sets it anew and is not lost.
 */
export async function clearDeskFlag(q: Q, consultationId: number, flag: 'card_dirty' | 'title_dirty') {
  await q
    .updateTable('desk_consultation')
    .set({ [flag]: false })
    .where('consultation_id', '=', consultationId)
    .execute()
}

/**
 * A topic-lane job starts: the queued job is being served. Waits for an admission holding the row (it may just have
 * relied on the flag), so whatever that admission stored is committed before the lane looks for work.
 */
export async function clearInQueued(q: Q, consultationId: number): Promise<void> {
  await q
    .updateTable('desk_consultation')
    .set({ in_queued: false })
    .where('consultation_id', '=', consultationId)
    .where('in_queued', '=', true)
    .execute()
}

export async function countTopicCreated(q: Q, consultationId: number): Promise<number> {
  const r = await q
    .updateTable('desk_consultation')
    .set({ topics_created: sql`topics_created + 1` })
    .where('consultation_id', '=', consultationId)
    .returning('topics_created')
    .executeTakeFirst()
  return r?.topics_created ?? 1
}

/** Records a 403 once; true when this call recorded it (the staff are told only then). */
export async function markClientBlocked(q: Q, consultationId: number): Promise<Date | undefined> {
  const r = await q
    .updateTable('desk_consultation')
    .set({ client_blocked_at: sql`now()` })
    .where('consultation_id', '=', consultationId)
    .where('client_blocked_at', 'is', null)
    .returning('client_blocked_at')
    .executeTakeFirst()
  return r?.client_blocked_at ?? undefined
}

export async function clearClientBlocked(trx: Trx, consultationId: number): Promise<void> {
  await trx
    .updateTable('desk_consultation')
    .set({ client_blocked_at: null })
    .where('consultation_id', '=', consultationId)
    .execute()
}

/** The consultation's appeals, in order: what its topic's name (a breach mark) and card show. */
export function listAppeals(q: Q, consultationId: number) {
  return q
    .selectFrom('desk_appeal')
    .selectAll()
    .where('consultation_id', '=', consultationId)
    .orderBy('number')
    .execute()
}
