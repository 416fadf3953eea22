import type { Server } from 'node:http'
import { type RunnerHandle, run } from '@grammyjs/runner'
import { type Bot, webhookCallback } from 'grammy'
import type { UserFromGetMe } from 'grammy/types'
import { ALLOWED_UPDATES, createBot, setCommands } from './bot/bot'
import type { BotContext } from './bot/context'
import { createI18n } from './bot/i18n'
import { assertDraftingConfig } from './config/drafting'
import type { LoadedConfig } from './config/load'
import { dashboardRoutes } from './dashboard/dashboard.http'
import { setStaffMenuButtons } from './dashboard/links'
import { type EmbeddedServer, ensureDatabase, startEmbeddedPostgres } from './db/embedded'
import { migrateToLatest } from './db/migrator'
import { createDb, type DbHandle } from './db/pool'
import type { Deps } from './deps'
import { Jobs } from './jobs/jobs'
import { Ledger } from './ledger/ledger.service'
import { createLlmClient } from './llm/provider'
import type { Logger } from './log'
import { createHttpServer, listen, type RouteHandler } from './server/http'
import { createApi } from './telegram/api'
import { QUEUES, startWorkers } from './workers'

export type Role = 'all' | 'bot' | 'worker'

export interface AppOptions {
  role?: Role
  log: Logger
  /** Where the embedded PostgreSQL keeps its data when DATABASE_URL is not set. */
  embeddedDataDir?: string
  /** Skip getMe (tests that know the bot). */
  botInfo?: (botId: number) => UserFromGetMe | undefined
}

export interface App {
  deps: Deps
  bots: Map<number, Bot<BotContext>>
  httpPort: number | undefined
  stop(): Promise<void>
}

/**
 * Wires one process: database (embedded if no DATABASE_URL), migrations, the pg-boss outbox, workers (role all |
 * worker), bots in polling or webhook mode (role all | bot) and the HTTP server (/health, webhooks).
 * Stop order on shutdown: stop taking updates, let in-flight updates finish, stop workers, close pools, stop the
 * embedded server.
 */
export async function startApp(config: LoadedConfig, opts: AppOptions): Promise<App> {
  const role = opts.role ?? 'all'
  const log = opts.log
  const cleanups: (() => Promise<void>)[] = []
  const stop = async () => {
    while (cleanups.length) {
      const c = cleanups.pop()!
      await c().catch((e) => log.error({ err: { message: (e as Error).message } }, 'error during shutdown'))
    }
  }

  try {
    assertDraftingConfig(config)
    let url = config.secrets.databaseUrl
    let embedded: EmbeddedServer | undefined
    if (!url) {
      log.info('DATABASE_URL not set: starting embedded PostgreSQL')
      embedded = await startEmbeddedPostgres({
        dataDir: opts.embeddedDataDir ?? process.env.DATA_DIR ?? '.data/pg',
        onLog: (l) => log.debug({ pg: l }, 'embedded postgres'),
      })
      cleanups.push(() => embedded!.stop())
      url = await ensureDatabase(embedded.url, 'consult_desk')
    }
    const handle: DbHandle = createDb(url)
    cleanups.push(() => handle.close())
    const applied = await migrateToLatest(handle.db)
    if (applied.length) log.info({ applied }, 'migrations applied')

    const jobs = Jobs.create(url, QUEUES, log, { schedule: role !== 'bot' })
    await jobs.start()
    cleanups.push(() => jobs.stop())

    const apis = new Map(
      config.desks.map((d) => [
        d.botId,
        createApi({ token: d.token, apiRoot: config.secrets.telegramApiRoot }),
      ]),
    )
    const desks = new Map(config.desks.map((d) => [d.botId, d]))
    const deps: Deps = {
      config,
      db: handle.db,
      pool: handle.pool,
      jobs,
      log,
      i18n: createI18n(config.desks[0]!.defaultLanguage),
      api: (botId) => must(apis.get(botId), `no desk for bot ${botId}`),
      desk: (botId) => must(desks.get(botId), `no desk for bot ${botId}`),
      ledger: new Ledger(handle.db, { overrunPolicy: config.ledger.overrunPolicy, log, pool: handle.pool }),
      llm: createLlmClient({ ...config.llm, apiKey: config.secrets.llmApiKey }),
    }

    if (role !== 'bot') await startWorkers(deps)

    const bots = new Map<number, Bot<BotContext>>()
    const webhooks = new Map<string, RouteHandler>()
    if (role !== 'worker') {
      for (const desk of config.desks) {
        const bot = createBot(deps, desk, opts.botInfo?.(desk.botId))
        await bot.init()
        await setCommands(bot, deps, desk)
        await setStaffMenuButtons(bot.api, deps, desk)
        bots.set(desk.botId, bot)
        if (config.mode === 'webhook') {
          const secret = config.secrets.webhookSecret!
          webhooks.set(desk.slug, webhookCallback(bot, 'http', { secretToken: secret, onTimeout: 'return' }))
          await bot.api.setWebhook(`${config.webhook.publicUrl!.replace(/\/$/, '')}/telegram/${desk.slug}`, {
            secret_token: secret,
            allowed_updates: [...ALLOWED_UPDATES],
          })
        }
      }
    }
    const server: Server = createHttpServer(
      deps,
      webhooks,
      config.dashboard.enabled ? dashboardRoutes(deps) : undefined,
    )
    const httpPort = await listen(server, config.http.port, config.http.host)
    cleanups.push(() => new Promise<void>((r) => server.close(() => r())))
    log.info(
      { role, mode: config.mode, port: httpPort, desks: config.desks.map((d) => d.slug) },
      'consult-desk started',
    )

    if (role !== 'worker' && config.mode === 'polling') {
      const runners: RunnerHandle[] = []
      for (const bot of bots.values()) {
        await bot.api.deleteWebhook()
        runners.push(run(bot, { runner: { fetch: { allowed_updates: [...ALLOWED_UPDATES] } } }))
      }
      // runner.stop() waits for in-flight updates to finish.
      cleanups.push(async () => {
        await Promise.all(runners.map((r) => (r.isRunning() ? r.stop() : undefined)))
      })
    }
    return { deps, bots, httpPort, stop }
  } catch (e) {
    await stop()
    throw e
  }
}

function must<T>(v: T | undefined, message: string): T {
  if (v === undefined) throw new Error(message)
  return v
}
