import pg from 'pg'
import type { Logger } from '../log'

/**
 * Wake-ups across processes. pg-boss 10 only polls (every 0.5 s at best), so a job committed by the bot process
 * waited up to half a second for a worker process to look. A transaction that enqueued jobs also runs
 * `pg_notify(WAKE_CHANNEL, 'queue,queue')` (src/jobs/jobs.ts); PostgreSQL delivers it at commit, to every process
 * listening here, which nudges its own workers of those queues. Polling stays the floor: a notification lost while
 * this connection is down only costs the polling interval.
 *
 * Hand-written (no library wraps LISTEN for pg-boss 10): one pg.Client with LISTEN, reconnected with a pause when
 * the database goes away, so the process carries on through an outage like every other part.
 */
export const WAKE_CHANNEL = 'consult_desk_jobs'
const RECONNECT_MS = 2000

export class JobWakeups {
  private client: pg.Client | undefined
  private retry: NodeJS.Timeout | undefined
  private stopped = false
  private warned = false

  constructor(
    private readonly connectionString: string,
    private readonly wake: (queue: string) => void,
    private readonly log: Logger,
  ) {}

  start(): void {
    void this.connect()
  }

  private async connect(): Promise<void> {
    if (this.stopped) return
    const c = new pg.Client({
      connectionString: this.connectionString,
      application_name: 'consult-desk-wakeups',
      connectionTimeoutMillis: 10_000,
      keepAlive: true,
    })
    let gone = false
    const lost = () => {
      if (gone) return
      gone = true
      if (this.client === c) this.client = undefined
      c.end().catch(() => {})
      this.later()
    }
    c.on('error', lost)
    c.on('end', lost)
    c.on('notification', (n) => {
      for (const q of (n.payload ?? '').split(',')) if (q) this.wake(q)
    })
    try {
      await c.connect()
      await c.query(`listen ${WAKE_CHANNEL}`)
      if (this.stopped || gone) return void c.end().catch(() => {})
      this.client = c
      if (this.warned) this.log.info('job wake-ups listening again')
      this.warned = false
    } catch (err) {
      if (!this.warned)
        this.log.warn({ err: (err as Error).message }, 'job wake-ups: no connection; polling meanwhile')
      this.warned = true
      lost()
    }
  }

  private later(): void {
    if (this.stopped || this.retry) return
    this.retry = setTimeout(() => {
      this.retry = undefined
      void this.connect()
    }, RECONNECT_MS)
    this.retry.unref()
  }

  async stop(): Promise<void> {
    this.stopped = true
    if (this.retry) clearTimeout(this.retry)
    const c = this.client
    this.client = undefined
    await c?.end().catch(() => {})
  }
}
