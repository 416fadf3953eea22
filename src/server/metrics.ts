import { timingSafeEqual } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { sql } from 'kysely'
import { Gauge, Registry } from 'prom-client'
import type { Deps } from '../deps'
import { DEAD_LETTER_QUEUE } from '../jobs/queue'
import { registry } from '../metrics'

/**
 * GET /metrics in Prometheus's text format: this process's counters (src/metrics.ts) and, read at scrape time, the
 * outbox's queues (jobs due, age of the oldest due job, dead letters: the same figure from every process) and this
 * process's connection pools.
 *
 * Access: with METRICS_TOKEN set, only `Authorization: Bearer <token>` (401 otherwise); unset, only requests from
 * the loopback address (403 otherwise) - a Prometheus on the same host, or a sidecar.
 */
export function metricsRoute(deps: Pick<Deps, 'db' | 'pool' | 'config'>, token: string | undefined) {
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
  gauge(
    'outbox_jobs_due',
    'Jobs waiting in the outbox whose start time has come, per queue',
    ['queue'] as const,
    async (g) => {
      for (const r of await queues()) if (r.name !== DEAD_LETTER_QUEUE) g.set({ queue: r.name }, r.due)
    },
  )
  gauge(
    'outbox_oldest_due_job_age_seconds',
    'Age of the oldest due job not yet taken, per queue',
    ['queue'] as const,
    async (g) => {
      for (const r of await queues()) if (r.name !== DEAD_LETTER_QUEUE) g.set({ queue: r.name }, r.oldest)
    },
  )
  gauge(
    'outbox_dead_letters',
    'Jobs in the dead-letter queue (failed all their retries; wait for a person)',
    [],
    async (g) => {
      g.set((await queues()).find((r) => r.name === DEAD_LETTER_QUEUE)?.total ?? 0)
    },
  )
  // The embedded server (no DATABASE_URL) or an external one.
  const server = deps.config.secrets.databaseUrl ? 'external' : 'embedded'
  gauge(
    'db_pool_connections',
    'Connections of the app pool, by state; server: embedded or external PostgreSQL',
    ['state', 'server'] as const,
    (g) => {
      g.set({ state: 'total', server }, deps.pool.totalCount)
      g.set({ state: 'idle', server }, deps.pool.idleCount)
      g.set({ state: 'waiting_clients', server }, deps.pool.waitingCount)
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
  if (token) {
    const given = Buffer.from(/^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '')
    const want = Buffer.from(token)
    return given.length === want.length && timingSafeEqual(given, want) ? undefined : 401
  }
  const ip = req.socket.remoteAddress ?? ''
  return ip === '127.0.0.1' || ip === '::1' || ip === '::ffff:127.0.0.1' ? undefined : 403
}
