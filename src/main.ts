import { type Role, startApp } from './app'
import { ConfigError, loadConfig, loadDotEnv } from './config/load'
import { StartAborted } from './db/start-retry'
import { errorSummary } from './jobs/jobs'
import { createLogger } from './log'

/** A stop that takes longer ends the process with 1: under the 10 s a supervisor (docker stop, systemd) waits. */
const STOP_DEADLINE_MS = 9000

/**
 * `npm start` (bot + workers), `npm run worker` (--role=worker), `npm run bot` (--role=bot).
 * A configuration problem prints one line and exits 1; SIGINT/SIGTERM stop everything gracefully.
 */
async function main(): Promise<void> {
  const roleArg = process.argv.find((a) => a.startsWith('--role='))?.slice('--role='.length) ?? 'all'
  if (!['all', 'bot', 'worker'].includes(roleArg)) {
    console.error(`unknown --role=${roleArg}: expected all, bot or worker`)
    process.exit(1)
  }
  loadDotEnv()
  let config: ReturnType<typeof loadConfig>
  try {
    config = loadConfig()
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(e.message)
      process.exit(1)
    }
    throw e
  }
  const log = createLogger(process.env.LOG_LEVEL ?? config.log.level)
  let app: Awaited<ReturnType<typeof startApp>> | undefined
  let starting: Promise<unknown> | undefined
  let stopping = false
  const aborter = new AbortController()
  const shutdown = async (signal: string) => {
    if (stopping) return
    stopping = true
    log.info({ signal }, 'stopping')
    // A hard deadline: whatever hangs, the process ends (the embedded server is stopped first in the chain), and
    // says what it was still waiting for.
    const by = Date.now() + STOP_DEADLINE_MS
    setTimeout(() => {
      log.error(
        { waiting_for: app?.stopping.current, steps_ms: app?.stopping.steps },
        'stop took too long: exiting 1',
      )
      process.exit(1)
    }, STOP_DEADLINE_MS).unref()
    // A start still waiting for the database or Telegram stops waiting and closes what it opened.
    aborter.abort()
    // (at most 5 s: a call in flight, e.g. getMe inside the Api's own retry, may not see the abort at once)
    if (!app) await Promise.race([starting?.catch(() => {}), new Promise((r) => setTimeout(r, 5000))])
    await app?.stop({ by })
    log.info({ steps_ms: app?.stopping.steps }, 'stopped')
    process.exit(0)
  }
  process.on('SIGINT', () => void shutdown('SIGINT'))
  process.on('SIGTERM', () => void shutdown('SIGTERM'))
  // pg-boss 10 completes and fails jobs without awaiting (Manager.work); while the database is away those promises
  // reject with nobody listening, and Node's default for that is to exit. The process's state lives in
  // PostgreSQL and every part retries by itself (a job whose completion was lost is released by the heartbeat
  // reaper, src/jobs/liveness.ts), so such a rejection is logged and the process carries on. Synchronous throws
  // (uncaughtException) keep Node's default: they can leave memory half-changed.
  process.on('unhandledRejection', (reason) => {
    log.error({ err: errorSummary(reason) }, 'unhandled rejection (process continues)')
  })
  try {
    const start = startApp(config, { role: roleArg as Role, log, signal: aborter.signal })
    starting = start
    app = await start
  } catch (e) {
    // Stopped by a signal while waiting: shutdown() exits 0.
    if (e instanceof StartAborted || stopping) return
    console.error(startFailure(e, config))
    process.exit(1)
  }
  if (stopping) await app.stop()
}

/** A failed start as one plain line for the operator (no stack, no JSON): what failed and what to check. */
function startFailure(e: unknown, config: ReturnType<typeof loadConfig>): string {
  const chain: (Error & { code?: string })[] = []
  for (let c: unknown = e; c instanceof Error && chain.length < 5; c = c.cause) chain.push(c)
  const code = chain.find((c) => typeof c.code === 'string')?.code
  const message = (chain.at(-1)?.message ?? String(e)).split('\n')[0]
  const db = (() => {
    try {
      const u = new URL(config.secrets.databaseUrl ?? '')
      return `${u.hostname}:${u.port || 5432}${u.pathname}`
    } catch {
      return 'the database'
    }
  })()
  if (code === 'EADDRINUSE')
    return `start failed: port ${config.http.port} on ${config.http.host} is already in use (http.port in ${config.file})`
  if (code === '3D000') return `start failed: ${message} (DATABASE_URL, ${db})`
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'ETIMEDOUT' || code === 'EAI_AGAIN')
    return `start failed: cannot reach PostgreSQL at ${db} (${code}): is it running? check DATABASE_URL`
  if (code === '28P01' || code === '28000')
    return `start failed: PostgreSQL refused the login (DATABASE_URL): ${message}`
  return `start failed: ${(e as Error)?.message?.split('\n')[0] ?? String(e)}`
}

void main()
