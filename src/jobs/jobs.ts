import { CompiledQuery, sql } from 'kysely'
import pg from 'pg'
import PgBoss from 'pg-boss'
import { withSessionLock } from '../db/advisory-lock'
import type { Db, Trx } from '../db/database'
import { currentTrace, type Logger, withTrace } from '../log'
import { DEAD_LETTER_QUEUE, JobDeferred, type QueueDef } from './queue'
import { JobWakeups, WAKE_CHANNEL } from './wakeups'

export const BOSS_SCHEMA = 'pgboss'

export type SendOptions = Omit<PgBoss.SendOptions, 'db'>

export interface Outbox {
  send<T>(queue: QueueDef<T>, data: T, options?: SendOptions): Promise<string | null>
}

export type JobHandler<T> = (data: T, job: PgBoss.JobWithMetadata<T>) => Promise<unknown>

/** pg-boss's executor interface over a Kysely transaction: the job row is written by the caller's transaction. */
function executorOf(trx: Db | Trx): PgBoss.Db {
  return {
    async executeSql(text, values) {
      const r = await trx.executeQuery(CompiledQuery.raw(text, values))
      return { rows: r.rows as any[] }
    },
  }
}

/**
 * The outbox. `send` writes a job through the caller's transaction, so the job exists exactly when the state change
 * it announces commits. Workers in this process are nudged after commit, and those of other processes by a
 * notification the commit delivers (wakeups.ts), so a reply does not wait a polling interval.
 */
export class Jobs {
  private readonly workerIds = new Map<string, string[]>()
  private started = false
  private wakeups: JobWakeups | undefined
  /** Jobs this process's handlers are working on now (id -> queue): its heartbeat lists them (liveness.ts). */
  readonly active = new Map<string, string>()
  /** When a handler of this process last took a job (ms since epoch; 0: never): the heartbeat records it. */
  lastTakenAt = 0

  constructor(
    readonly boss: PgBoss,
    private readonly queues: readonly QueueDef<any>[],
    private readonly log: Logger,
    /** pg-boss's connections (its fetches, completions, maintenance): ours, so /metrics can show them. */
    readonly pool: pg.Pool,
    private readonly connectionString?: string,
  ) {}

  static create(
    connectionString: string,
    queues: readonly QueueDef<any>[],
    log: Logger,
    opts: { schedule?: boolean } = {},
  ): Jobs {
    // pg-boss's pool is ours, handed over as its `db` (an object with executeSql, pg-boss's documented way to
    // bring a connection): pg-boss 10 keeps the pool it would make inside an undocumented Db object, and /metrics
    // shows this one next to the app's. The options are those pg-boss would pass to pg: a connection attempt to an
    // unreachable server fails instead of hanging, and TCP keepalive notices a connection that died silently.
    const pool = new pg.Pool({
      connectionString,
      max: 4,
      application_name: 'consult-desk-jobs',
      connectionTimeoutMillis: 10_000,
      keepAlive: true,
    })
    pool.on('connect', (client) => client.on('error', () => {}))
    const boss = new PgBoss({
      db: {
        executeSql: (text: string, values?: unknown[]) => pool.query(text, values),
      },
      schema: BOSS_SCHEMA,
      // 0.5 s is pg-boss's floor; local sends also nudge their workers right after commit.
      pollingIntervalSeconds: 0.5,
      schedule: opts.schedule ?? true,
      supervise: true,
      // Retention of pg-boss's own tables (README "Retention"): completed jobs move to the archive after 12 h,
      // failed ones after 7 days (time to look at them), and the archive is emptied after 7 days.
      archiveCompletedAfterSeconds: 12 * 3600,
      archiveFailedAfterSeconds: 7 * 86_400,
      deleteAfterDays: 7,
    } as PgBoss.ConstructorOptions)
    const jobs = new Jobs(boss, queues, log, pool, connectionString)
    // While the database is away every worker's fetch fails twice a second: one line, then a count every 10 s.
    let quietUntil = 0
    let suppressed = 0
    const onError = (e: Error) => {
      if (Date.now() < quietUntil) {
        suppressed++
        return
      }
      log.error({ err: { message: e.message, code: (e as any).code }, suppressed }, 'pg-boss error')
      quietUntil = Date.now() + 10_000
      suppressed = 0
    }
    boss.on('error', onError)
    // An idle connection's error (a server restart) is pg-boss's error too, as with the pool it would make.
    pool.on('error', onError)
    return jobs
  }

  /**
   * Starts pg-boss (installing its schema) and creates every declared queue, one process at a time: pg-boss's
   * create_queue attaches a partition to its job table, and two processes doing it at once deadlock (every process
   * of a deployment runs this at start). A session-level advisory lock on a connection of its own serializes the
   * whole step; a process that dies holding it releases it with its connection.
   */
  async start(): Promise<void> {
    const setup = async () => {
      await this.boss.start()
      this.started = true
      await this.boss.createQueue(DEAD_LETTER_QUEUE, { name: DEAD_LETTER_QUEUE, retentionDays: 30 })
      for (const q of this.queues) {
        const existing = await this.boss.getQueue(q.name)
        const options = { name: q.name, ...q.options }
        if (existing) await this.boss.updateQueue(q.name, options)
        else await this.boss.createQueue(q.name, options)
      }
    }
    if (this.connectionString) await withSessionLock(this.connectionString, 'consult-desk:jobs-setup', setup)
    else await setup()
  }

  async send<T>(
    trx: Db | Trx,
    queue: QueueDef<T>,
    data: T,
    options: SendOptions = {},
  ): Promise<string | null> {
    const id = await this.boss.send(queue.name, traced(data), { ...options, db: executorOf(trx) })
    // pg-boss returns null for a singleton already queued, but also, silently, for a queue that does not exist.
    if (id === null && !options.singletonKey && !options.id)
      throw new Error(`job not created: queue "${queue.name}" does not exist (was Jobs.start() called?)`)
    return id
  }

  /**
   * One unit of work: runs `fn` in a transaction whose outbox sends commit with it, then nudges local workers.
   * The only place a use case needs to open a transaction.
   */
  async transaction<R>(db: Db, fn: (trx: Trx, outbox: Outbox) => Promise<R>): Promise<R> {
    const touched = new Set<QueueDef<any>>()
    const result = await db.transaction().execute(async (trx) => {
      const r = await fn(trx, {
        send: (queue, data, options) => {
          // A job for later wakes nobody: its time comes by polling.
          if (options?.startAfter === undefined) touched.add(queue)
          return this.send(trx, queue, data, options)
        },
      })
      // Delivered at commit (and not at all on rollback) to every process's wake-up listener.
      if (touched.size)
        await sql`select pg_notify(${WAKE_CHANNEL}, ${[...touched].map((q) => q.name).join(',')})`.execute(
          trx,
        )
      return r
    })
    for (const q of touched) this.nudge(q)
    return result
  }

  /**
   * A failed job (e.g. one that went to the dead letters) made due again with one more attempt, in the caller's
   * transaction: pg-boss's own `retry` (failed -> retry), run through the transaction. False when it is not failed.
   */
  async retryFailed(trx: Trx, queue: string, id: string): Promise<boolean> {
    const r = await this.boss.retry(queue, id, { db: executorOf(trx) })
    // pg-boss 10 returns { affected } here although its typings say void.
    return (r as unknown as { affected?: number } | undefined)?.affected === 1
  }

  /** Wakes this process's workers of a queue (after a commit that enqueued to it). */
  nudge(queue: QueueDef<any> | string): void {
    for (const id of this.workerIds.get(typeof queue === 'string' ? queue : queue.name) ?? [])
      this.boss.notifyWorker(id)
  }

  /**
   * Registers a handler. Handlers must be idempotent: a job may run again after a crash between its effect and
   * its completion. pg-boss hands over arrays; we take one job at a time so one failure retries only that job.
   */
  async work<T>(queue: QueueDef<T>, handler: JobHandler<T>): Promise<void> {
    // A process with workers listens for other processes' commits (wakeups.ts).
    if (!this.wakeups && this.connectionString) {
      this.wakeups = new JobWakeups(this.connectionString, (q) => this.nudge(q), this.log)
      this.wakeups.start()
    }
    const ids: string[] = []
    for (let i = 0; i < queue.concurrency; i++) {
      let id: string | undefined
      // With metadata: a deferred job is written again with its singleton key and priority (defer below).
      id = await this.boss.work<T>(queue.name, { batchSize: 1, includeMetadata: true }, async ([job]) => {
        if (!job) return
        this.lastTakenAt = Date.now()
        let outcome: { ok: true; value: unknown } | { ok: false; error: unknown }
        try {
          // The whole run in the job's trace: the handler's lines and the failure line below carry it.
          outcome = {
            ok: true,
            value: await withTrace(traceOf(job.data), () => this.run(queue, handler, job)),
          }
        } catch (error) {
          outcome = { ok: false, error }
        }
        // A handler that outlived stop()'s grace: pg-boss has failed its job back to the queue (it runs again; the
        // handlers are idempotent) and the pool is closed. pg-boss would record this late outcome on the closed pool
        // without awaiting it, an unhandled rejection; so the outcome is dropped and the callback never settles.
        if (this.pool.ending) return new Promise<never>(() => {})
        // A worker that found a job looks for the next one right away: pg-boss would otherwise sleep out the rest
        // of its polling interval after every job shorter than it (at most two jobs a second per worker).
        if (id) this.boss.notifyWorker(id)
        if (!outcome.ok) throw outcome.error
        return outcome.value
      })
      ids.push(id)
    }
    this.workerIds.set(queue.name, [...(this.workerIds.get(queue.name) ?? []), ...ids])
  }

  private async run<T>(
    queue: QueueDef<T>,
    handler: JobHandler<T>,
    job: PgBoss.JobWithMetadata<T>,
  ): Promise<unknown> {
    this.active.set(job.id, queue.name)
    try {
      return await handler(job.data, job)
    } catch (err) {
      if (err instanceof JobDeferred) return await this.defer(queue, job, err.seconds)
      this.log.warn({ queue: queue.name, job_id: job.id, err: errorSummary(err) }, 'job failed; will retry')
      throw err
    } finally {
      this.active.delete(job.id)
    }
  }

  /**
   * The handler cannot go on for `seconds` (JobDeferred: e.g. one chat's Telegram window is closed): the same job is
   * written again to start then, and this one completes, so the worker is free for other jobs meanwhile. Written
   * before this job completes: a crash between the two leaves both, and the handler's idempotency (its send keys)
   * makes the second a no-op. A singleton already queued under the same key (null from pg-boss) covers it too.
   */
  private async defer<T>(queue: QueueDef<T>, job: PgBoss.JobWithMetadata<T>, seconds: number) {
    const startAfter = Math.max(0.2, Math.round(seconds * 10) / 10)
    await this.boss.send(queue.name, job.data as object, {
      startAfter,
      ...(job.singletonKey ? { singletonKey: job.singletonKey } : {}),
      ...(job.priority ? { priority: job.priority } : {}),
    })
    this.log.debug({ queue: queue.name, job_id: job.id, seconds: startAfter }, 'job deferred')
    return { deferred: startAfter }
  }

  /** `graceMs`: how long in-flight handlers may finish before their jobs are failed back to their queues. */
  async stop(graceMs = 8000): Promise<void> {
    await this.wakeups?.stop()
    this.wakeups = undefined
    if (!this.started) {
      await this.closePool()
      return
    }
    this.started = false
    // graceful: in-flight handlers finish (up to the timeout) before the pool closes.
    await this.boss.stop({ graceful: true, wait: true, timeout: graceMs })
    await this.closePool()
  }

  private async closePool(): Promise<void> {
    if (!this.pool.ending) await this.pool.end().catch(() => {})
  }
}

/** The job's payload with the current trace (the update that started the work), when there is one. */
function traced<T>(data: T): object {
  const trace = currentTrace()
  if (!trace || typeof data !== 'object' || data === null || Array.isArray(data) || 'trace_id' in data)
    return data as object
  return { ...data, trace_id: trace }
}

function traceOf(data: unknown): string | undefined {
  const t = (data as { trace_id?: unknown } | null)?.trace_id
  return typeof t === 'string' ? t : undefined
}

/** What may be logged about an error: no stacks with payloads, no request bodies (they can carry tokens). */
export function errorSummary(err: unknown): { name?: string; message: string; code?: unknown } {
  if (err instanceof Error)
    return { name: err.name, message: err.message, code: (err as any).code ?? (err as any).error_code }
  return { message: String(err) }
}
