import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { parse as parseYaml, YAMLParseError } from 'yaml'
import type { z } from 'zod'
import { firstRunDesk } from './defaults'
import { type AppConfig, configSchema, type DeskConfig } from './schema'

/** A problem that stops the start; its message is one line meant for the operator, never a stack trace. */
export class ConfigError extends Error {
  override name = 'ConfigError'
}

/**
 * Read when it exists (or when CONFIG_FILE names another file). The repository ships an example next to it,
 * config/consult-desk.example.yaml, that is never read unless named: a fresh clone started with only BOT_TOKEN
 * starts the first-run desk (src/config/defaults.ts), not the example's placeholder group and staff.
 */
export const DEFAULT_CONFIG_FILE = 'config/consult-desk.yaml'
/** What `file` says when no config file was read. */
export const NO_CONFIG_FILE = '(no config file)'

/** Secrets and endpoints: environment only, never the YAML file. */
export interface Secrets {
  databaseUrl: string | undefined
  webhookSecret: string | undefined
  llmApiKey: string | undefined
  /** Bot API server root; Telegram's own unless a self-hosted server or a test stand-in is used. */
  telegramApiRoot: string
  /** Bearer token for GET /metrics; unset = /metrics answers the loopback address only. */
  metricsToken?: string | undefined
}

export interface DeskRuntime extends DeskConfig {
  token: string
  /** The bot's Telegram id: the number before the colon in its token. Every desk-owned row carries it. */
  botId: number
  /** The version of the desk's settings row this object shows (src/settings/cache.ts); unset before the first read. */
  settingsVersion?: number
}

export interface LoadedConfig extends Omit<AppConfig, 'desks'> {
  file: string
  /** 'defaults': no config file was read (a first run with only a token; src/config/defaults.ts). */
  source?: 'file' | 'defaults'
  desks: DeskRuntime[]
  secrets: Secrets
}

/** Reads .env (if present) into process.env without overriding what is already set. */
export function loadDotEnv(file = '.env'): void {
  if (existsSync(file)) process.loadEnvFile(file)
}

/** A zod issue path as `desks[0].tariffs[1].priceStars`. */
export function formatPath(p: PropertyKey[]): string {
  return (
    p
      .map((k) => (typeof k === 'number' ? `[${k}]` : `.${String(k)}`))
      .join('')
      .replace(/^\./, '') || '(root)'
  )
}

export function formatZodError(file: string, error: z.ZodError): string {
  return error.issues
    .flatMap((i) =>
      i.code === 'unrecognized_keys'
        ? i.keys.map((k) => `${file}: ${formatPath([...i.path, k])}: unknown key`)
        : [`${file}: ${formatPath(i.path)}: ${i.message}`],
    )
    .join('\n')
}

export function parseConfig(file: string, text: string): AppConfig {
  let raw: unknown
  try {
    raw = parseYaml(text)
  } catch (e) {
    const where = e instanceof YAMLParseError && e.linePos ? ` line ${e.linePos[0].line}` : ''
    throw new ConfigError(`${file}:${where} not valid YAML: ${(e as Error).message.split('\n')[0]}`)
  }
  const result = configSchema.safeParse(raw ?? {})
  if (!result.success) throw new ConfigError(formatZodError(file, result.error))
  return result.data
}

const TOKEN = /^(\d{5,16}):[A-Za-z0-9_-]{20,}$/

/** The bot's id in a token from @BotFather (the number before the colon), or undefined if it is not one. */
export function botIdOf(token: string): number | undefined {
  const m = TOKEN.exec(token)
  return m ? Number(m[1]) : undefined
}

/** The config file to read: CONFIG_FILE, else config/consult-desk.yaml when it exists, else none. */
export function configFileOf(env: NodeJS.ProcessEnv, cwd = process.cwd()): string | undefined {
  if (env.CONFIG_FILE) return env.CONFIG_FILE
  return existsSync(path.resolve(cwd, DEFAULT_CONFIG_FILE)) ? DEFAULT_CONFIG_FILE : undefined
}

function readConfigFile(abs: string, file: string): AppConfig {
  if (!existsSync(abs)) throw new ConfigError(`${file}: config file not found (set CONFIG_FILE or create it)`)
  let text: string
  try {
    text = readFileSync(abs, 'utf8')
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    throw new ConfigError(
      code === 'EISDIR'
        ? `${file}: is a directory, not a config file (set CONFIG_FILE to a YAML file)`
        : `${file}: cannot be read (${code ?? (e as Error).message})`,
    )
  }
  return parseConfig(file, text)
}

/** The config of this process: the file (see configFileOf; relative to `cwd`) or the first-run defaults. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): LoadedConfig {
  const named = configFileOf(env, cwd)
  const file = named ?? NO_CONFIG_FILE
  const config = named ? readConfigFile(path.resolve(cwd, named), named) : defaultConfig(env)

  const desks = config.desks.map((desk, i): DeskRuntime => {
    const token = env[desk.tokenEnv]
    if (!token)
      throw new ConfigError(
        `${desk.tokenEnv} is not set: create a bot with @BotFather (https://t.me/BotFather, /newbot), ` +
          `then start with ${desk.tokenEnv}=<token> npm start`,
      )
    const m = TOKEN.exec(token)
    if (!m)
      throw new ConfigError(`${desk.tokenEnv} does not look like a bot token from @BotFather (desks[${i}])`)
    return { ...desk, token, botId: Number(m[1]) }
  })

  const seen = new Set<number>()
  for (const d of desks) {
    if (seen.has(d.botId)) throw new ConfigError(`${file}: two desks use the same bot token (${d.tokenEnv})`)
    seen.add(d.botId)
  }

  const webhookSecret = env.WEBHOOK_SECRET || undefined
  if (config.mode === 'webhook') {
    if (!config.webhook.publicUrl)
      throw new ConfigError(`${file}: webhook.publicUrl: required in webhook mode`)
    if (!webhookSecret || !/^[A-Za-z0-9_-]{1,256}$/.test(webhookSecret))
      throw new ConfigError(
        'WEBHOOK_SECRET must be set in webhook mode: 1-256 characters of A-Z, a-z, 0-9, _ and -',
      )
  }

  // Telegram's windows scaled down (benchmarks, tests): the same factor the stand-in runs with.
  if (env.TELEGRAM_WINDOW_SCALE) config.telegramLimits.windowScale = Number(env.TELEGRAM_WINDOW_SCALE)
  if (env.TELEGRAM_BUDGET === 'off') config.telegramLimits.enabled = false
  if (env.TELEGRAM_BUDGET === 'per-process') config.telegramLimits.perProcess = true

  return {
    ...config,
    file,
    source: named ? 'file' : 'defaults',
    desks,
    secrets: {
      databaseUrl: env.DATABASE_URL || undefined,
      webhookSecret,
      llmApiKey: env.LLM_API_KEY || undefined,
      telegramApiRoot: (env.TELEGRAM_API_ROOT || 'https://api.telegram.org').replace(/\/+$/, ''),
      metricsToken: env.METRICS_TOKEN || undefined,
    },
  }
}

/** The whole config of a first run without a file: every default, and the first-run desk for BOT_TOKEN. */
function defaultConfig(env: NodeJS.ProcessEnv): AppConfig {
  const result = configSchema.safeParse({ desks: [firstRunDesk(env)] })
  if (!result.success) throw new ConfigError(formatZodError(NO_CONFIG_FILE, result.error))
  return result.data
}

/** Picks the text for a language, falling back to the desk default. */
export function pick(text: Partial<Record<string, string>>, lang: string, fallback: string): string {
  return text[lang] ?? text[fallback] ?? Object.values(text)[0] ?? ''
}
