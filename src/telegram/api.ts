import { autoRetry } from '@grammyjs/auto-retry'
import { Api, GrammyError, HttpError, type Transformer } from 'grammy'
import { metrics } from '../metrics'

export interface ApiOptions {
  token: string
  apiRoot: string
  botId: number
  budget: { transformer(botId: number): Transformer }
}

/**
 * An Api for sending outside of an update (jobs). The shared budget (budget.ts) keeps every process of the
 * deployment together within Telegram's limits (about 1 message/s per private chat, 20/min per group — all topics
 * of the staff group share it — and 30/s overall); auto-retry honours 429 retry_after and retries network failures
 * a few times before the job itself fails and pg-boss retries it. Each retry takes from the budget again.
 */
export function createApi({ token, apiRoot, botId, budget }: ApiOptions): Api {
  const api = new Api(token, { apiRoot })
  installTransformers(api, budget, botId)
  return api
}

/** Counts every 429 Telegram answers and the retry_after it asks for (innermost: each retried call counts). */
const count429: Transformer = async (prev, method, payload, signal) => {
  const res = await prev(method, payload, signal)
  if (!res.ok && res.error_code === 429) {
    metrics.telegram429.inc({ method })
    metrics.telegramRetryAfter.inc({ method }, res.parameters?.retry_after ?? 0)
  }
  return res
}

export function installTransformers(
  api: Api,
  budget: { transformer(botId: number): Transformer },
  botId: number,
): void {
  // Installed first, so it runs closest to the HTTP call (later transformers wrap earlier ones).
  api.config.use(count429)
  api.config.use(budget.transformer(botId))
  api.config.use(autoRetry({ maxRetryAttempts: 3, maxDelaySeconds: 60 }))
}

/** The private chat's owner blocked the bot or deleted the account: don't retry. */
export function isBlocked(err: unknown): boolean {
  return err instanceof GrammyError && err.error_code === 403
}

/** The topic was deleted, closed or archived: the route must move to a new topic. */
export function isTopicUnusable(err: unknown): boolean {
  if (!(err instanceof GrammyError) || err.error_code !== 400) return false
  return /TOPIC_DELETED|TOPIC_CLOSED|message thread not found|TOPIC_ID_INVALID|thread.*archived/i.test(
    err.description,
  )
}

export function isTelegramDown(err: unknown): boolean {
  return err instanceof HttpError || (err instanceof GrammyError && err.error_code >= 500)
}
