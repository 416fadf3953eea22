import { sql } from 'kysely'
import type { Db, Trx } from '../db/database'
import type { BreachOutcome } from './lifecycle.tables'

/**
 * All Kysely code of the SLA and lifecycle jobs. Every "do it once" is a conditional UPDATE here: the row moves
 * only if it has not moved yet, and the caller acts only on the row it moved.
 */

type Q = Db | Trx

// ---------------------------------------------------------------------------------------------------------------
// Appeals

export function findAppeal(q: Q, appealId: number) {
  return q.selectFrom('desk_appeal').selectAll().where('id', '=', appealId).executeTakeFirst()
}

export async function ensureAppealSla(
  trx: Trx,
  a: { id: number; bot_id: number; consultation_id: number },
): Promise<void> {
  await trx
    .insertInto('appeal_sla')
    .values({ appeal_id: a.id, bot_id: a.bot_id, consultation_id: a.consultation_id })
    .onConflict((oc) => oc.column('appeal_id').doNothing())
    .execute()
}

export function findAppealSla(q: Q, appealId: number) {
  return q.selectFrom('appeal_sla').selectAll().where('appeal_id', '=', appealId).executeTakeFirst()
}

/** True when this call recorded the reminder (it was not recorded before). */
export async function markReminded(trx: Trx, appealId: number, at: Date): Promise<boolean> {
  const r = await trx
    .updateTable('appeal_sla')
    .set({ reminded_at: at })
    .where('appeal_id', '=', appealId)
    .where('reminded_at', 'is', null)
    .returning('appeal_id')
    .executeTakeFirst()
  return r !== undefined
}

/**
 * Marks an open, unanswered appeal breached, once: only the call that moves breached_at from null gets the row.
 * The caller holds the consultation's lock, which the expert's answer takes too, so an answer and a breach are
 * decided one after the other, never both on the same open appeal.
 */
export function markBreached(trx: Trx, appealId: number, at: Date) {
  return trx
    .updateTable('desk_appeal')
    .set({ breached_at: at })
    .where('id', '=', appealId)
    .where('state', '=', 'open')
    .where('breached_at', 'is', null)
    .where('due_at', '<=', at)
    .returningAll()
    .executeTakeFirst()
}

export async function recordBreachPolicy(
  trx: Trx,
  appealId: number,
  r: {
    policy: unknown
    outcome: BreachOutcome
    detail: Record<string, unknown>
    clientBlockedAt: Date | null
  },
): Promise<boolean> {
  const row = await trx
    .updateTable('appeal_sla')
    .set({
      breach_policy: JSON.stringify(r.policy),
      breach_outcome: r.outcome,
      breach_detail: JSON.stringify(r.detail),
      ...(r.clientBlockedAt ? { client_blocked_at: r.clientBlockedAt } : {}),
    })
    .where('appeal_id', '=', appealId)
    .where('breach_outcome', 'is', null)
    .returning('appeal_id')
    .executeTakeFirst()
  return row !== undefined
}

export async function markRefundFlagged(trx: Trx, appealId: number, at: Date): Promise<boolean> {
  const r = await trx
    .updateTable('appeal_sla')
    .set({ refund_flagged_at: at })
    .where('appeal_id', '=', appealId)
    .where('refund_flagged_at', 'is', null)
    .returning('appeal_id')
    .executeTakeFirst()
  return r !== undefined
}

export async function noteClientBlocked(trx: Trx, appealId: number, at: Date): Promise<void> {
  await trx
    .updateTable('appeal_sla')
    .set({ client_blocked_at: at })
    .where('appeal_id', '=', appealId)
    .where('client_blocked_at', 'is', null)
    .execute()
}

/** When the client was found to have blocked the bot (the desk's mark, else the client's), or null. */
export async function clientBlockedAt(q: Q, consultationId: number): Promise<Date | null> {
  const r = await sql<{ at: Date | null }>`
    select coalesce(dc.client_blocked_at, cl.blocked_bot_at) as at
      from consultation c
      left join desk_consultation dc on dc.consultation_id = c.id
      left join client cl on cl.bot_id = c.bot_id and cl.user_id = c.user_id
      where c.id = ${consultationId}`.execute(q)
  return r.rows[0]?.at ?? null
}

export function openAppealsOf(q: Q, consultationId: number) {
  return q
    .selectFrom('desk_appeal')
    .selectAll()
    .where('consultation_id', '=', consultationId)
    .where('state', '=', 'open')
    .orderBy('number')
    .execute()
}

// ---------------------------------------------------------------------------------------------------------------
// Consultations

export async function ensureLifecycle(trx: Trx, c: { id: number; bot_id: number }): Promise<void> {
  await trx
    .insertInto('consultation_lifecycle')
    .values({ consultation_id: c.id, bot_id: c.bot_id })
    .onConflict((oc) => oc.column('consultation_id').doNothing())
    .execute()
}

export function findLifecycle(q: Q, consultationId: number) {
  return q
    .selectFrom('consultation_lifecycle')
    .selectAll()
    .where('consultation_id', '=', consultationId)
    .executeTakeFirst()
}

/** True when the "closes soon" notice was not yet written for this end of the window. */
export async function markClosingSoon(trx: Trx, consultationId: number, accessUntil: Date): Promise<boolean> {
  const r = await trx
    .updateTable('consultation_lifecycle')
    .set({ closing_soon_for: accessUntil })
    .where('consultation_id', '=', consultationId)
    .where((eb) => eb.or([eb('closing_soon_for', 'is', null), eb('closing_soon_for', '<>', accessUntil)]))
    .returning('consultation_id')
    .executeTakeFirst()
  return r !== undefined
}

/**
 * Closes an active consultation whose window has ended (access_until <= at), once. closed_at is the window's end:
 * the instant the consultation stopped taking questions, whenever the job ran.
 */
export function closeEndedWindow(trx: Trx, consultationId: number, at: Date) {
  return trx
    .updateTable('consultation')
    .set({ state: 'closed', closed_at: sql`access_until`, updated_at: sql`now()` })
    .where('id', '=', consultationId)
    .where('state', '=', 'active')
    .where('access_until', '<=', at)
    .returningAll()
    .executeTakeFirst()
}

export async function markWindowClosed(trx: Trx, consultationId: number, at: Date): Promise<void> {
  await trx
    .updateTable('consultation_lifecycle')
    .set({ window_closed_at: at })
    .where('consultation_id', '=', consultationId)
    .where('window_closed_at', 'is', null)
    .execute()
}

export async function markTopicClosed(q: Q, consultationId: number): Promise<boolean> {
  const r = await q
    .updateTable('consultation_lifecycle')
    .set({ topic_closed_at: sql`now()` })
    .where('consultation_id', '=', consultationId)
    .where('topic_closed_at', 'is', null)
    .returning('consultation_id')
    .executeTakeFirst()
  return r !== undefined
}

/** Whether the topic lane has nothing left to post (so closing the topic does not force it open again). */
export async function topicLaneIdle(q: Q, consultationId: number): Promise<boolean> {
  const r = await sql<{ idle: boolean }>`
    select not exists (
        select 1 from desk_message
          where consultation_id = ${consultationId} and direction = 'in' and state = 'pending')
      and coalesce((select not (dc.card_dirty or dc.title_dirty or dc.in_queued)
                           and (dc.in_lease_until is null or dc.in_lease_until < now())
                      from desk_consultation dc where dc.consultation_id = ${consultationId}), true) as idle`.execute(
    q,
  )
  return r.rows[0]?.idle === true
}

// ---------------------------------------------------------------------------------------------------------------
// The sweeper's look-ups (each bounded; the jobs they feed decide again under locks)

/** Active windows past their end by more than `graceSeconds` (their close job was lost or is late). */
export async function overdueWindows(q: Q, graceSeconds: number, limit: number) {
  const r = await sql<{ id: number; access_until: Date }>`
    select id, access_until from consultation
      where state = 'active' and access_until < now() - make_interval(secs => ${graceSeconds})
      order by access_until limit ${limit}`.execute(q)
  return r.rows
}

/** Open appeals past their due time, not breached, by more than `graceSeconds`. */
export async function overdueAppeals(q: Q, graceSeconds: number, limit: number) {
  const r = await sql<{ id: number }>`
    select a.id from desk_appeal a join consultation c on c.id = a.consultation_id
      where a.state = 'open' and a.breached_at is null and a.due_at < now() - make_interval(secs => ${graceSeconds})
        and not (c.state = 'revoked' and c.refund_policy = 'stop')
      order by a.due_at limit ${limit}`.execute(q)
  return r.rows.map((x) => x.id)
}

/** Open appeals whose SLA jobs were never written (no appeal_sla row): opened before this code, or elsewhere. */
export async function unscheduledAppeals(q: Q, limit: number) {
  return q
    .selectFrom('desk_appeal as a')
    .leftJoin('appeal_sla as s', 's.appeal_id', 'a.id')
    .selectAll('a')
    .where('a.state', '=', 'open')
    .where('a.breached_at', 'is', null)
    .where('s.appeal_id', 'is', null)
    .orderBy('a.due_at')
    .limit(limit)
    .execute()
}

/** Topics showing a breach (🔴) although no open appeal of theirs is breached any more (answered since). */
export async function staleBreachTitles(q: Q, prefix: string, limit: number) {
  const r = await sql<{ id: number; bot_id: number; user_id: number }>`
    select c.id, c.bot_id, c.user_id from desk_route r join consultation c on c.id = r.consultation_id
      where r.state = 'active' and r.topic_name like ${`${prefix}%`}
        and not exists (select 1 from desk_appeal a
                          where a.consultation_id = c.id and a.state = 'open' and a.breached_at is not null)
      limit ${limit}`.execute(q)
  return r.rows
}

/** Open appeals not breached and not reminded yet (the caller computes each one's reminder instant). */
export async function unremindedAppeals(q: Q, limit: number) {
  const r = await sql<{ id: number; bot_id: number; accepted_at: Date; sla_minutes: number }>`
    select a.id, a.bot_id, a.accepted_at, a.sla_minutes from desk_appeal a
      join consultation c on c.id = a.consultation_id
      left join appeal_sla s on s.appeal_id = a.id
      where a.state = 'open' and a.breached_at is null and s.reminded_at is null
        and not (c.state = 'revoked' and c.refund_policy = 'stop')
      order by a.due_at limit ${limit}`.execute(q)
  return r.rows
}

/** Breached appeals still open once their consultation stopped taking questions, not yet flagged for a refund. */
export async function unflaggedBreachedAtEnd(q: Q, limit: number) {
  const r = await sql<{ id: number }>`
    select a.id from desk_appeal a
      join consultation c on c.id = a.consultation_id
      left join appeal_sla s on s.appeal_id = a.id
      where a.state = 'open' and a.breached_at is not null and s.refund_flagged_at is null
        and (c.state <> 'active' or c.access_until <= now())
        and not (c.state = 'revoked' and c.refund_policy = 'stop')
      order by a.due_at limit ${limit}`.execute(q)
  return r.rows.map((x) => x.id)
}

/** Closed consultations with a live topic, no open appeal, and the topic not yet closed by us. */
export async function topicsToClose(q: Q, limit: number) {
  const r = await sql<{ consultation_id: number }>`
    select c.id as consultation_id from consultation c
      join desk_route r on r.consultation_id = c.id and r.state = 'active'
      left join consultation_lifecycle l on l.consultation_id = c.id
      where c.state = 'closed' and l.topic_closed_at is null
        and not exists (select 1 from desk_appeal a where a.consultation_id = c.id and a.state = 'open')
      limit ${limit}`.execute(q)
  return r.rows.map((x) => x.consultation_id)
}
