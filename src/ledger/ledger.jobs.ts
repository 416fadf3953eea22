import type { Jobs } from '../jobs/jobs'
import { defineQueue } from '../jobs/queue'
import type { Logger } from '../log'
import type { Ledger } from './ledger.service'

/**
 * The sweeper: expires holds abandoned in state reserved past their deadline (the worker died between reserve and
 * enqueue). `stately`: at most one sweep queued and one running per queue; correctness does not depend on it (the
 * database function takes its batch with SKIP LOCKED, so concurrent sweepers never expire a hold twice).
 */
export const ledgerSweepQueue = defineQueue<Record<string, never>>('ledger.sweep', {
  policy: 'stately',
  retryLimit: 2,
  retryDelay: 10,
  expireInSeconds: 300,
  retentionDays: 1,
})

/** Every minute: a hold's TTL is minutes long, so a minute of lateness is within its tolerance. */
export const LEDGER_SWEEP_CRON = '* * * * *'

export interface SweeperOptions {
  cron?: string
  batchSize?: number
  log?: Logger
}

/**
 * Registers the sweep worker and its pg-boss schedule. Call after `jobs.start()` (which must list
 * `ledgerSweepQueue`): pg-boss refuses a schedule for a queue that does not exist yet.
 */
export async function startLedgerSweeper(
  jobs: Jobs,
  ledger: Ledger,
  opts: SweeperOptions = {},
): Promise<void> {
  await jobs.work(ledgerSweepQueue, async () => {
    const expired = await ledger.sweep({ batchSize: opts.batchSize ?? 500 })
    if (expired > 0) opts.log?.info({ expired }, 'ledger: expired abandoned holds')
    return { expired }
  })
  await jobs.boss.schedule(ledgerSweepQueue.name, opts.cron ?? LEDGER_SWEEP_CRON, {}, { tz: 'UTC' })
}
