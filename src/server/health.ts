import type { IncomingMessage, ServerResponse } from 'node:http'
import { sql } from 'kysely'
import type { Db } from '../db/database'
import { type JobsHealth, type JobsHealthOptions, jobsHealth } from '../jobs/health'
import { errorSummary } from '../jobs/jobs'
import type { Logger } from '../log'
import type { Readiness } from '../readiness'
import { hasToken, isDirectLoopback } from './access'

/** How often the watcher measures, and how long a measurement may take before it counts as no answer. */
export const MEASURE_MS = 1000
export const ANSWER_WITHIN_MS = 2000
/**
 * A measurement still unanswered after this long is given up (left to fail on its own) and a new one starts: a
 * connection lost without a word (a network that drops everything) would otherwise keep the watch on it until TCP
 * keepalive ends it, hours later, and the process would say "down" long after the database is back. Costs at most
 * one pool connection per 30 s while nothing answers, which the rest of the app's queries hold as well.
 */
export const GIVE_UP_AFTER_MS = 30_000

/** What the watcher last measured (true: up; a string: down, with the reason). */
export interface Measured {
  database: true | string
  jobs: true | string
  outbox: JobsHealth | undefined
  /** When this measurement finished (ms since epoch). */
  at: number
}

/**
 * The process's view of its database, measured in the background (about once a second) and read by /health,
 * /metrics and anything else that wants it, so a probe never waits on PostgreSQL and never takes a connection of
 * its own: 48 load balancers polling /health cost the same one query a second as none.
 *
 * One measurement at a time: `select 1`, pg-boss's schema, then the outbox's figures (src/jobs/health.ts). A
 * measurement that has not answered within ANSWER_WITHIN_MS (a frozen server: SIGSTOP, a hung disk, a network
 * that drops packets) makes the database down with "no answer within 2 s" at once, while it keeps waiting for its
 * answer: no second query piles up on a server that does not answer (for GIVE_UP_AFTER_MS). It flips the `database` readiness flag and
 * logs each change once (down, and back with how long it was away); everything else retries on its own.
 */
export class HealthWatch {
  private last: Measured | undefined
  private inFlightSince: number | undefined
  private downSince: number | undefined
  private timer: ReturnType<typeof setInterval> | undefined

  constructor(
    private readonly db: Db,
    private readonly readiness: Readiness,
    private readonly log: Logger,
    private readonly opts: {
      measureMs?: number
      answerWithinMs?: number
      giveUpAfterMs?: number
      /** The outbox's limits, read at every measurement (desk settings: src/jobs/health.ts readinessLimits). */
      limits?: () => JobsHealthOptions
    } = {},
  ) {}

  /** The first measurement (awaited: a process that says "started" knows its state), then one a second. */
  async start(): Promise<void> {
    await this.measure()
    this.timer = setInterval(() => {
      this.noticeHang()
      void this.measure()
    }, this.opts.measureMs ?? MEASURE_MS)
    this.timer.unref()
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer)
    this.timer = undefined
  }

  /** The state now: the last measurement, or "no answer" when the one in flight has waited too long. */
  current(): Measured {
    const hung = this.hungFor()
    if (hung !== undefined) {
      const reason = this.noAnswer()
      // Readiness says the same at once, not only at the next tick of the timer (flip is idempotent).
      this.flip(reason)
      return { database: reason, jobs: reason, outbox: undefined, at: Date.now() }
    }
    return this.last ?? { database: 'not measured yet', jobs: 'not measured yet', outbox: undefined, at: 0 }
  }

  /** Is the database answering (as last measured)? Readers that would query it skip it when not. */
  get databaseUp(): boolean {
    return this.current().database === true
  }

  private get within(): number {
    return this.opts.answerWithinMs ?? ANSWER_WITHIN_MS
  }

  private hungFor(): number | undefined {
    if (this.inFlightSince === undefined) return undefined
    const ms = Date.now() - this.inFlightSince
    return ms > this.within ? ms : undefined
  }

  private noAnswer(): string {
    return `no answer within ${Math.round(this.within / 1000)} s`
  }

  private noticeHang(): void {
    if (this.hungFor() !== undefined) this.flip(this.noAnswer())
  }

  private async measure(): Promise<void> {
    if (this.inFlightSince !== undefined) {
      if (Date.now() - this.inFlightSince < (this.opts.giveUpAfterMs ?? GIVE_UP_AFTER_MS)) return
      // Given up: down until a newer measurement answers (not the state from before it hung).
      const reason = this.noAnswer()
      this.last = { database: reason, jobs: reason, outbox: undefined, at: Date.now() }
    }
    const started = Date.now()
    this.inFlightSince = started
    try {
      let error: unknown
      const database = await sql`select 1`.execute(this.db).then(
        () => true as const,
        (e) => {
          error = e
          return 'unreachable'
        },
      )
      const jobs =
        database === true
          ? await sql`select 1 from pgboss.version`.execute(this.db).then(
              () => true as const,
              () => 'pg-boss schema not readable',
            )
          : 'database unreachable'
      const outbox =
        jobs === true ? await jobsHealth(this.db, this.opts.limits?.()).catch(() => undefined) : undefined
      // A measurement given up on (a newer one started) no longer speaks for the database.
      if (this.inFlightSince !== started) return
      this.last = { database, jobs, outbox, at: Date.now() }
      this.inFlightSince = undefined
      this.flip(database, error)
    } finally {
      if (this.inFlightSince === started) this.inFlightSince = undefined
    }
  }

  private flip(state: true | string, err?: unknown): void {
    if (state === true) {
      if (this.downSince !== undefined) {
        this.log.warn({ downMs: Date.now() - this.downSince }, 'database reachable again')
        this.downSince = undefined
      }
      this.readiness.set('database', true)
      return
    }
    if (this.downSince === undefined) {
      this.downSince = Date.now()
      this.log.error({ reason: state, ...(err ? { err: errorSummary(err) } : {}) }, 'database unreachable')
    }
    this.readiness.set('database', false, state)
  }
}

/**
 * GET /health (= /health/ready): answered from the watcher's last measurement, never from a query of its own.
 * 503 with the reasons under `down` when the database or pg-boss's schema does not answer, a part of the process
 * is down (the intake cannot store updates), or, in a process that runs workers, jobs wait while no live worker
 * takes any (stalled). Dead letters are not unreadiness: the process works, a person has to look at a job (an
 * alert on outbox_dead_letters says so). The outbox's figures are shown only to the operator: with the metrics
 * token, or to a direct request from this host.
 */
export function healthRoute(
  watch: HealthWatch,
  readiness: Readiness | undefined,
  opts: { workers?: boolean; token?: string | undefined },
) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const m = watch.current()
    const down: Record<string, string> = {}
    for (const [part, state] of Object.entries(readiness?.snapshot() ?? {}))
      if (state !== true && part !== 'database') down[part] = state
    if (m.database !== true) down.database = m.database
    else if (m.jobs !== true) down.jobs = m.jobs
    const o = m.outbox
    if (o && opts.workers && o.stalled)
      down.workers = `no job taken for ${o.sinceTakeSeconds ?? '?'} s while jobs wait (oldest ${o.oldestDueSeconds} s)`
    const ok = Object.keys(down).length === 0
    // Notes (a desk that is not selling, and why: src/setup) are reasons like `down`'s, shown to every prober, but
    // they never fail the probe.
    const notes = readiness?.notes() ?? {}
    const noted = Object.keys(notes).length ? { notes } : {}
    const detail = hasToken(req, opts.token) || isDirectLoopback(req)
    const body = detail
      ? {
          ok,
          database: m.database === true,
          jobs: m.jobs === true,
          ...(ok ? {} : { down }),
          ...noted,
          measured_ago_ms: m.at ? Math.max(0, Date.now() - m.at) : null,
          ...(o
            ? {
                outbox: {
                  oldest_due_s: o.oldestDueSeconds,
                  workers: o.workers,
                  since_take_s: o.sinceTakeSeconds,
                  new_dead_letters: o.newDeadLetters,
                },
              }
            : {}),
        }
      : // The public answer: ready or not, which part and why, without the outbox's figures.
        {
          ok,
          ...(ok ? {} : { down: { ...down, ...(down.workers ? { workers: 'stalled' } : {}) } }),
          ...noted,
        }
    res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json', 'cache-control': 'no-store' })
    res.end(JSON.stringify(body))
  }
}
