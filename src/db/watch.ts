import { sql } from 'kysely'
import type { Logger } from '../log'
import type { Readiness } from '../readiness'
import type { Db } from './database'

/** How often the database is probed: often enough that /health follows an outage within a couple of seconds. */
const PROBE_MS = 2000

/**
 * Probes PostgreSQL every couple of seconds and flips the `database` readiness flag, logging each change once
 * (down, and back with how long it was away). It changes nothing else: every part of the app retries on its own
 * (the pools reconnect on the next checkout, pg-boss's workers and the intake keep polling), this makes the state
 * visible. Returns a stop function.
 */
export function watchDatabase(db: Db, readiness: Readiness, log: Logger): () => void {
  let downSince: number | undefined
  let busy = false
  const probe = async () => {
    if (busy) return
    busy = true
    try {
      await sql`select 1`.execute(db)
      if (downSince !== undefined) {
        log.warn({ downMs: Date.now() - downSince }, 'database reachable again')
        downSince = undefined
      }
      readiness.set('database', true)
    } catch (err) {
      if (downSince === undefined) {
        downSince = Date.now()
        log.error(
          { err: { message: (err as Error).message, code: (err as { code?: string }).code } },
          'database unreachable',
        )
      }
      readiness.set('database', false, 'unreachable')
    } finally {
      busy = false
    }
  }
  readiness.set('database', true)
  const timer = setInterval(() => void probe(), PROBE_MS)
  timer.unref()
  return () => clearInterval(timer)
}
