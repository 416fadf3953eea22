import pg from 'pg'
import type { Logger } from '../log'

/**
 * One connection that LISTENs on a channel and hands each notification's payload over, reconnected with a pause
 * when the database goes away, so the process carries on through an outage like every other part. PostgreSQL
 * delivers a `pg_notify` at commit (never on rollback) to every listening connection, this process's own included.
 * A notification sent while the connection was down is lost: `onConnect` runs after every (re)connection so the
 * caller can catch up (the job wake-ups need nothing, their polling is the floor; the settings cache re-reads the
 * versions).
 *
 * Hand-written (no library wraps LISTEN for pg-boss 10; pg-listen is unmaintained and brings its own reconnect
 * loop and event emitter): about fifty lines on pg.Client.
 */
export interface ListenerOptions {
  channel: string
  /** application_name of the connection (seen in pg_stat_activity). */
  name: string
  onNotify(payload: string): void
  onConnect?(): void
  /** What the log says when the connection is lost (once per outage). */
  lostMessage: string
  backMessage: string
}

const RECONNECT_MS = 2000

export class PgListener {
  private client: pg.Client | undefined
  private retry: NodeJS.Timeout | undefined
  private stopped = false
  private warned = false

  constructor(
    private readonly connectionString: string,
    private readonly opts: ListenerOptions,
    private readonly log: Logger,
  ) {}

  start(): void {
    void this.connect()
  }

  private async connect(): Promise<void> {
    if (this.stopped) return
    const c = new pg.Client({
      connectionString: this.connectionString,
      application_name: this.opts.name,
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
    c.on('notification', (n) => this.opts.onNotify(n.payload ?? ''))
    try {
      await c.connect()
      await c.query(`listen ${this.opts.channel}`)
      if (this.stopped || gone) return void c.end().catch(() => {})
      this.client = c
      if (this.warned) this.log.info(this.opts.backMessage)
      this.warned = false
      this.opts.onConnect?.()
    } catch (err) {
      if (!this.warned) this.log.warn({ err: (err as Error).message }, this.opts.lostMessage)
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
