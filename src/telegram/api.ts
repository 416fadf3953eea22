import { autoRetry } from '@grammyjs/auto-retry'
import { Api, GrammyError, HttpError, type Transformer } from 'grammy'

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

export function installTransformers(
  api: Api,
  budget: { transformer(botId: number): Transformer },
  botId: number,
): void {
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
