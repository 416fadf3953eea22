import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Writable } from 'node:stream'
import type { User } from 'grammy/types'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { type App, startApp } from '../../src/app'
import { loadConfig } from '../../src/config/load'
import { createLogger } from '../../src/log'
import { changeDesk, readDesk } from '../../src/settings/settings'
import { ensureOwnerClaim } from '../../src/setup/claim'
import { TEST_BOT_ID, TEST_TOKEN } from '../support/app'
import { type BotApiStandIn, startBotApi } from '../support/bot-api'
import { createTestDatabase, type TestDatabase } from '../support/db'
import { eventually, inboxDrained } from '../support/fixtures'

/**
 * The owner's claim link (issue 24, src/setup/claim.ts), black-box: a first run with only a token prints
 * `t.me/<bot>?start=<code>` in the log and on stdout; the first person to open it owns the desk; opened again, by a
 * second person, or after it expired: a clear answer and nothing changed; a start after the expiry prints a new one.
 */

let tg: BotApiStandIn
let db: TestDatabase
let app: App | undefined
const empty = mkdtempSync(path.join(os.tmpdir(), 'cd-claim-'))
const logLines: string[] = []
let printed = ''

async function start(): Promise<App> {
  const config = loadConfig(
    { BOT_TOKEN: TEST_TOKEN, DATABASE_URL: db.url, TELEGRAM_API_ROOT: tg.root, DESK_LANGUAGE: 'en' },
    empty,
  )
  config.http = { host: '127.0.0.1', port: 0 }
  const sink = new Writable({
    write(chunk, _enc, done) {
      logLines.push(String(chunk))
      done()
    },
  })
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: any) => {
    printed += String(chunk)
    return true
  })
  try {
    return await startApp(config, { log: createLogger('info', sink) })
  } finally {
    out.mockRestore()
  }
}

/** The code of the last owner link printed on stdout, checking the log names the same link. */
function lastPrintedCode(): string {
  const links = [...printed.matchAll(/https:\/\/t\.me\/([A-Za-z0-9_]+)\?start=([A-Za-z0-9_-]+)/g)]
  expect(links.length).toBeGreaterThan(0)
  const [, user, code] = links.at(-1)!
  expect(user).toBe(tg.botInfo(TEST_BOT_ID).username)
  expect(code).toMatch(/^[A-Za-z0-9_-]{1,64}$/)
  expect(logLines.some((l) => l.includes(`t.me/${user}?start=${code}`))).toBe(true)
  return code!
}

beforeAll(async () => {
  tg = await startBotApi({ defaultWaitTimeoutMs: 15_000 })
  db = await createTestDatabase()
  app = await start()
})
afterAll(async () => {
  await app?.stop()
  await db?.drop()
  await tg?.close()
  rmSync(empty, { recursive: true, force: true })
})

const desk = () => app!.deps.desk(TEST_BOT_ID)
async function opens(u: User, code: string): Promise<string> {
  const since = tg.mark()
  await tg.push(TEST_BOT_ID, tg.command(u, '/start', code))
  await inboxDrained(db.db)
  return (await tg.waitFor('sendMessage', { chat_id: u.id }, { since })).payload.text as string
}

describe('the owner claim link', () => {
  let first: string

  it('a first run prints the link in the log and on the console; a restart while it is valid prints the same', async () => {
    first = lastPrintedCode()
    await app!.stop()
    printed = ''
    app = await start()
    expect(lastPrintedCode()).toBe(first)
    const rows = await db.db.selectFrom('desk_claim').select(['code', 'state']).execute()
    expect(rows).toEqual([{ code: first, state: 'open' }])
  })

  it('expired: refused, nothing changed; the next start prints a new link', async () => {
    await db.db
      .updateTable('desk_claim')
      .set({ expires_at: sql<Date>`now() - interval '1 second'` })
      .where('code', '=', first)
      .execute()
    const early = tg.user({ first_name: 'Eli', language_code: 'en' })
    expect(await opens(early, first)).toMatch(/This owner link has expired/)
    expect(desk().staff.owner).toBeUndefined()
    expect(desk().staff.admins).toEqual([])

    await app!.stop()
    printed = ''
    app = await start()
    const second = lastPrintedCode()
    expect(second).not.toBe(first)
    const states = await db.db
      .selectFrom('desk_claim')
      .select(['code', 'state'])
      .orderBy('created_at')
      .execute()
    expect(states).toEqual([
      { code: first, state: 'expired' },
      { code: second, state: 'open' },
    ])
    first = second
  })

  it('opened: that person owns the desk (an admin too) and gets the next steps', async () => {
    const olga = tg.user({ first_name: 'Olga', last_name: 'Ivanova', language_code: 'ru' })
    const text = await opens(olga, first)
    expect(text).toMatch(/теперь вы владелец этого сервиса/)
    expect(text).toContain('Группа сотрудников')
    expect(text).toContain('/invite expert')
    await eventually(async () => desk().staff.owner === olga.id, 'Olga the owner')
    expect(desk().staff.admins).toEqual([olga.id])
    expect(desk().expertSettings.names[String(olga.id)]).toBe('Olga Ivanova')
    const audit = await db.db
      .selectFrom('audit_log')
      .select(['actor_id', 'action'])
      .where('action', '=', 'settings.changed')
      .execute()
    expect(audit).toContainEqual({ actor_id: olga.id, action: 'settings.changed' })

    // The same person again (or Telegram redelivering): told they own it; a second person: refused.
    expect(await opens(olga, first)).toMatch(/вы уже владелец/)
    const boris = tg.user({ first_name: 'Boris', language_code: 'en' })
    expect(await opens(boris, first)).toMatch(/has been used already: the desk has an owner/)
    expect(await opens(boris, 'own_NotACodeAtAll0000000')).toMatch(/This owner link is not valid/)
    expect(desk().staff.owner).toBe(olga.id)
    expect(desk().staff.admins).toEqual([olga.id])

    // A desk with an owner prints no link at the next start.
    await app!.stop()
    printed = ''
    app = await start()
    expect(printed).not.toMatch(/start=own_/)
  })

  it('two people opening one claim link at once: exactly one owns the desk, the other is told (20 rounds)', async () => {
    for (let round = 0; round < 20; round++) {
      // A desk nobody runs again, and its claim as a start would make it.
      await changeDesk(db.db, TEST_BOT_ID, { userId: null, source: 'import' }, 'any', (d) => {
        d.staff.owner = undefined
        d.staff.admins = []
      })
      const { code } = await ensureOwnerClaim(db.db, TEST_BOT_ID)
      const a = tg.user({ first_name: `A${round}`, language_code: 'en' })
      const b = tg.user({ first_name: `B${round}`, language_code: 'en' })
      const [ta, tb] = await Promise.all([opens(a, code), opens(b, code)])
      const owners = [ta, tb].filter((t) => /you are the owner of this desk now/.test(t))
      const refused = [ta, tb].filter((t) => /has been used already/.test(t))
      expect({ round, owners: owners.length, refused: refused.length }).toEqual({
        round,
        owners: 1,
        refused: 1,
      })
      const winner = /you are the owner/.test(ta) ? a : b
      const row = await readDesk(db.db, TEST_BOT_ID)
      expect(row!.doc.staff.owner).toBe(winner.id)
      expect(row!.doc.staff.admins).toEqual([winner.id])
    }
  })
})
