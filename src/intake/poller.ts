import { type Bot, GrammyError } from 'grammy'
import type { Update } from 'grammy/types'
import { ALLOWED_UPDATES } from '../bot/bot'
import type { BotContext } from '../bot/context'
import { errorSummary } from '../jobs/jobs'
import type { Logger } from '../log'
import type { Readiness } from '../readiness'

/** Telegram's maximum batch; one batch is stored in one statement and one commit. */
const LIMIT = 100
/** Long-poll timeout (seconds): an idle bot costs one request per half minute. */
const TIMEOUT = 30

export interface PollerHooks {
  /** Stores a batch; resolves once it is committed. */
  store(updates: Update[]): Promise<void>
  /** Handles an update at once, without storing it (pre-checkout queries: see src/intake/README.md). */
  answerNow(update: Update): void
}

/**
 * Long polling that confirms an update only after it is stored: getUpdates(offset) confirms every update below
 * offset, so the next offset is asked for only once the batch is committed in the inbox. A crash or a database
 * outage at any point leaves the unconfirmed updates at Telegram (kept 24 hours) and they come again.
 *
 * Hand-written because @grammyjs/runner (and bot.start()) confirm an offset as soon as the batch is fetched,
 * before anything is stored or handled: 48 kill -9 of a polling bot lost 20 of 1,350 messages that way. This loop
 * does only what the inbox needs - fetch, store, then confirm - and leaves handling to the inbox processor.
 */
export class UpdatePoller {
  private offset = 0
  private readonly abort = new AbortController()
  private done: Promise<void> | undefined

  constructor(
    private readonly bot: Bot<BotContext>,
    private readonly name: string,
    private readonly hooks: PollerHooks,
    private readonly log: Logger,
    private readonly readiness: Readiness,
  ) {}

  start(): void {
    this.done = this.run()
  }

  async stop(): Promise<void> {
    this.abort.abort()
    await this.done
  }

  private get stopped(): boolean {
    return this.abort.signal.aborted
  }

  private async run(): Promise<void> {
    let backoff = 0
    while (!this.stopped) {
      let updates: Update[]
      try {
        updates = await this.bot.api.getUpdates(
          { offset: this.offset, limit: LIMIT, timeout: TIMEOUT, allowed_updates: [...ALLOWED_UPDATES] },
          // grammY types its signal with the abort-controller shim's AbortSignal; Node's is the same at runtime.
          this.abort.signal as Parameters<Bot<BotContext>['api']['getUpdates']>[1],
        )
        backoff = 0
      } catch (err) {
        if (this.stopped) break
        backoff = this.pollBackoff(err, backoff)
        await this.sleep(backoff)
        continue
      }
      if (updates.length === 0) continue
      const rest: Update[] = []
      for (const u of updates) {
        if (u.pre_checkout_query) this.hooks.answerNow(u)
        else rest.push(u)
      }
      if (!(await this.storeUntilStored(rest))) break
      this.offset = updates[updates.length - 1]!.update_id + 1
    }
    // Confirm what is stored, so the next start does not fetch it again (it would change nothing if it did).
    if (this.offset > 0)
      await this.bot.api.getUpdates({ offset: this.offset, limit: 1, timeout: 0 }).catch(() => {})
  }

  /** Keeps the batch in hand and retries until it is stored; false when stopped first (nothing confirmed). */
  private async storeUntilStored(updates: Update[]): Promise<boolean> {
    let delay = 250
    let logged = false
    for (;;) {
      try {
        await this.hooks.store(updates)
        if (logged) this.log.warn({ desk: this.name }, 'intake: storing updates again')
        this.readiness.set(`intake:${this.name}`, true)
        return true
      } catch (err) {
        this.readiness.set(`intake:${this.name}`, false, 'cannot store updates')
        if (!logged)
          this.log.error({ desk: this.name, err: errorSummary(err) }, 'intake: cannot store updates')
        logged = true
        if (this.stopped) return false
        await this.sleep(delay)
        if (this.stopped) return false
        delay = Math.min(delay * 2, 5000)
      }
    }
  }

  private pollBackoff(err: unknown, previous: number): number {
    if (err instanceof GrammyError && err.error_code === 409) {
      // Another process polls this token (or a webhook is set): only one poller per bot can run.
      this.log.warn({ desk: this.name, err: err.description }, 'getUpdates conflict; retrying')
      return 5000
    }
    if (err instanceof GrammyError && (err.error_code === 401 || err.error_code === 404)) {
      this.log.error({ desk: this.name, err: err.description }, 'getUpdates refused: is the token valid?')
      return 30_000
    }
    const next = Math.min(Math.max(previous * 2, 500), 30_000)
    this.log.warn({ desk: this.name, err: errorSummary(err), retryInMs: next }, 'getUpdates failed; retrying')
    return next
  }

  private sleep(ms: number): Promise<void> {
    const signal = this.abort.signal
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer)
        signal.removeEventListener('abort', done)
        resolve()
      }
      const timer = setTimeout(done, ms)
      signal.addEventListener('abort', done)
    })
  }
}
