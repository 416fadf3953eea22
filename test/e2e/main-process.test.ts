import { type ChildProcess, spawn } from 'node:child_process'
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TEST_BOT_ID, TEST_CONFIG, TEST_TOKEN } from '../support/app'
import { type BotApiStandIn, startBotApi } from '../support/bot-api'
import { scriptNodeArgs } from '../support/scripts'

/**
 * The app as `npm start` runs it: the built bundle (`npm run build`, run once by the global setup, then node
 * dist/main.js), a real config file, and — with no DATABASE_URL — the embedded PostgreSQL, which must be gone
 * after SIGTERM.
 */

function start(env: Record<string, string | undefined>): { child: ChildProcess; output: () => string } {
  const clean = { ...process.env }
  delete clean.DATABASE_URL
  delete clean.BOT_TOKEN
  const child = spawn(process.execPath, scriptNodeArgs('start'), {
    env: { ...clean, LOG_LEVEL: 'info', NODE_ENV: 'production', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  child.stdout!.on('data', (d) => {
    out += d
  })
  child.stderr!.on('data', (d) => {
    out += d
  })
  return { child, output: () => out }
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode)
    else child.once('exit', (code) => resolve(code))
  })
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe('npm start', () => {
  it('without BOT_TOKEN exits 1 with the BotFather hint and no stack trace', async () => {
    const p = start({ CONFIG_FILE: TEST_CONFIG })
    expect(await exited(p.child)).toBe(1)
    expect(p.output()).toMatch(/BOT_TOKEN is not set: create a bot with @BotFather/)
    expect(p.output()).not.toMatch(/\bat .*\.ts:\d+/)
  })

  it('with a broken config prints one line naming the file and the key, and exits 1', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cd-cfg-'))
    const file = path.join(dir, 'bad.yaml')
    writeFileSync(
      file,
      readFileSync(TEST_CONFIG, 'utf8').replace('staffChatId: -1009000000001', 'staffChatId: soon'),
    )
    const p = start({ CONFIG_FILE: file, BOT_TOKEN: TEST_TOKEN })
    expect(await exited(p.child)).toBe(1)
    const lines = p.output().trim().split('\n')
    expect(lines).toEqual([`${file}: desks[0].staffChatId: Invalid input: expected number, received string`])
    rmSync(dir, { recursive: true, force: true })
  })

  describe('with a token, the stand-in and the embedded database', () => {
    let tg: BotApiStandIn
    let dataDir: string
    beforeAll(async () => {
      tg = await startBotApi()
      dataDir = mkdtempSync(path.join(os.tmpdir(), 'cd-data-'))
      chmodSync(dataDir, 0o755) // as root, postgres runs as another user and must reach the data directory
    })
    afterAll(async () => {
      await tg?.close()
      rmSync(dataDir, { recursive: true, force: true })
    })

    it('answers /start, then stops on SIGTERM within 10 s leaving no postgres behind', async () => {
      const p = start({
        CONFIG_FILE: TEST_CONFIG,
        BOT_TOKEN: TEST_TOKEN,
        TELEGRAM_API_ROOT: tg.root,
        DATA_DIR: path.join(dataDir, 'pg'),
      })
      try {
        await tg.waitFor('getUpdates', undefined, { timeoutMs: 90_000 })
        const u = tg.user({ language_code: 'en' })
        await tg.push(TEST_BOT_ID, tg.command(u, '/start'))
        await tg.waitForSent(u.id, /Hello/, { timeoutMs: 20_000 })

        const pidFile = path.join(dataDir, 'pg', 'postmaster.pid')
        expect(existsSync(pidFile)).toBe(true)
        const pgPid = Number(readFileSync(pidFile, 'utf8').split('\n')[0])
        expect(alive(pgPid)).toBe(true)

        // Exit code 0 is the graceful path: main.ts exits 1 if shutdown has not finished after 9 s, so this also
        // proves the 10 s bound without timing anything here.
        p.child.kill('SIGTERM')
        expect(await exited(p.child)).toBe(0)
        expect(alive(pgPid)).toBe(false)
        expect(existsSync(pidFile)).toBe(false)
      } catch (e) {
        console.error(p.output().slice(-4000))
        throw e
      } finally {
        if (p.child.exitCode === null) p.child.kill('SIGKILL')
      }
    })
  })
})
