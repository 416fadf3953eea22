import type { Bot, Transformer } from 'grammy'
import { GrammyError } from 'grammy'
import type { Update } from 'grammy/types'
import pg from 'pg'
import type { BotContext } from '../bot/context'
import type { Deps } from '../deps'
import { errorSummary } from '../jobs/jobs'
import type { Readiness } from '../readiness'
import type { RouteHandler } from '../server/http'
import { storeUpdates } from './inbox.repository'
import { inboxKeys } from './keys'
import { UpdatePoller } from './poller'
import { InboxProcessor, type ProcessorOptions } from './processor'
import { webhookHandler } from './webhook'

export interface Intake {
  /** Webhook endpoints by desk slug (webhook mode). */
  webhooks: Map<string, RouteHandler>
  processor: InboxProcessor
  /** Starts handling updates from the inbox, and in polling mode fetching them. */
  start(): void
  /** Stops fetching, then handling (the running handlers finish first). */
  stop(graceMs?: number): Promise<void>
}

/**
 * The durable intake of a bot process (see README.md here): every update is stored in the inbox before Telegram is
 * told it arrived (polling: before the next offset; webhook: before the 200), then handled from there by the
 * processor, one chat at a time, in order, with retries. Pre-checkout queries alone take a fast lane.
 */
export function createIntake(
  deps: Deps,
  databaseUrl: string,
  bots: Map<number, Bot<BotContext>>,
  readiness: Readiness,
  opts: ProcessorOptions = {},
): Intake {
  // The processor's bookkeeping (takes, done marks, lease renewals) commits asynchronously: losing the last of
  // those in a server crash only makes an update handled again. Storing an update is always a durable commit.
  const bookkeeping = new pg.Pool({
    connectionString: databaseUrl,
    max: 2,
    application_name: 'consult-desk-intake',
    options: '-c synchronous_commit=off',
    connectionTimeoutMillis: 10_000,
    keepAlive: true,
  })
  // Connection errors of idle and checked-out clients alike reach the query that runs next (see src/db/pool.ts).
  bookkeeping.on('error', () => {})
  bookkeeping.on('connect', (client) => client.on('error', () => {}))
  for (const bot of bots.values()) bot.api.config.use(expiredButtonAnswers)
  const handlers = new Map([...bots].map(([id, bot]) => [id, (u: Update) => bot.handleUpdate(u)]))
  const processor = new InboxProcessor(deps, bookkeeping, handlers, opts)
  const webhooks = new Map<string, RouteHandler>()
  const pollers: UpdatePoller[] = []
  const config = deps.config
  for (const [botId, bot] of bots) {
    const desk = deps.desk(botId)
    const store = async (updates: Update[]) => {
      await storeUpdates(deps.pool, botId, updates)
      processor.offer(updates.map((u) => ({ botId, updateId: u.update_id, priority: inboxKeys(u).priority })))
    }
    if (config.mode === 'webhook')
      webhooks.set(
        desk.slug,
        webhookHandler(bot, (u) => store([u]), config.secrets.webhookSecret!, deps.log),
      )
    else
      pollers.push(
        new UpdatePoller(
          bot,
          desk.slug,
          {
            store,
            answerNow: (u) => {
              bot
                .handleUpdate(u)
                .catch((err) =>
                  deps.log.error({ desk: desk.slug, err: errorSummary(err) }, 'pre-checkout failed'),
                )
            },
          },
          deps.log,
          readiness,
        ),
      )
  }
  return {
    webhooks,
    processor,
    start() {
      processor.start()
      for (const p of pollers) p.start()
    },
    async stop(graceMs?: number) {
      await Promise.all(pollers.map((p) => p.stop()))
      await processor.stop(graceMs)
      await bookkeeping.end().catch(() => {})
    },
  }
}

/**
 * A button press handled late (it waited in the inbox through an outage) can no longer be answered: Telegram
 * refuses answerCallbackQuery after some seconds. The spinner has long stopped on the client's side, so that
 * refusal is the answer's only effect; treating it as done lets the handler finish instead of failing an update
 * whose real work succeeded.
 */
const expiredButtonAnswers: Transformer = async (prev, method, payload, signal) => {
  const expired = (code: number, description: string | undefined) =>
    method === 'answerCallbackQuery' &&
    code === 400 &&
    /query is too old|query ID is invalid/i.test(description ?? '')
  try {
    // Telegram's refusal comes back as a response ({ ok: false }), which grammY turns into an error only after the
    // transformers; a transformer further down (auto-retry) may throw it instead.
    const res = await prev(method, payload, signal)
    if (!res.ok && expired(res.error_code, res.description))
      return { ok: true, result: true } as Awaited<ReturnType<typeof prev>>
    return res
  } catch (err) {
    if (
      method === 'answerCallbackQuery' &&
      err instanceof GrammyError &&
      err.error_code === 400 &&
      /query is too old|query ID is invalid/i.test(err.description)
    )
      return { ok: true, result: true } as Awaited<ReturnType<typeof prev>>
    throw err
  }
}
