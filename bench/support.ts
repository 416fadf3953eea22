/**
 * What the benchmarks share: a migrated database of their own for one run, what a run holds and closes (pools, the
 * Bot API stand-in, the app's process) also on Ctrl-C, the built app started as `npm run bot` starts it,
 * nearest-rank percentiles, and CPU time read from /proc (robust against other load on the machine, unlike
 * wall-clock rates).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { type EmbeddedServer, ensureDatabase, startEmbeddedPostgres } from '../src/db/embedded'
import { migrateToLatest } from '../src/db/migrator'
import { createDb, type DbHandle } from '../src/db/pool'
import { scriptNodeArgs } from '../test/support/scripts'

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

/**
 * What one run holds, closed in the reverse order it was taken (at the end, and on Ctrl-C or SIGTERM: then the
 * process exits 130). A close that fails is ignored: the run is over either way.
 */
export class BenchRun {
  private readonly closers: (() => Promise<unknown>)[] = []

  constructor() {
    const interrupted = () => void this.close().finally(() => process.exit(130))
    process.once('SIGINT', interrupted)
    process.once('SIGTERM', interrupted)
  }

  /** Registers how to close `thing`; returns it. */
  hold<T>(thing: T, close: (t: T) => unknown): T {
    this.closers.push(async () => close(thing))
    return thing
  }

  async close(): Promise<void> {
    while (this.closers.length) await this.closers.pop()!().catch(() => {})
  }
}

/** A fresh database for the run (see benchDatabase), migrated, with a Kysely pool of `poolSize` connections. */
export async function migratedDatabase(
  run: BenchRun,
  prefix: string,
  poolSize: number,
): Promise<{ url: string; handle: DbHandle }> {
  const database = run.hold(await benchDatabase(prefix), (d) => d.close())
  const handle = run.hold(createDb(database.url, poolSize), (h) => h.close())
  await migrateToLatest(handle.db)
  return { url: database.url, handle }
}

/**
 * The app as its own process, exactly as `npm run bot` runs it (the build, then node with the script's flags; extra
 * node flags from BENCH_NODE_ARGS), killed (SIGTERM, then awaited) when the run closes.
 */
export function spawnBuiltBot(run: BenchRun, env: Record<string, string>): ChildProcess {
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean)
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' })
  const child = spawn(process.execPath, [...nodeArgs, ...scriptNodeArgs('bot')], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit'],
  })
  return run.hold(child, async (c) => {
    if (c.exitCode !== null) return
    c.kill('SIGTERM')
    await new Promise((r) => c.once('exit', r))
  })
}

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
