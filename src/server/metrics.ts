import type { IncomingMessage, ServerResponse } from 'node:http'
import { sql } from 'kysely'
import { Gauge, Registry } from 'prom-client'
import type { Deps } from '../deps'
import { DEAD_LETTER_QUEUE } from '../jobs/queue'
import { registry } from '../metrics'
import { hasToken, isDirectLoopback } from './access'
import { ANSWER_WITHIN_MS, type HealthWatch } from './health'

/**
 * GET /metrics in Prometheus's text format: this process's counters (src/metrics.ts) and, read at scrape time, the
 * outbox's queues (jobs due, age of the oldest due job, dead letters: the same figure from every process) and this
 * process's connection pools (the app's and pg-boss's).
 *
 * Access: with METRICS_TOKEN set, only `Authorization: Bearer <token>` (401 otherwise); unset, only requests made
 * from the loopback address directly (403 otherwise) - a Prometheus on the same host, or a sidecar. A request that
 * came through a proxy (X-Forwarded-For, Forwarded or X-Real-IP) is never local, whatever its socket address: a
 * reverse proxy on the same host would otherwise publish the figures.
 *
 * A scrape never waits on a database that does not answer: while the health watch (src/server/health.ts) finds
 * it down the queue figures are left out, and a read that takes longer than ANSWER_WITHIN_MS is given up (the
 * one read in flight is shared by the scrapes that follow, so a frozen server holds one connection, not one per
 * scrape). `desk_database_up` says which it was.
 */
export function metricsRoute(
  deps: Pick<Deps, 'db' | 'pool' | 'config'> & { jobs?: Pick<Deps['jobs'], 'pool'> },
  token: string | undefined,
  watch?: HealthWatch,
) {
  const local = new Registry()
  const gauge = <L extends string>(
    name: string,
    help: string,
    labelNames: readonly L[],
    collect: (g: Gauge<L>) => Promise<void> | void,
  ) =>
    new Gauge<L>({
      name,
      help,
      labelNames,
      registers: [local],
      async collect() {
        this.reset()
        await collect(this)
      },
    })

  // One query for the three queue figures; a database that does not answer leaves them out of the scrape.
  let queueRows: Promise<{ name: string; due: number; oldest: number; total: number }[]> | undefined
  const queues = () => {
    // Every queue gets a series (0 when empty), so an alert on it has data; pg-boss's internal queues are left out.
    queueRows ??= sql<{ name: string; due: number; oldest: number; total: number }>`
      select q.name,
        count(j.id) filter (where j.start_after <= now())::int as due,
        coalesce(extract(epoch from now() - min(j.created_on) filter (where j.start_after <= now())), 0)::float8
          as oldest,
        count(j.id)::int as total
      from pgboss.queue q
        left join pgboss.job j on j.name = q.name and j.state in ('created', 'retry')
      where not starts_with(q.name, '__pgboss')
      group by q.name`
      .execute(deps.db)
      .then((r) => r.rows)
      .catch(() => [])
      .finally(() => {
        setImmediate(() => {
          queueRows = undefined
        })
      })
    return queueRows
  }
  let scrapeQueues: Promise<{ name: string; due: number; oldest: number; total: number }[]> | undefined
  const queuesWithin = () => {
    if (watch && !watch.databaseUp) return Promise.resolve([])
    let timer: ReturnType<typeof setTimeout> | undefined
    const late = new Promise<[]>((r) => {
      timer = setTimeout(() => r([]), ANSWER_WITHIN_MS)
    })
    return Promise.race([queues(), late]).finally(() => clearTimeout(timer))
  }
  // One bounded read per scrape, shared by the three gauges.
  const rows = () =>
    (scrapeQueues ??= queuesWithin().finally(() => setImmediate(() => (scrapeQueues = undefined))))
  gauge(
    'outbox_jobs_due',
    'Jobs waiting in the outbox whose start time has come, per queue',
    ['queue'] as const,
    async (g) => {
      for (const r of await rows()) if (r.name !== DEAD_LETTER_QUEUE) g.set({ queue: r.name }, r.due)
    },
  )
  gauge(
    'outbox_oldest_due_job_age_seconds',
    'Age of the oldest due job not yet taken, per queue',
    ['queue'] as const,
    async (g) => {
      for (const r of await rows()) if (r.name !== DEAD_LETTER_QUEUE) g.set({ queue: r.name }, r.oldest)
    },
  )
  gauge(
    'outbox_dead_letters',
    'Jobs in the dead-letter queue (failed all their retries; wait for a person)',
    [],
    async (g) => {
      g.set((await rows()).find((r) => r.name === DEAD_LETTER_QUEUE)?.total ?? 0)
    },
  )
  // The embedded server (no DATABASE_URL) or an external one.
  const server = deps.config.secrets.databaseUrl ? 'external' : 'embedded'
  gauge(
    'db_pool_connections',
    "Connections of this process's pools, by state; pool: app (the app's queries) or jobs (pg-boss's); server: embedded or external PostgreSQL",
    ['state', 'pool', 'server'] as const,
    (g) => {
      const pools = [['app', deps.pool] as const, ...(deps.jobs ? [['jobs', deps.jobs.pool] as const] : [])]
      for (const [pool, p] of pools) {
        g.set({ state: 'total', pool, server }, p.totalCount)
        g.set({ state: 'idle', pool, server }, p.idleCount)
        g.set({ state: 'waiting_clients', pool, server }, p.waitingCount)
      }
    },
  )
  gauge(
    'desk_database_up',
    'The database answered the health watch within 2 s (1) or not (0), as last measured',
    [],
    (g) => {
      if (watch) g.set(watch.databaseUp ? 1 : 0)
    },
  )
  const merged = Registry.merge([registry, local])

  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const denied = refused(req, token)
    if (denied) {
      res
        .writeHead(denied, { 'content-type': 'text/plain' })
        .end(denied === 401 ? 'unauthorized\n' : 'forbidden\n')
      return
    }
    const body = await merged.metrics()
    res.writeHead(200, { 'content-type': merged.contentType }).end(body)
  }
}

function refused(req: IncomingMessage, token: string | undefined): 401 | 403 | undefined {
  if (token) return hasToken(req, token) ? undefined : 401
  return isDirectLoopback(req) ? undefined : 403
}
