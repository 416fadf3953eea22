import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { sql } from 'kysely'
import type { Deps } from '../deps'
import { DEAD_LETTER_WINDOW_MINUTES, type JobsHealth, jobsHealth } from '../jobs/health'
import type { Readiness } from '../readiness'

export type RouteHandler = (req: IncomingMessage, res: ServerResponse) => unknown

/**
 * One HTTP server for Telegram webhooks (POST /telegram/<desk slug>, checked against the secret token by grammY's
 * webhookCallback, which answers 401 to a wrong or missing X-Telegram-Bot-Api-Secret-Token) and /health.
 */
export function createHttpServer(
  deps: Pick<Deps, 'db' | 'jobs'>,
  webhooks: Map<string, RouteHandler>,
  readiness?: Readiness,
  /** More routes (the dashboard, src/dashboard/dashboard.http.ts): true when it answered the request. */
  routes?: (req: IncomingMessage, res: ServerResponse, pathname: string) => Promise<boolean>,
  /** GET /metrics (src/server/metrics.ts). */
  metrics?: RouteHandler,
  /** This process runs workers: a stalled outbox or new dead letters make it not ready (src/jobs/health.ts). */
  opts: { workers?: boolean } = {},
): Server {
  const outbox = cachedJobsHealth(deps.db)
  return createServer(async (req, res) => {
    const { pathname } = new URL(req.url ?? '/', 'http://localhost')
    try {
      // Liveness: the process answers (its event loop runs). Restart it only when this fails.
      if (req.method === 'GET' && pathname === '/health/live') {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ ok: true, uptime: Math.round(process.uptime()) }))
        return
      }
      // Readiness (also plain /health): can this process do its work now.
      if (req.method === 'GET' && (pathname === '/health' || pathname === '/health/ready')) {
        const [db, jobs] = await Promise.all([
          sql`select 1`.execute(deps.db).then(
            () => true,
            () => false,
          ),
          sql`select 1 from pgboss.version`.execute(deps.db).then(
            () => true,
            () => false,
          ),
        ])
        // Not ready (503) while the database is away or the intake cannot store updates: the process stays up and
        // recovers by itself; the flags say which part is waiting.
        const down = downParts(readiness)
        const o = db && jobs ? await outbox() : undefined
        if (o && opts.workers) {
          if (o.stalled)
            down.workers = `no job taken for ${o.sinceTakeSeconds ?? '?'} s while jobs wait (oldest ${o.oldestDueSeconds} s)`
          if (o.newDeadLetters > 0)
            down.dead_letters = `${o.newDeadLetters} new in ${DEAD_LETTER_WINDOW_MINUTES} min`
        }
        const ok = db && jobs && Object.keys(down).length === 0
        res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' })
        res.end(
          JSON.stringify({
            ok,
            database: db,
            jobs,
            ...(Object.keys(down).length ? { down } : {}),
            ...(readiness && Object.keys(readiness.notes()).length ? { notes: readiness.notes() } : {}),
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
          }),
        )
        return
      }
      if (req.method === 'GET' && pathname === '/metrics' && metrics) return await metrics(req, res)
      const m = /^\/telegram\/([a-z0-9-]+)$/.exec(pathname)
      const hook = m && webhooks.get(m[1]!)
      if (req.method === 'POST' && hook) return await hook(req, res)
      if (routes && (await routes(req, res, pathname))) return
      res.writeHead(404).end()
    } catch {
      if (!res.headersSent) res.writeHead(500)
      res.end()
    }
  })
}

/** The outbox's health, read at most every 2 s whatever the probe rate (a failed read counts as unknown). */
function cachedJobsHealth(db: Deps['db']): () => Promise<JobsHealth | undefined> {
  let at = 0
  let last: Promise<JobsHealth | undefined> = Promise.resolve(undefined)
  return () => {
    if (Date.now() - at > 2000) {
      at = Date.now()
      last = jobsHealth(db).catch(() => undefined)
    }
    return last
  }
}

/**
 * Parts of the process that are down, with the reason, besides the live probes above (the database watch's own
 * flag would only repeat the probe, a couple of seconds late).
 */
function downParts(readiness: Readiness | undefined): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [part, state] of Object.entries(readiness?.snapshot() ?? {}))
    if (state !== true && part !== 'database') out[part] = state
  return out
}

export function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => resolve((server.address() as { port: number }).port))
  })
}
