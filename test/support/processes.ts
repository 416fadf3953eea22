import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { TEST_CONFIG, TEST_TOKEN } from './app'
import { scriptNodeArgs } from './scripts'

/**
 * The app as its own process, started as `npm start` / `npm run bot` / `npm run worker` start it (the built bundle,
 * built once per run by the global setup), for tests that kill processes, cut their database or start several at
 * once. Output is kept (JSON log lines) and searched for what the process said.
 */

export type ProcessRole = 'all' | 'bot' | 'worker'

export interface AppProcess {
  name: string
  role: ProcessRole
  child: ChildProcess
  /** The HTTP port (/health, webhooks) once started. */
  port: number | undefined
  /** Resolves when the process logged "consult-desk started"; rejects when it exits first. */
  started: Promise<void>
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>
  output(): string
  /** What it wrote to stderr (a crash's stack, an uncaught error), apart from its log lines. */
  stderr(): string
  /** Log lines (parsed JSON) whose msg matches. */
  logs(msg: RegExp): Record<string, unknown>[]
  /** Its warnings and errors, one line per message with a count and the last error: a failure's short story. */
  problems(): string
}

export interface ConfigOptions {
  mode?: 'polling' | 'webhook'
  /** Webhook mode: where Telegram (the stand-in) posts. */
  publicUrl?: string
  /** Fixed HTTP port (webhook processes behind a balancer need one); default any free port. */
  port?: number
  /** Changes to the test desk's YAML (e.g. more staff groups), applied last. */
  edit?: (yaml: string) => string
}

const UNTHROTTLED = pathToFileURL(
  path.join(path.dirname(fileURLToPath(import.meta.url)), 'unthrottled.mjs'),
).href
const tmp = mkdtempSync(path.join(os.tmpdir(), 'cd-proc-'))
let configs = 0

/** A config file: the test desk's, in the given mode. */
export function configFile(opts: ConfigOptions = {}): string {
  let yaml = readFileSync(TEST_CONFIG, 'utf8')
  yaml = yaml.replace(/^mode: polling$/m, `mode: ${opts.mode ?? 'polling'}`)
  yaml = yaml.replace(/^http: .*$/m, `http: { host: 127.0.0.1, port: ${opts.port ?? 0} }`)
  if (opts.publicUrl) yaml += `\nwebhook: { publicUrl: "${opts.publicUrl}" }\n`
  if (opts.edit) yaml = opts.edit(yaml)
  const file = path.join(tmp, `config-${process.pid}-${++configs}.yaml`)
  writeFileSync(file, yaml)
  return file
}

export function removeConfigs(): void {
  rmSync(tmp, { recursive: true, force: true })
}

export function spawnApp(opts: {
  name: string
  role: ProcessRole
  databaseUrl: string
  apiRoot: string
  configFile: string
  env?: Record<string, string>
  /** Default true: without the in-process Telegram throttler (see unthrottled.mjs). */
  unthrottled?: boolean
}): AppProcess {
  const clean = { ...process.env }
  delete clean.DATABASE_URL
  const args = scriptNodeArgs(opts.role === 'all' ? 'start' : opts.role)
  if (opts.unthrottled !== false) args.unshift('--import', UNTHROTTLED)
  const child = spawn(process.execPath, args, {
    env: {
      ...clean,
      CONFIG_FILE: opts.configFile,
      BOT_TOKEN: TEST_TOKEN,
      DATABASE_URL: opts.databaseUrl,
      TELEGRAM_API_ROOT: opts.apiRoot,
      WEBHOOK_SECRET: 'test-secret_1',
      LOG_LEVEL: 'info',
      NODE_ENV: 'production',
      ...opts.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  let err = ''
  const p: AppProcess = {
    name: opts.name,
    role: opts.role,
    child,
    port: undefined,
    started: undefined as unknown as Promise<void>,
    exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))),
    output: () => out,
    stderr: () => err,
    logs(msg) {
      const found: Record<string, unknown>[] = []
      for (const line of out.split('\n')) {
        if (!line.startsWith('{')) continue
        try {
          const j = JSON.parse(line) as Record<string, unknown>
          if (typeof j.msg === 'string' && msg.test(j.msg)) found.push(j)
        } catch {}
      }
      return found
    },
    problems() {
      const seen = new Map<string, { n: number; err: unknown }>()
      for (const j of p.logs(/./)) {
        if (Number(j.level) < 40) continue
        const key = `${j.level === 40 ? 'warn' : 'error'} ${j.msg}`
        seen.set(key, { n: (seen.get(key)?.n ?? 0) + 1, err: j.err ?? j.queue ?? seen.get(key)?.err })
      }
      const lines = [...seen].map(
        ([k, v]) => `${k} ×${v.n}${v.err ? ` ${JSON.stringify(v.err).slice(0, 300)}` : ''}`,
      )
      return `${opts.name}: ${lines.length ? lines.join('; ') : 'no warnings'}${err ? `; stderr: ${err.slice(-500)}` : ''}`
    },
  }
  p.started = new Promise((resolve, reject) => {
    const onData = (d: Buffer) => {
      out += d
      const m = /"port":(\d+),[^\n]*"msg":"consult-desk started"/.exec(out)
      if (m && p.port === undefined) {
        p.port = Number(m[1])
        resolve()
      }
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', (d) => {
      out += d
      err += d
    })
    void p.exited.then((code) =>
      reject(new Error(`${opts.name} exited (${code}) before it started:\n${out.slice(-3000)}`)),
    )
  })
  // Rejections of `started` after a start are of no interest (a killed process).
  p.started.catch(() => {})
  return p
}

/** kill -9, and wait until it is gone. */
export async function killHard(p: AppProcess): Promise<void> {
  if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL')
  await p.exited
}

/** SIGTERM and the exit code. */
export async function stopGracefully(p: AppProcess): Promise<number | null> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return p.child.exitCode
  p.child.kill('SIGTERM')
  return p.exited
}

/**
 * SIGTERM to each and their exit codes, as `name: code`, with what a process that did not exit 0 wrote to stderr and
 * its last log lines: a failed graceful stop explains itself in the assertion.
 */
export async function stopAll(procs: AppProcess[]): Promise<string[]> {
  const codes = await Promise.all(procs.map((p) => stopGracefully(p)))
  return procs.map((p, i) => {
    if (codes[i] === 0) return `${p.name}: 0`
    const tail = p.output().split('\n').slice(-15).join('\n')
    return `${p.name}: ${codes[i]}\n--- stderr\n${p.stderr().slice(-3000)}\n--- last lines\n${tail}`
  })
}

export function isRunning(p: AppProcess): boolean {
  return p.child.exitCode === null && p.child.signalCode === null
}

/** GET /health: the status code (0 when the process does not answer). */
export async function health(p: AppProcess): Promise<{ status: number; body: unknown }> {
  try {
    const r = await fetch(`http://127.0.0.1:${p.port}/health`, { signal: AbortSignal.timeout(5000) })
    return { status: r.status, body: await r.json() }
  } catch {
    return { status: 0, body: null }
  }
}
