import type { I18n } from '@grammyjs/i18n'
import type { Api, Transformer } from 'grammy'
import type pg from 'pg'
import type { DeskRuntime, LoadedConfig } from './config/load'
import type { Db } from './db/database'
import type { Jobs } from './jobs/jobs'
import type { Ledger } from './ledger/ledger.service'
import type { LlmClient } from './llm/provider'
import type { Logger } from './log'

/** `deps.i18n.t`'s shape, for code that renders texts without a Context. */
export type Translator = (
  lang: string,
  key: string,
  params?: Record<string, string | number | Date>,
) => string

/**
 * What every use case and job handler may depend on. Built once in src/app.ts and passed down; handlers never
 * reach for globals, so tests build the same thing against their own database and Bot API stand-in.
 */
export interface Deps {
  config: LoadedConfig
  db: Db
  /** The pg pool behind `db`, for the few hot statements run as named prepared statements (Kysely has no API). */
  pool: pg.Pool
  jobs: Jobs
  log: Logger
  i18n: I18n<any>
  /** Per-desk Api for sends outside an update (jobs), with throttling and retry-after handling. */
  api(botId: number): Api
  desk(botId: number): DeskRuntime
  /** Telegram's limits, shared by every process (src/telegram/budget.ts): every Api of this process sends through it. */
  budget: {
    transformer(botId: number): Transformer
    /** Another lane waits for this chat's budget (a lane gives its worker up after each item then). */
    othersWaiting(botId: number, chatId: number, lane: string): Promise<boolean>
  }
  /** The quota ledger; `ledger.in(trx)` runs its operations inside a caller's transaction. */
  ledger: Ledger
  /** The AI drafting provider (OpenAI-compatible; key from LLM_API_KEY). Called only from the drafting job. */
  llm: LlmClient
}
