import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { type App, type Role, startApp } from '../../src/app'
import { type DeskRuntime, type LoadedConfig, loadConfig } from '../../src/config/load'
import { freePort } from '../../src/db/embedded'
import { type Logger, quietLogger } from '../../src/log'
import { createTestDatabase, type TestDatabase } from './db'

export const TEST_CONFIG = path.join(path.dirname(fileURLToPath(import.meta.url)), 'desk.test.yaml')
/** A token of the right shape; the stand-in accepts any. The bot id is the part before the colon. */
export const TEST_TOKEN = `7000001:${'T'.repeat(35)}`
export const TEST_BOT_ID = 7000001
export const ADMIN_ID = 900001
export const EXPERT_ID = 900002
export const STAFF_CHAT_ID = -1009000000001

export interface TestAppOptions {
  /** The Bot API stand-in's root URL (test/support/bot-api.ts). */
  apiRoot: string
  role?: Role
  mode?: 'polling' | 'webhook'
  /** Edit the loaded config (tariffs, staff, ...) before the app starts. */
  configure?: (config: LoadedConfig) => void
  /** Reuse a database (e.g. a second worker process on the same data). */
  database?: TestDatabase
  /** More environment for the config (e.g. LLM_API_KEY). */
  env?: Record<string, string>
  /** The app's logger (default: quiet). */
  log?: Logger
}

export interface TestApp {
  app: App
  config: LoadedConfig
  desk: DeskRuntime
  db: TestDatabase
  stop(): Promise<void>
}

/**
 * Starts the real app (src/app.ts, as `npm start` does) in-process: the test config file, a fresh database cloned
 * from the migrated template, and the Bot API stand-in as TELEGRAM_API_ROOT.
 */
export async function startTestApp(opts: TestAppOptions): Promise<TestApp> {
  const db = opts.database ?? (await createTestDatabase())
  const config = loadConfig({
    CONFIG_FILE: TEST_CONFIG,
    BOT_TOKEN: TEST_TOKEN,
    DATABASE_URL: db.url,
    TELEGRAM_API_ROOT: opts.apiRoot,
    WEBHOOK_SECRET: 'test-secret_1',
    ...opts.env,
  })
  if (opts.mode === 'webhook') {
    config.mode = 'webhook'
    // Telegram (the stand-in) must know the URL before the server starts, so the port is chosen up front.
    config.http.port = await freePort()
    config.webhook.publicUrl = `http://127.0.0.1:${config.http.port}`
  }
  opts.configure?.(config)
  const app = await startApp(config, { role: opts.role ?? 'all', log: opts.log ?? quietLogger() })
  return {
    app,
    config,
    desk: config.desks[0]!,
    db,
    async stop() {
      await app.stop()
      if (!opts.database) await db.drop()
    },
  }
}
