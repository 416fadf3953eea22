import { PgListener } from '../db/listen'
import type { Logger } from '../log'

/**
 * Wake-ups across processes. pg-boss 10 only polls (every 0.5 s at best), so a job committed by the bot process
 * waited up to half a second for a worker process to look. A transaction that enqueued jobs also runs
 * `pg_notify(WAKE_CHANNEL, 'queue,queue')` (src/jobs/jobs.ts); PostgreSQL delivers it at commit, to every process
 * listening here, which nudges its own workers of those queues. Polling stays the floor: a notification lost while
 * this connection is down only costs the polling interval.
 *
 * The connection is src/db/listen.ts (reconnected with a pause when the database goes away).
 */
export const WAKE_CHANNEL = 'consult_desk_jobs'

export class JobWakeups {
  private readonly listener: PgListener

  constructor(connectionString: string, wake: (queue: string) => void, log: Logger) {
    this.listener = new PgListener(
      connectionString,
      {
        channel: WAKE_CHANNEL,
        name: 'consult-desk-wakeups',
        onNotify: (payload) => {
          for (const q of payload.split(',')) if (q) wake(q)
        },
        lostMessage: 'job wake-ups: no connection; polling meanwhile',
        backMessage: 'job wake-ups listening again',
      },
      log,
    )
  }

  start(): void {
    this.listener.start()
  }

  stop(): Promise<void> {
    return this.listener.stop()
  }
}
