import { sql } from 'kysely'
import type { Db } from '../db/database'
import type { Logger } from '../log'
import type { Jobs } from './jobs'
import { defineQueue } from './queue'

/**
 * Retention of the tables that only grow (README "Retention"). A pg-boss scheduled job deletes, oldest first, in
 * batches of BATCH rows (each its own short statement: no long transaction, no long lock), at most MAX_BATCHES per
 * table per run; a backlog larger than that is worked off over the next runs.
 *
 * - processed_update: claims of handled update ids, 48 h. Telegram redelivers an update for at most 24 hours, and
 *   after a week without updates it picks the next update id at random: an older claim could swallow a new update.
 * - inbox_update, state done: the same 48 h (its primary key is also a claim). Parked updates wait for a person and
 *   are never pruned here (src/intake/README.md).
 * - outbound_message: send idempotency keys, 30 days: longer than any retry of a job, including a dead letter
 *   replayed by a person (the dead-letter queue keeps jobs 30 days).
 * - conversation_state: a conversation (e.g. /paysupport) untouched for 30 days is forgotten; the client starts over.
 * - refusal_told: when a chat was last told a refusal, a day (the quiet period it serves is five minutes).
 * - private_alert: which events the desk's admins were told of privately, 30 days.
 * pg-boss prunes its own tables (src/jobs/jobs.ts): completed jobs are archived after 12 h, failed ones after 7 days,
 * and the archive is emptied after 7 days.
 */
export interface RetentionRule {
  table: string
  /** The timestamp column the age is measured on (indexed by migration 2026-12-01T0800_retention). */
  column: string
  hours: number
  /** An extra condition (SQL) rows must meet to be pruned. */
  where?: string
}

export const RETENTION: readonly RetentionRule[] = [
  { table: 'processed_update', column: 'processed_at', hours: 48 },
  { table: 'inbox_update', column: 'done_at', hours: 48, where: `state = 'done'` },
  { table: 'outbound_message', column: 'sent_at', hours: 30 * 24 },
  { table: 'conversation_state', column: 'updated_at', hours: 30 * 24 },
  // Which refusal a chat was told when (src/consultations/refusal-told.ts): the quiet period is minutes.
  { table: 'refusal_told', column: 'told_at', hours: 24 },
  // Private alerts told (src/telegram/private-alerts.ts): longer than pg-boss keeps a failed job (7 days), so a dead
  // letter is never announced twice.
  { table: 'private_alert', column: 'created_at', hours: 30 * 24 },
]

export const BATCH = 5000
export const MAX_BATCHES = 20

export const retentionQueue = defineQueue<Record<string, never>>('ops.retention', {
  policy: 'stately',
  retryLimit: 2,
  retryDelay: 60,
  expireInSeconds: 600,
  retentionDays: 1,
})

/** Every ten minutes: small batches often rather than a large delete once a day. */
export const RETENTION_CRON = '*/10 * * * *'

/** Deletes rows past their retention, per table; returns how many rows each table lost. */
export async function pruneOnce(
  db: Db,
  rules: readonly RetentionRule[] = RETENTION,
  opts: { batch?: number; maxBatches?: number } = {},
): Promise<Record<string, number>> {
  const batch = opts.batch ?? BATCH
  const out: Record<string, number> = {}
  for (const r of rules) {
    let total = 0
    for (let i = 0; i < (opts.maxBatches ?? MAX_BATCHES); i++) {
      const extra = r.where ? sql` and ${sql.raw(r.where)}` : sql``
      const res = await sql`
        delete from ${sql.table(r.table)} where ctid = any (array(
          select ctid from ${sql.table(r.table)}
            where ${sql.ref(r.column)} < now() - make_interval(hours => ${r.hours})${extra}
            order by ${sql.ref(r.column)} limit ${batch}))`.execute(db)
      const n = Number(res.numAffectedRows ?? 0)
      total += n
      if (n < batch) break
    }
    out[r.table] = total
  }
  return out
}

/** Registers the retention worker and its schedule (worker processes; after `jobs.start()`). */
export async function startRetention(jobs: Jobs, db: Db, log: Logger): Promise<void> {
  await jobs.work(retentionQueue, async () => {
    const pruned = await pruneOnce(db)
    if (Object.values(pruned).some((n) => n > 0)) log.info({ pruned }, 'retention: pruned old rows')
    return pruned
  })
  await jobs.boss.schedule(retentionQueue.name, RETENTION_CRON, {}, { tz: 'UTC' })
}
