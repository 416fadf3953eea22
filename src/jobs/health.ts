import { sql } from 'kysely'
import { RULE_DEFAULTS, type RulesConfig } from '../config/rules.schema'
import type { Db } from '../db/database'
import { DEAD_AFTER_SECONDS } from './liveness'
import { DEAD_LETTER_QUEUE } from './queue'

/**
 * The outbox's part of readiness, read from PostgreSQL (the same answer in every process):
 * - stalled: jobs have been due for longer than `stallSeconds` and no live worker process (heartbeat within
 *   DEAD_AFTER_SECONDS) took a job for that long - workers are gone, stuck or cut off from the queue;
 * - dead letters growing: jobs reached the dead-letter queue within the last `deadLetterWindowMinutes`.
 * A process whose role runs workers reports a stall as not ready (src/server/health.ts); a bot-only process shows
 * it without failing: its intake works regardless, and a load balancer must not stop taking updates for it. New
 * dead letters are shown, never unreadiness: the process works, a person has to look at one job (the alert on
 * outbox_dead_letters says so); a load balancer pulling the only bot for it would stop everything else.
 */
export interface JobsHealth {
  /** Age of the oldest due job not taken yet (seconds; 0 when none). */
  oldestDueSeconds: number
  /** Live worker processes (role all or worker). */
  workers: number
  /** Seconds since a live worker last took a job (or started, if it took none yet); null without workers. */
  sinceTakeSeconds: number | null
  /** Jobs that reached the dead-letter queue within the window. */
  newDeadLetters: number
  stalled: boolean
}

export interface JobsHealthOptions {
  stallSeconds?: number
  deadLetterWindowMinutes?: number
}

/**
 * The limits are desk settings (rules.stallSeconds, rules.deadLetterMinutes; src/config/rules.schema.ts), and one
 * process serves every desk of its deployment: the strictest wins (the shortest stall, the longest window).
 */
export function readinessLimits(desks: readonly { rules: RulesConfig }[]): Required<JobsHealthOptions> {
  if (!desks.length)
    return {
      stallSeconds: RULE_DEFAULTS.stallSeconds,
      deadLetterWindowMinutes: RULE_DEFAULTS.deadLetterMinutes,
    }
  return {
    stallSeconds: Math.min(...desks.map((d) => d.rules.stallSeconds)),
    deadLetterWindowMinutes: Math.max(...desks.map((d) => d.rules.deadLetterMinutes)),
  }
}

export async function jobsHealth(db: Db, opts: JobsHealthOptions = {}): Promise<JobsHealth> {
  const stall = opts.stallSeconds ?? RULE_DEFAULTS.stallSeconds
  const r = await sql<{ oldest: number; workers: number; since: number | null; dead: number }>`
    select
      coalesce((select extract(epoch from now() - min(greatest(created_on, start_after)))
        from pgboss.job where state in ('created', 'retry') and start_after <= now()
          and name <> ${DEAD_LETTER_QUEUE} and not starts_with(name, '__pgboss')), 0)::float8 as oldest,
      (select count(*) from app_instance where role <> 'bot'
        and beat_at > now() - make_interval(secs => ${DEAD_AFTER_SECONDS}))::int as workers,
      (select extract(epoch from now() - max(coalesce(took_at, started_at))) from app_instance where role <> 'bot'
        and beat_at > now() - make_interval(secs => ${DEAD_AFTER_SECONDS}))::float8 as since,
      (select count(*) from pgboss.job where name = ${DEAD_LETTER_QUEUE}
        and created_on > now() - make_interval(mins => ${opts.deadLetterWindowMinutes ?? RULE_DEFAULTS.deadLetterMinutes}))::int as dead`.execute(
    db,
  )
  const row = r.rows[0]!
  return {
    oldestDueSeconds: Math.round(row.oldest),
    workers: row.workers,
    sinceTakeSeconds: row.since === null ? null : Math.round(row.since),
    newDeadLetters: row.dead,
    stalled: row.oldest > stall && (row.workers === 0 || (row.since ?? Number.POSITIVE_INFINITY) > stall),
  }
}
