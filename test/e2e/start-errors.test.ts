import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { TEST_CONFIG, TEST_TOKEN } from '../support/app'
import { createTestDatabase, type TestDatabase } from '../support/db'
import { scriptNodeArgs } from '../support/scripts'

/**
 * A start that cannot succeed, as `npm run worker` meets it: exit 1 and exactly one plain line (no JSON, no stack)
 * saying what to check. The worker role needs no Bot API, so only the database and the port are in play. A
 * database that does not answer is not such a case: it is waited for (src/db/start-retry.ts).
 */
function run(env: Record<string, string>): Promise<{ code: number | null; lines: string[] }> {
  const clean = { ...process.env }
  delete clean.DATABASE_URL
  const child = spawn(process.execPath, scriptNodeArgs('worker'), {
    env: { ...clean, LOG_LEVEL: 'info', BOT_TOKEN: TEST_TOKEN, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  child.stdout!.on('data', (d) => {
    out += d
  })
  child.stderr!.on('data', (d) => {
    out += d
  })
  return new Promise((resolve) =>
    child.once('exit', (code) => resolve({ code, lines: out.trim().split('\n').filter(Boolean) })),
  )
}

describe('a start that fails is one plain line', () => {
  let dir: string
  let blocker: Server
  let port: number
  const server = new URL(inject('pgServerUrl'))
  const db = (name: string) => {
    const u = new URL(server)
    u.pathname = `/${name}`
    return u.toString()
  }
  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'cd-start-'))
    blocker = createServer()
    port = await new Promise<number>((r) =>
      blocker.listen(0, '127.0.0.1', () => r((blocker.address() as { port: number }).port)),
    )
  })
  afterAll(() => {
    blocker?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('a missing database', async () => {
    const r = await run({ CONFIG_FILE: TEST_CONFIG, DATABASE_URL: db('no_such_db_18a') })
    expect(r.code).toBe(1)
    expect(r.lines).toEqual([
      `start failed: database "no_such_db_18a" does not exist (DATABASE_URL, ${server.hostname}:${server.port}/no_such_db_18a)`,
    ])
  })

  it('an unreachable database is waited for (one plain line per attempt), and SIGTERM ends the wait with 0', async () => {
    const clean = { ...process.env }
    delete clean.DATABASE_URL
    const child = spawn(process.execPath, scriptNodeArgs('worker'), {
      env: {
        ...clean,
        LOG_LEVEL: 'info',
        BOT_TOKEN: TEST_TOKEN,
        CONFIG_FILE: TEST_CONFIG,
        DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/x`,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
    const waiting = new Promise<void>((resolve) => {
      const onData = (d: Buffer) => {
        out += d
        if (/"msg":"database not reachable at start; waiting"/.test(out)) resolve()
      }
      child.stdout!.on('data', onData)
      child.stderr!.on('data', onData)
    })
    await Promise.race([waiting, exited])
    child.kill('SIGTERM')
    expect(await exited).toBe(0)
    const lines = out.trim().split('\n').filter(Boolean)
    const attempt = lines.find((l) => l.includes('not reachable at start'))!
    expect(JSON.parse(attempt)).toMatchObject({ attempt: 1, retry_in_s: 1 })
    expect(out).not.toMatch(/start failed|\n\s+at .*:\d+:\d+/)
  })

  it('a port in use', async () => {
    const file = path.join(dir, 'port.yaml')
    writeFileSync(file, readFileSync(TEST_CONFIG, 'utf8').replace('port: 0', `port: ${port}`))
    const t: TestDatabase = await createTestDatabase(1)
    const r = await run({ CONFIG_FILE: file, DATABASE_URL: t.url }).finally(() => t.drop())
    expect(r.code).toBe(1)
    expect(r.lines).toEqual([
      `start failed: port ${port} on 127.0.0.1 is already in use (http.port in ${file})`,
    ])
  })

  it('a directory as CONFIG_FILE and an unknown key', async () => {
    const r = await run({ CONFIG_FILE: dir })
    expect(r).toEqual({
      code: 1,
      lines: [`${dir}: is a directory, not a config file (set CONFIG_FILE to a YAML file)`],
    })
    const file = path.join(dir, 'typo.yaml')
    writeFileSync(file, readFileSync(TEST_CONFIG, 'utf8').replace('mode: polling', 'mod: webhook'))
    expect(await run({ CONFIG_FILE: file })).toEqual({ code: 1, lines: [`${file}: mod: unknown key`] })
  })
})
