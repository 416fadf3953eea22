import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type App, startApp } from '../../src/app'
import { type LoadedConfig, loadConfig } from '../../src/config/load'
import { quietLogger } from '../../src/log'
import { setupGaps } from '../../src/settings/setup'
import { TEST_BOT_ID, TEST_CONFIG, TEST_TOKEN } from '../support/app'
import { type BotApiStandIn, startBotApi } from '../support/bot-api'
import { createTestDatabase, type TestDatabase } from '../support/db'
import { eventually, inboxDrained } from '../support/fixtures'

/**
 * A first run with nothing but a token (issue 24): no config file is read (the repository ships only an example),
 * so the desk has no staff group, no staff and no tariffs, sells nothing and says so, and never touches the
 * example's placeholder group or staff. Its settings are seeded into PostgreSQL, which wins at the next start even
 * when a YAML file is given then.
 */

const EXAMPLE_GROUP = -1001234567890
const EXAMPLE_STAFF = 100000001

let tg: BotApiStandIn
let db: TestDatabase
let app: App | undefined
let config: LoadedConfig
const empty = mkdtempSync(path.join(os.tmpdir(), 'cd-first-run-'))

function firstRunConfig(env: Record<string, string> = {}): LoadedConfig {
  const c = loadConfig(
    { BOT_TOKEN: TEST_TOKEN, DATABASE_URL: db.url, TELEGRAM_API_ROOT: tg.root, DESK_LANGUAGE: 'en', ...env },
    empty,
  )
  c.http = { host: '127.0.0.1', port: 0 }
  return c
}

beforeAll(async () => {
  tg = await startBotApi({ defaultWaitTimeoutMs: 15_000 })
  db = await createTestDatabase()
  config = firstRunConfig({ TZ: 'Europe/Berlin' })
  app = await startApp(config, { log: quietLogger() })
})
afterAll(async () => {
  await app?.stop()
  await db?.drop()
  await tg?.close()
  rmSync(empty, { recursive: true, force: true })
})

describe('a first run with only BOT_TOKEN', () => {
  it('the repository ships only the example config, which is never read unless named', () => {
    const tracked = execFileSync('git', ['ls-files', 'config'], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
    expect(tracked).toEqual(['config/consult-desk.example.yaml'])
    expect(loadConfig({ BOT_TOKEN: TEST_TOKEN }, path.resolve('.')).source).toBe(
      existsSync('config/consult-desk.yaml') ? 'file' : 'defaults',
    )
  })

  it('starts a desk with defaults: no group, no staff, no tariffs; seeded into PostgreSQL', async () => {
    expect(config.source).toBe('defaults')
    const desk = config.desks[0]!
    expect(desk).toMatchObject({
      botId: TEST_BOT_ID,
      slug: 'desk',
      defaultLanguage: 'en',
      staff: { admins: [], experts: [] },
      tariffs: [],
      schedule: { timezone: 'Europe/Berlin', weekly: { mon: ['10:00-18:00'], fri: ['10:00-18:00'] } },
    })
    expect(desk.staffChatId).toBeUndefined()
    expect(setupGaps(desk)).toEqual(['no-owner', 'no-staff-group', 'no-tariff'])
    const row = await db.db.selectFrom('desk_settings').selectAll().executeTakeFirstOrThrow()
    expect(row).toMatchObject({ bot_id: TEST_BOT_ID, version: 1, source: 'seed' })
  })

  it('sells nothing and says so; no order, no invoice', async () => {
    const anna = tg.user({ first_name: 'Anna', language_code: 'en' })
    await tg.push(TEST_BOT_ID, tg.command(anna, '/start'))
    expect((await tg.waitForSent(anna.id, /not taking orders yet/)).text).toContain('Consultations')
    await tg.push(TEST_BOT_ID, tg.command(anna, '/tariffs'))
    await eventually(
      async () => tg.sentTo(anna.id).filter((m) => /not taking orders/.test(m.text ?? '')).length === 2,
      'the /tariffs answer',
    )
    const boris = tg.user({ first_name: 'Борис', language_code: 'ru' })
    await tg.push(TEST_BOT_ID, tg.command(boris, '/tariffs'))
    await tg.waitForSent(boris.id, /пока не принимает заказы/)
    // A forged buy button: refused, nothing made.
    const since = tg.mark()
    await tg.push(TEST_BOT_ID, tg.callback(anna, 'tf:buy:quick:AAAAAAAA'))
    const alert = await tg.waitFor('answerCallbackQuery', {}, { since })
    expect(alert.payload.text).toBe('Nothing can be bought here yet; nothing was charged.')
    await inboxDrained(db.db)
    expect(tg.callsTo('sendInvoice')).toHaveLength(0)
    expect(await db.db.selectFrom('orders').select('id').execute()).toHaveLength(0)
  })

  it("never calls the example's placeholder group or staff", () => {
    const touched = tg
      .callsTo('*')
      .filter((c) => [EXAMPLE_GROUP, EXAMPLE_STAFF].includes(Number(c.payload.chat_id)))
    expect(touched).toEqual([])
  })

  it('at the next start PostgreSQL wins over a YAML file', async () => {
    await app!.stop()
    app = undefined
    const withFile = loadConfig({
      CONFIG_FILE: TEST_CONFIG,
      BOT_TOKEN: TEST_TOKEN,
      DATABASE_URL: db.url,
      TELEGRAM_API_ROOT: tg.root,
    })
    expect(withFile.desks[0]!.staffChatId).toBeDefined()
    app = await startApp(withFile, { log: quietLogger() })
    const desk = app.deps.desk(TEST_BOT_ID)
    expect(desk.staffChatId).toBeUndefined()
    expect(desk.tariffs).toEqual([])
    expect(desk.settingsVersion).toBe(1)
  })
})
