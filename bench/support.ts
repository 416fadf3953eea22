/**
 * What the benchmarks share: a database of their own for one run, nearest-rank percentiles, and CPU time read from
 * /proc (robust against other load on the machine, unlike wall-clock rates).
 */
import { randomBytes } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import pg from 'pg'
import { type EmbeddedServer, ensureDatabase, startEmbeddedPostgres } from '../src/db/embedded'

export interface BenchDatabase {
  url: string
  /** Drops the run's database (on DATABASE_URL's server) or stops the embedded server started for the run. */
  close(): Promise<void>
}

/** A fresh database named `<prefix>_<random>`: on DATABASE_URL's server when set, else on an embedded PostgreSQL. */
export async function benchDatabase(prefix: string): Promise<BenchDatabase> {
  let server: EmbeddedServer | undefined
  let serverUrl = process.env.DATABASE_URL
  if (!serverUrl) {
    process.stdout.write('starting embedded PostgreSQL... ')
    server = await startEmbeddedPostgres()
    serverUrl = server.url
    console.log('ok')
  }
  const name = `${prefix}_${randomBytes(4).toString('hex')}`
  const close = async () => {
    if (server) return server.stop()
    const admin = new pg.Client({ connectionString: serverUrl })
    await admin
      .connect()
      .then(() => admin.query(`drop database if exists "${name}" with (force)`))
      .catch((e) => console.error(`could not drop database ${name}: ${(e as Error).message}`))
      .finally(() => admin.end().catch(() => {}))
  }
  try {
    return { url: await ensureDatabase(serverUrl, name), close }
  } catch (e) {
    await close()
    throw e
  }
}

/** The nearest-rank percentile of ascending `sorted` (NaN when empty). */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN
  return sorted[Math.max(0, Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1))]!
}

/** CPU time (µs, user + system) a process has used so far, from /proc (Linux); null where it cannot be read. */
export async function processCpuUs(pid: number): Promise<number | null> {
  try {
    const f = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(')')[1]!.trim().split(' ')
    return ((Number(f[11]) + Number(f[12])) * 1e6) / 100 // USER_HZ = 100 ticks per second
  } catch {
    return null
  }
}

/**
 * CPU time (µs) used so far by each backend connected to the pool's database, by pid (the server must run on this
 * machine); null when one cannot be read.
 */
export async function backendsCpuUs(pool: pg.Pool): Promise<Map<number, number> | null> {
  const r = await pool.query<{ pid: number }>(
    'select pid from pg_stat_activity where datname = current_database()',
  )
  const out = new Map<number, number>()
  for (const { pid } of r.rows) {
    const us = await processCpuUs(pid)
    if (us === null) return null
    out.set(pid, us)
  }
  return out
}

/** CPU (µs) between two samples of backendsCpuUs; a backend new in the second sample counts from zero. */
export function cpuDeltaUs(a: Map<number, number> | null, b: Map<number, number> | null): number | null {
  if (!a || !b) return null
  let total = 0
  for (const [pid, us] of b) total += us - (a.get(pid) ?? 0)
  return total
}
