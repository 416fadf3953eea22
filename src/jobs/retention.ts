import { sql } from 'kysely'
import { type RetentionConfig, RULE_DEFAULTS } from '../config/rules.schema'
import type { Db } from '../db/database'
import type { Logger } from '../log'
import type { Jobs } from './jobs'
import { defineQueue } from './queue'

/**
 * Retention of the tables that only grow (README "Retention"). A pg-boss scheduled job deletes, oldest first, in
 * batches of BATCH rows (each its own short statement: no long transaction, no long lock), at most MAX_BATCHES per
 * table per run; a backlog larger than that is worked off over the next runs.
 *
 * How long each table keeps its rows is a desk setting (rules.retention, src/config/rules.schema.ts, with the
 * reasons for each bound there; defaults below), applied per bot_id: a desk no longer configured keeps the defaults.
 * - processed_update: claims of handled update ids, 48 h (24 h at least: Telegram redelivers for 24 hours).
 * - inbox_update, state done: the same 48 h (its primary key is also a claim). Parked updates wait for a person and
 *   are never pruned here (src/intake/README.md).
 * - outbound_message: send idempotency keys, 30 days (the least allowed: longer than any retry of a job, including a
 *   dead letter replayed by a person; the dead-letter queue keeps jobs 30 days).
 * - conversation_state: a conversation (e.g. /paysupport) untouched for 30 days is forgotten; the client starts over.
 * - refusal_told: when a chat was last told a refusal, a day (the quiet period it serves is five minutes).
 * - private_alert: which events the desk's admins were told of privately, 30 days (8 at least: longer than pg-boss
 *   keeps a failed job, so a dead letter is never announced twice).
 * pg-boss prunes its own tables (src/jobs/jobs.ts): completed jobs are archived after 12 h, failed ones after 7 days,
 * and the archive is emptied after 7 days.
 */
export interface RetentionRule {
  table: string
  /** The timestamp column the age is measured on (indexed by migration 2026-12-01T0800_retention). */
  column: string
  /** The desk setting (rules.retention) that says how old a row may get: `...Hours` or `...Days`. */
  setting: keyof RetentionConfig
  /** An extra condition (SQL) rows must meet to be pruned. */
  where?: string
}

export const RETENTION: readonly RetentionRule[] = [
  { table: 'processed_update', column: 'processed_at', setting: 'processedUpdateHours' },
  { table: 'inbox_update', column: 'done_at', setting: 'inboxUpdateHours', where: `state = 'done'` },
  { table: 'outbound_message', column: 'sent_at', setting: 'outboundMessageDays' },
  { table: 'conversation_state', column: 'updated_at', setting: 'conversationStateDays' },
  // Which refusal a chat was told when (src/consultations/refusal-told.ts): the quiet period is minutes.
  { table: 'refusal_told', column: 'told_at', setting: 'refusalToldHours' },
  // Private alerts told (src/telegram/private-alerts.ts).
  { table: 'private_alert', column: 'created_at', setting: 'privateAlertDays' },
]

/** A retention setting in hours. */
export function retentionHours(r: RetentionConfig, setting: keyof RetentionConfig): number {
  return setting.endsWith('Days') ? r[setting] * 24 : r[setting]
}

/** The desks whose rules the prune follows (each table's rows by bot_id); others keep the defaults. */
export type RetentionDesks = readonly { botId: number; rules: { retention: RetentionConfig } }[]

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
  opts: { batch?: number; maxBatches?: number; desks?: RetentionDesks } = {},
): Promise<Record<string, number>> {
  const batch = opts.batch ?? BATCH
  const desks = opts.desks ?? []
  const bots = desks.map((d) => d.botId)
  const out: Record<string, number> = {}
  for (const r of rules) {
    const each = desks.map((d) => retentionHours(d.rules.retention, r.setting))
    const other = retentionHours(RULE_DEFAULTS.retention, r.setting)
    // The shortest age first (the column's index finds the candidates), then each row's own desk's age.
    const least = Math.min(other, ...each)
    let total = 0
    for (let i = 0; i < (opts.maxBatches ?? MAX_BATCHES); i++) {
      const extra = r.where ? sql` and ${sql.raw(r.where)}` : sql``
      const res = await sql`
        delete from ${sql.table(r.table)} where ctid = any (array(
          select t.ctid from ${sql.table(r.table)} t
            where t.${sql.ref(r.column)} < now() - make_interval(hours => ${least})
              and t.${sql.ref(r.column)} < now() - make_interval(hours => coalesce((select x.h
                from unnest(${bots}::bigint[], ${each}::int[]) as x(b, h) where x.b = t.bot_id), ${other}))${extra}
            order by t.${sql.ref(r.column)} limit ${batch}))`.execute(db)
      const n = Number(res.numAffectedRows ?? 0)
      total += n
      if (n < batch) break
    }
    out[r.table] = total
  }
  return out
}

/** Registers the retention worker and its schedule (worker processes; after `jobs.start()`). */
export async function startRetention(
  jobs: Jobs,
  db: Db,
  log: Logger,
  desks: RetentionDesks = [],
): Promise<void> {
  await jobs.work(retentionQueue, async () => {
    const pruned = await pruneOnce(db, RETENTION, { desks })
    if (Object.values(pruned).some((n) => n > 0)) log.info({ pruned }, 'retention: pruned old rows')
    return pruned
  })
  await jobs.boss.schedule(retentionQueue.name, RETENTION_CRON, {}, { tz: 'UTC' })
}
