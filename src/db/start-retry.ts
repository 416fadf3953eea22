import type { Logger } from '../log'
import { isDatabaseUnavailable } from './errors'

/** A start stopped by SIGTERM/SIGINT while it waited: not a failure (main exits 0). */
export class StartAborted extends Error {
  constructor() {
    super('start aborted')
    this.name = 'StartAborted'
  }
}

/** Waits between attempts: 1, 2, 4, 8, 16, then every 30 s. */
export const START_BACKOFF_MS = [1000, 2000, 4000, 8000, 16_000, 30_000]

/**
 * A first contact at start (the database for migrations, Telegram for getMe) that waits for the other side instead
 * of exiting: a process started while PostgreSQL is down waits and retries with backoff, as a running process does
 * during an outage, without depending on a supervisor to restart it. One log line per failed attempt (what, the
 * error's code and first line, when the next try is; never a stack); errors that are not "unavailable" (a missing
 * database, a refused login, a bug) end the start at once. `signal` (SIGTERM) ends the wait with StartAborted.
 */
export async function retryAtStart<T>(
  what: string,
  fn: () => Promise<T>,
  opts: {
    log: Logger
    signal?: AbortSignal | undefined
    transient?: (err: unknown) => boolean
    backoffMs?: readonly number[]
  },
): Promise<T> {
  const transient = opts.transient ?? isDatabaseUnavailable
  const backoff = opts.backoffMs ?? START_BACKOFF_MS
  for (let attempt = 1; ; attempt++) {
    if (opts.signal?.aborted) throw new StartAborted()
    try {
      return await fn()
    } catch (err) {
      if (opts.signal?.aborted) throw new StartAborted()
      if (!transient(err)) throw err
      const waitMs = backoff[Math.min(attempt - 1, backoff.length - 1)]!
      const e = err as { code?: unknown; message?: unknown }
      opts.log.warn(
        {
          attempt,
          retry_in_s: waitMs / 1000,
          err: {
            ...(typeof e?.code === 'string' ? { code: e.code } : {}),
            message: String(e?.message ?? err).split('\n')[0],
          },
        },
        `${what} not reachable at start; waiting`,
      )
      await sleep(waitMs, opts.signal)
    }
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new StartAborted())
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    const onAbort = () => {
      clearTimeout(timer)
      reject(new StartAborted())
    }
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
