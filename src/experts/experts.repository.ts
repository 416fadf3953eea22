import { type Selectable, sql } from 'kysely'
import type { Db, Trx } from '../db/database'
import type { AssignmentReason, ExpertTables } from './experts.tables'

/** The experts' rows: assignments (owners and their history), profiles (name, away), mutes, snippets. */

type Q = Db | Trx
export type Assignment = Selectable<ExpertTables['expert_assignment']>
export type ExpertProfile = Selectable<ExpertTables['expert_profile']>

export function currentAssignment(q: Q, consultationId: number) {
  return q
    .selectFrom('expert_assignment')
    .selectAll()
    .where('consultation_id', '=', consultationId)
    .where('ended_at', 'is', null)
    .executeTakeFirst()
}

export function assignmentHistory(q: Q, consultationId: number) {
  return q
    .selectFrom('expert_assignment')
    .selectAll()
    .where('consultation_id', '=', consultationId)
    .orderBy('id')
    .execute()
}

/** Ends the current assignment (if any) and starts the new one, at the same database instant. */
export async function recordAssignment(
  trx: Trx,
  a: { botId: number; consultationId: number; expertId: number; by: number | null; reason: AssignmentReason },
): Promise<Assignment> {
  // One instant for both rows (clock_timestamp: later than any earlier hand-over, even in a long transaction).
  const at = (await sql<{ at: Date }>`select clock_timestamp() as at`.execute(trx)).rows[0]!.at
  await trx
    .updateTable('expert_assignment')
    .set({ ended_at: at })
    .where('consultation_id', '=', a.consultationId)
    .where('ended_at', 'is', null)
    .execute()
  return trx
    .insertInto('expert_assignment')
    .values({
      bot_id: a.botId,
      consultation_id: a.consultationId,
      expert_id: a.expertId,
      assigned_by: a.by,
      reason: a.reason,
      started_at: at,
    })
    .returningAll()
    .executeTakeFirstOrThrow()
}

export function profiles(q: Q, botId: number, userIds: number[]) {
  if (userIds.length === 0) return Promise.resolve([] as ExpertProfile[])
  return q
    .selectFrom('expert_profile')
    .selectAll()
    .where('bot_id', '=', botId)
    .where('user_id', 'in', userIds)
    .execute()
}

export function profile(q: Q, botId: number, userId: number) {
  return q
    .selectFrom('expert_profile')
    .selectAll()
    .where('bot_id', '=', botId)
    .where('user_id', '=', userId)
    .executeTakeFirst()
}

/** Creates the profile row if missing and applies `set` (a name seen on Telegram, away, the last assignment). */
export async function upsertProfile(
  q: Q,
  botId: number,
  userId: number,
  set: Partial<Pick<ExpertProfile, 'name' | 'away_since' | 'last_assigned_at'>>,
): Promise<ExpertProfile> {
  return q
    .insertInto('expert_profile')
    .values({ bot_id: botId, user_id: userId, name: null, away_since: null, last_assigned_at: null, ...set })
    .onConflict((oc) => oc.columns(['bot_id', 'user_id']).doUpdateSet({ ...set, updated_at: sql`now()` }))
    .returningAll()
    .executeTakeFirstOrThrow()
}

/** The round robin's mark: this person was just given a consultation (clock_timestamp: later than any before). */
export function markAssigned(trx: Trx, botId: number, userId: number): Promise<ExpertProfile> {
  return trx
    .insertInto('expert_profile')
    .values({ bot_id: botId, user_id: userId, last_assigned_at: sql<Date>`clock_timestamp()` })
    .onConflict((oc) =>
      oc.columns(['bot_id', 'user_id']).doUpdateSet({ last_assigned_at: sql<Date>`clock_timestamp()` }),
    )
    .returningAll()
    .executeTakeFirstOrThrow()
}

/** Open questions and live consultations (waiting or active) each candidate owns now. */
export async function loads(
  q: Q,
  botId: number,
  expertIds: number[],
): Promise<Map<number, { open: number; consultations: number }>> {
  const out = new Map(expertIds.map((id) => [id, { open: 0, consultations: 0 }]))
  if (expertIds.length === 0) return out
  const r = await sql<{ expert_id: number; open: number; consultations: number }>`
    select e.id as expert_id,
      (select count(*) from expert_assignment ea join desk_appeal a on a.consultation_id = ea.consultation_id
        where ea.bot_id = ${botId} and ea.expert_id = e.id and ea.ended_at is null and a.state = 'open') as open,
      (select count(*) from expert_assignment ea join consultation c on c.id = ea.consultation_id
        where ea.bot_id = ${botId} and ea.expert_id = e.id and ea.ended_at is null
          and c.state in ('waiting', 'active')) as consultations
    from unnest(${expertIds}::bigint[]) as e (id)`.execute(q)
  for (const row of r.rows)
    out.set(Number(row.expert_id), { open: Number(row.open), consultations: Number(row.consultations) })
  return out
}

export async function isMuted(q: Q, consultationId: number, expertId: number): Promise<boolean> {
  const r = await q
    .selectFrom('expert_mute')
    .select('expert_id')
    .where('consultation_id', '=', consultationId)
    .where('expert_id', '=', expertId)
    .executeTakeFirst()
  return r !== undefined
}

/** True when this call changed the state. */
export async function setMuted(q: Q, consultationId: number, expertId: number, muted: boolean) {
  if (muted) {
    const r = await q
      .insertInto('expert_mute')
      .values({ consultation_id: consultationId, expert_id: expertId })
      .onConflict((oc) => oc.doNothing())
      .returning('expert_id')
      .executeTakeFirst()
    return r !== undefined
  }
  const r = await q
    .deleteFrom('expert_mute')
    .where('consultation_id', '=', consultationId)
    .where('expert_id', '=', expertId)
    .executeTakeFirst()
  return Number(r.numDeletedRows) > 0
}

export function storedSnippets(q: Q, botId: number) {
  return q.selectFrom('desk_snippet').selectAll().where('bot_id', '=', botId).orderBy('name').execute()
}

export function storedSnippet(q: Q, botId: number, name: string) {
  return q
    .selectFrom('desk_snippet')
    .selectAll()
    .where('bot_id', '=', botId)
    .where('name', '=', name)
    .executeTakeFirst()
}

/** Adds or replaces a snippet; true when it was new. */
export async function putSnippet(q: Q, s: { botId: number; name: string; text: string; by: number }) {
  const r = await q
    .insertInto('desk_snippet')
    .values({ bot_id: s.botId, name: s.name, text: s.text, created_by: s.by })
    .onConflict((oc) =>
      oc.columns(['bot_id', 'name']).doUpdateSet({ text: s.text, created_by: s.by, created_at: sql`now()` }),
    )
    .returning(sql<boolean>`xmax = 0`.as('inserted'))
    .executeTakeFirstOrThrow()
  return r.inserted
}

export async function deleteSnippet(q: Q, botId: number, name: string): Promise<boolean> {
  const r = await q
    .deleteFrom('desk_snippet')
    .where('bot_id', '=', botId)
    .where('name', '=', name)
    .executeTakeFirst()
  return Number(r.numDeletedRows) > 0
}

export interface OpenQuestionRow {
  appealId: number
  number: number
  dueAt: Date
  consultationId: number
  ownerId: number | null
  title: string
  chatId: number | null
  threadId: number | null
  /** All rows the filter matches (the list itself stops at the limit). */
  total: number
}

/**
 * The desk's open questions by due time (then id): all of them, or (`owner`) those of consultations this person owns
 * now. With the consultation's title, its owner and its topic (when it has one).
 */
export async function openQuestions(
  q: Q,
  botId: number,
  f: { owner?: number | undefined; limit: number },
): Promise<OpenQuestionRow[]> {
  const r = await sql<OpenQuestionRow>`
    select a.id as "appealId", a.number, a.due_at as "dueAt", a.consultation_id as "consultationId",
      ea.expert_id as "ownerId", o.title, r.support_chat_id as "chatId", r.message_thread_id as "threadId",
      count(*) over ()::int as total
    from desk_appeal a
      join consultation c on c.id = a.consultation_id
      join orders o on o.id = c.order_id
      left join expert_assignment ea on ea.consultation_id = a.consultation_id and ea.ended_at is null
      left join desk_route r on r.consultation_id = a.consultation_id and r.state = 'active'
    where a.bot_id = ${botId} and a.state = 'open'
      ${f.owner === undefined ? sql`` : sql`and ea.expert_id = ${f.owner}`}
    order by a.due_at, a.id
    limit ${f.limit}`.execute(q)
  return r.rows.map((x) => ({
    ...x,
    ownerId: x.ownerId === null ? null : Number(x.ownerId),
    chatId: x.chatId === null ? null : Number(x.chatId),
    threadId: x.threadId === null ? null : Number(x.threadId),
  }))
}
