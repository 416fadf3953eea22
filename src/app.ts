import type { Server } from 'node:http'
import { Api, type Bot } from 'grammy'
import type { UserFromGetMe } from 'grammy/types'
import { sql } from 'kysely'
import { ALLOWED_UPDATES, createBot } from './bot/bot'
import { menusChanged, queueDeskCommands, setDeskCommands } from './bot/commands'
import type { BotContext } from './bot/context'
import { createI18n } from './bot/i18n'
import { assertDraftingConfig } from './config/drafting'
import type { LoadedConfig } from './config/load'
import { dashboardRoutes } from './dashboard/dashboard.http'
import { setStaffMenuButtons } from './dashboard/links'
import { type EmbeddedServer, ensureDatabase, startEmbeddedPostgres } from './db/embedded'
import { migrateToLatest } from './db/migrator'
import { createDb, type DbHandle } from './db/pool'
import { retryAtStart } from './db/start-retry'
import type { Deps } from './deps'
import { createIntake, type Intake } from './intake/intake'
import { isTransient } from './intake/transient'
import { readinessLimits } from './jobs/health'
import { Jobs } from './jobs/jobs'
import { Liveness } from './jobs/liveness'
import { Ledger } from './ledger/ledger.service'
import { createLlmClient } from './llm/provider'
import type { Logger } from './log'
import { Readiness } from './readiness'
import { HealthWatch, healthRoute } from './server/health'
import { createHttpServer, listen } from './server/http'
import { metricsRoute } from './server/metrics'
import { DeskSettingsCache } from './settings/cache'
import { setUpAtStart, watchSelling } from './setup/startup'
import { createApi } from './telegram/api'
import { TelegramBudget } from './telegram/budget'
import { QUEUES, startWorkers } from './workers'

export type Role = 'all' | 'bot' | 'worker'

export interface AppOptions {
  role?: Role
  log: Logger
  /** Where the embedded PostgreSQL keeps its data when DATABASE_URL is not set. */
  embeddedDataDir?: string
  /** Skip getMe (tests that know the bot). */
  botInfo?: (botId: number) => UserFromGetMe | undefined
  /** Aborted by SIGTERM/SIGINT: a start still waiting for the database or Telegram stops (StartAborted). */
  signal?: AbortSignal
}

export interface App {
  deps: Deps
  bots: Map<number, Bot<BotContext>>
  /** The durable intake (bot roles): inbox processor, pollers or webhook endpoints. */
  intake: Intake | undefined
  readiness: Readiness
  health: HealthWatch
  httpPort: number | undefined
  /** `by`: the deadline (ms since epoch) the waiting steps share (src/main.ts's); without it each waits its own. */
  stop(opts?: { by?: number }): Promise<void>
  /** How far stop() has got: what a stop that overran its deadline was waiting for (src/main.ts logs it). */
  stopping: StopProgress
}

export interface StopProgress {
  /** The step stop() is waiting for now. */
  current?: string
  /** Milliseconds each finished step took. */
  steps: Record<string, number>
}

/**
 * Wires one process: database (embedded if no DATABASE_URL), migrations, the pg-boss outbox and this process's
 * heartbeat, workers (role all | worker), bots with the durable intake in polling or webhook mode (role all | bot)
 * and the HTTP server (/health, webhooks).
 * Stop order on shutdown: stop taking updates, let in-flight updates finish, stop workers, close pools, stop the
 * embedded server.
 */
export async function startApp(config: LoadedConfig, opts: AppOptions): Promise<App> {
  const role = opts.role ?? 'all'
  const log = opts.log
  const cleanups: [step: string, () => Promise<void>][] = []
  const stopping: StopProgress = { steps: {} }
  let stopBy = Number.POSITIVE_INFINITY
  /**
   * How long a step may wait for work in flight: up to `capMs`, leaving `keepMs` of the stop's deadline to the steps
   * after it. Each waiting step has a timeout of its own (the intake's 5 s, pg-boss's 8 s); in a row they would
   * outlast the deadline, and the process would exit 1 instead of handing the rest back.
   */
  const grace = (capMs: number, keepMs: number) => Math.max(0, Math.min(capMs, stopBy - Date.now() - keepMs))
  const stop = async (opts: { by?: number } = {}) => {
    if (opts.by !== undefined) stopBy = opts.by
    while (cleanups.length) {
      const [step, c] = cleanups.pop()!
      const began = Date.now()
      stopping.current = step
      await c().catch((e) =>
        log.error({ err: { message: (e as Error).message }, step }, 'error during shutdown'),
      )
      stopping.steps[step] = Date.now() - began
    }
    stopping.current = undefined
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
      cleanups.push(['embedded PostgreSQL', () => embedded!.stop()])
      url = await ensureDatabase(embedded.url, 'consult_desk')
    }
    const handle: DbHandle = createDb(url)
    cleanups.push(['database pool', () => handle.close()])
    // A database that is down (refused, unreachable, not answering) at start is waited for, with backoff: the
    // same as an outage later, without a supervisor's restart. A missing database or a refused login end the start.
    await retryAtStart('database', () => sql`select 1`.execute(handle.db), { log, signal: opts.signal })
    const applied = await migrateToLatest(handle.db)
    if (applied.length) log.info({ applied }, 'migrations applied')
    // From here on a database outage is survived, not fatal: /health says so and everything retries by itself.
    const readiness = new Readiness()
    const health = new HealthWatch(handle.db, readiness, log, { limits: () => readinessLimits(config.desks) })
    cleanups.push(['health watch', async () => health.stop()])
    // The desks' settings live in PostgreSQL (src/settings): seeded from the config at the first start, read from
    // the rows afterwards, and kept current in place while the process runs.
    const settings = await DeskSettingsCache.start(handle.db, url, config.desks, log, {
      source: config.source ?? 'file',
    })
    cleanups.push(['settings cache', () => settings.stop()])

    const jobs = Jobs.create(url, QUEUES, log, { schedule: role !== 'bot' })
    await jobs.start()
    const liveness = new Liveness(handle.db, jobs, log, { role, reap: role !== 'bot' })
    cleanups.push([
      'workers',
      async () => {
        // What the jobs still running may take; pg-boss fails them back to their queues after it.
        await jobs.stop(grace(8000, 1500))
        await liveness.stop()
      },
    ])
    await liveness.start()
    await health.start()

    const budget = new TelegramBudget(handle.pool, config.telegramLimits)
    const apis = new Map(
      config.desks.map((d) => [
        d.botId,
        createApi({ token: d.token, apiRoot: config.secrets.telegramApiRoot, botId: d.botId, budget }),
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
      budget,
      ledger: new Ledger(handle.db, { overrunPolicy: config.ledger.overrunPolicy, log, pool: handle.pool }),
      llm: createLlmClient({ ...config.llm, apiKey: config.secrets.llmApiKey }),
    }

    if (role !== 'bot') await startWorkers(deps)

    const bots = new Map<number, Bot<BotContext>>()
    let intake: Intake | undefined
    if (role !== 'worker') {
      for (const desk of config.desks) {
        // getMe: Telegram unreachable (or answering 5xx/429) at start is waited for as the database is, one line per
        // attempt. A plain Api for it: the bot's Api retries network errors by itself without end and in silence
        // (auto-retry).
        const known = opts.botInfo?.(desk.botId)
        const me =
          known ??
          (await retryAtStart(
            'Telegram',
            () =>
              new Api(desk.token, { apiRoot: config.secrets.telegramApiRoot }).getMe(
                opts.signal as Parameters<Api['getMe']>[0],
              ),
            { log, signal: opts.signal, transient: isTransient },
          ))
        const bot = createBot(deps, desk, me)
        await bot.init()
        await setDeskCommands(bot.api, deps, desk)
        await setStaffMenuButtons(bot.api, deps, desk)
        // The owner link of a desk nobody runs yet, and one look at the staff groups in the settings (src/setup).
        await setUpAtStart(deps, bot.api, deps.desk(desk.botId), bot.botInfo.username)
        bots.set(desk.botId, bot)
      }
      // What Telegram keeps of a desk's settings is set again when they change (in every bot process: idempotent).
      settings.onChange(async (desk, before) => {
        const bot = bots.get(desk.botId)
        if (!bot) return
        // The menus (staff commands are per group and per staff member): set by a job, one per settings version.
        if (menusChanged(before, desk)) await queueDeskCommands(deps, desk)
        const staff = (d: Pick<typeof desk, 'staff'>) => new Set([...d.staff.admins, ...d.staff.experts])
        const now = staff(desk)
        const gone = [...staff(before)].filter((id) => !now.has(id))
        if (config.dashboard.menuButton)
          for (const id of gone)
            await bot.api.setChatMenuButton({ chat_id: id, menu_button: { type: 'default' } })
        if ([...now].some((id) => !staff(before).has(id))) await setStaffMenuButtons(bot.api, deps, desk)
      })
      intake = createIntake(deps, url, bots, readiness)
    }
    // /health notes a desk that sells nothing now, and why (src/setup/gate.ts), in every process.
    const stopSelling = watchSelling(deps, () => config.desks, readiness)
    cleanups.push(['selling watch', async () => stopSelling()])
    const server: Server = createHttpServer(
      intake?.webhooks ?? new Map(),
      healthRoute(health, readiness, { workers: role !== 'bot', token: config.secrets.metricsToken }),
      config.dashboard.enabled ? dashboardRoutes(deps) : undefined,
      metricsRoute(deps, config.secrets.metricsToken, health),
    )
    const httpPort = await listen(server, config.http.port, config.http.host)
    cleanups.push(['http server', () => new Promise<void>((r) => server.close(() => r()))])

    if (intake) {
      // The webhook is set once this process listens for it; in polling mode, a webhook left by an earlier run in
      // webhook mode would keep Telegram posting there, so polling takes over from it.
      for (const [botId, bot] of bots)
        if (config.mode === 'webhook')
          await bot.api.setWebhook(
            `${config.webhook.publicUrl!.replace(/\/$/, '')}/telegram/${deps.desk(botId).slug}`,
            { secret_token: config.secrets.webhookSecret!, allowed_updates: [...ALLOWED_UPDATES] },
          )
        else await bot.api.deleteWebhook()
      const started = intake
      started.start()
      // Stops fetching first, then lets the running handlers finish.
      cleanups.push(['intake', () => started.stop(grace(5000, 4000))])
    }
    // Said when the process takes updates (and its webhook or poller is in place), not before.
    log.info(
      { role, mode: config.mode, port: httpPort, desks: config.desks.map((d) => d.slug) },
      'consult-desk started',
    )
    return { deps, bots, intake, readiness, health, httpPort, stop, stopping }
  } catch (e) {
    await stop()
    throw e
  }
}

function must<T>(v: T | undefined, message: string): T {
  if (v === undefined) throw new Error(message)
  return v
}
