import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'

export type RouteHandler = (req: IncomingMessage, res: ServerResponse) => unknown

/**
 * One HTTP server for Telegram webhooks (POST /telegram/<desk slug>, checked against the secret token by grammY's
 * webhookCallback, which answers 401 to a wrong or missing X-Telegram-Bot-Api-Secret-Token), /health, /metrics and
 * the dashboard.
 */
export function createHttpServer(
  webhooks: Map<string, RouteHandler>,
  /** GET /health and /health/ready (src/server/health.ts). */
  health: RouteHandler,
  /** More routes (the dashboard, src/dashboard/dashboard.http.ts): true when it answered the request. */
  routes?: (req: IncomingMessage, res: ServerResponse, pathname: string) => Promise<boolean>,
  /** GET /metrics (src/server/metrics.ts). */
  metrics?: RouteHandler,
): Server {
  return createServer(async (req, res) => {
    const { pathname } = new URL(req.url ?? '/', 'http://localhost')
    try {
      // Liveness: the process answers (its event loop runs). Restart it only when this fails.
      if (req.method === 'GET' && pathname === '/health/live') {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ ok: true, uptime: Math.round(process.uptime()) }))
        return
      }
      // Readiness (also plain /health): can this process do its work now, from the watcher's last measurement.
      if (req.method === 'GET' && (pathname === '/health' || pathname === '/health/ready'))
        return await health(req, res)
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

export function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => resolve((server.address() as { port: number }).port))
  })
}
