import { sql } from 'kysely'
import { audit } from '../audit/audit'
import type { Db, Trx } from '../db/database'
import { isDeskAdminNow } from '../settings/settings'
import type { Jobs } from './jobs'
import { DEAD_LETTER_QUEUE } from './queue'

/**
 * Work that waits for a person, and handing it back for another try (an admin's /stuck and its buttons):
 *
 * - a parked update (`inbox_update`, state parked: it failed five times, src/intake/README.md) goes back to pending
 *   with its attempts reset; its handler is idempotent, so a partial first run does no harm;
 * - a dead-lettered job (a pg-boss job that failed all its retries and was copied to the dead-letter queue) is
 *   retried by pg-boss's own `retry` (failed -> retry, one more attempt allowed), in the transaction that writes the
 *   audit row.
 *
 * Both are conditional updates of a row still waiting: a second press, or two admins at once, hand it back once;
 * both check again, in their transaction, that the presser is still the desk's owner or an admin.
 */

/** How far back dead letters are listed and announced (pg-boss keeps failed jobs 7 days, then archives them). */
export const DEAD_LETTER_LOOKBACK_HOURS = 48

export interface ParkedUpdate {
  updateId: number
  kind: string
  parkedAt: Date | null
  lastError: string | null
}

export async function parkedUpdates(db: Db, botId: number, limit = 10): Promise<ParkedUpdate[]> {
  const rows = await db
    .selectFrom('inbox_update')
    .select(['update_id', 'kind', 'done_at', 'last_error'])
    .where('bot_id', '=', botId)
    .where('state', '=', 'parked')
    .orderBy('update_id')
    .limit(limit)
    .execute()
  return rows.map((r) => ({
    updateId: r.update_id,
    kind: r.kind,
    parkedAt: r.done_at,
    lastError: r.last_error,
  }))
}

export type HandBackParkedResult = 'handed-back' | 'not-parked' | 'forbidden'

/**
 * Hands a parked update back to the inbox: 'not-parked' when it is not (handed back already, or unknown),
 * 'forbidden' when the actor is no longer the desk's owner or an admin.
 */
export async function handBackParked(
  db: Db,
  input: { botId: number; updateId: number; actorId: number },
): Promise<HandBackParkedResult> {
  return db.transaction().execute(async (trx) => {
    if (!(await isDeskAdminNow(trx, input.botId, input.actorId))) return 'forbidden'
    const r = await trx
      .updateTable('inbox_update')
      .set({ state: 'pending', attempts: 0, tries: 0, next_attempt_at: sql`now()`, done_at: null })
      .where('bot_id', '=', input.botId)
      .where('update_id', '=', input.updateId)
      .where('state', '=', 'parked')
      .returning(['kind', 'last_error'])
      .executeTakeFirst()
    if (!r) return 'not-parked'
    await audit(trx, {
      botId: input.botId,
      actorId: input.actorId,
      action: 'intake.handed_back',
      subjectType: 'update',
      subjectId: input.updateId,
      details: { kind: r.kind, lastError: r.last_error },
    })
    return 'handed-back'
  })
}

export interface DeadLetter {
  id: string
  queue: string
  failedAt: Date
  /** The desk the job names (its `botId`), if it names one. */
  botId: number | null
  error: string | null
}

/**
 * Jobs that failed all their retries and went to the dead-letter queue, newest first, from the last
 * DEAD_LETTER_LOOKBACK_HOURS. A job that names another desk (`botId` in its data) is not listed for this one.
 */
export async function deadLetters(db: Db | Trx, botId: number | null, limit = 10): Promise<DeadLetter[]> {
  const r = await sql<{
    id: string
    name: string
    completed_on: Date
    bot_id: string | null
    error: string | null
  }>`
    select id, name, completed_on, data->>'botId' as bot_id, left(coalesce(output->>'message', output::text), 300) as error
      from pgboss.job
      where state = 'failed' and dead_letter is not null and name <> ${DEAD_LETTER_QUEUE}
        and completed_on > now() - make_interval(hours => ${DEAD_LETTER_LOOKBACK_HOURS})
        and (${botId}::bigint is null or data->>'botId' is null or data->>'botId' = ${botId}::bigint::text)
      order by completed_on desc
      limit ${limit}`.execute(db)
  return r.rows.map((x) => ({
    id: x.id,
    queue: x.name,
    failedAt: x.completed_on,
    botId: x.bot_id !== null && /^-?\d+$/.test(x.bot_id) ? Number(x.bot_id) : null,
    error: x.error,
  }))
}

/**
 * Retries a dead-lettered job once more: 'not-waiting' when it is not failed any more (handed back already, or
 * unknown), 'forbidden' when the actor is no longer the desk's owner or an admin.
 */
export async function handBackDeadLetter(
  jobs: Jobs,
  db: Db,
  input: { botId: number; jobId: string; actorId: number },
): Promise<{ status: 'handed-back'; queue: string } | { status: 'not-waiting' } | { status: 'forbidden' }> {
  if (!/^[0-9a-f-]{36}$/.test(input.jobId)) return { status: 'not-waiting' }
  const r = await db.transaction().execute(async (trx) => {
    if (!(await isDeskAdminNow(trx, input.botId, input.actorId))) return 'forbidden' as const
    const job = await sql<{ name: string; bot_id: string | null }>`
      select name, data->>'botId' as bot_id from pgboss.job
        where id = ${input.jobId}::uuid and state = 'failed' and dead_letter is not null for update`.execute(
      trx,
    )
    const row = job.rows[0]
    // Another desk's job is not this desk's admin's to hand back.
    if (!row || (row.bot_id !== null && row.bot_id !== String(input.botId))) return undefined
    if (!(await jobs.retryFailed(trx, row.name, input.jobId))) return undefined
    await audit(trx, {
      botId: input.botId,
      actorId: input.actorId,
      action: 'job.handed_back',
      subjectType: 'job',
      subjectId: input.jobId,
      details: { queue: row.name },
    })
    return row.name
  })
  if (r === 'forbidden') return { status: 'forbidden' }
  if (r === undefined) return { status: 'not-waiting' }
  jobs.nudge(r)
  return { status: 'handed-back', queue: r }
}
