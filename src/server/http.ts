import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { sql } from 'kysely'
import type { Deps } from '../deps'
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
): Server {
  return createServer(async (req, res) => {
    const { pathname } = new URL(req.url ?? '/', 'http://localhost')
    try {
      if (req.method === 'GET' && pathname === '/health') {
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
        const ok = db && jobs && Object.keys(down).length === 0
        res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ ok, database: db, jobs, ...(Object.keys(down).length ? { down } : {}) }))
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
