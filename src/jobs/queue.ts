import type PgBoss from 'pg-boss'

/**
 * A queue with a typed payload. Queues are declared next to the feature that owns them and listed in
 * `src/workers.ts` (the wiring), so every queue is created at start and a send to an undeclared one is a type error.
 */
export interface QueueDef<T> {
  readonly name: string
  readonly options: Omit<PgBoss.Queue, 'name'>
  /** Parallel workers per process. */
  readonly concurrency: number
  /** Phantom field carrying the payload type. */
  readonly __payload?: T
}

/**
 * Defaults: five retries with exponential backoff from 2 s, then the job moves to the dead-letter queue where it
 * waits for a person. Expiry bounds a handler that hangs (a stuck Telegram call) so its job is retried.
 */
export const DEFAULT_QUEUE_OPTIONS: Omit<PgBoss.Queue, 'name'> = {
  retryLimit: 5,
  retryDelay: 2,
  retryBackoff: true,
  expireInSeconds: 120,
  retentionDays: 7,
}

export const DEAD_LETTER_QUEUE = 'dead-letter'

export function defineQueue<T>(
  name: string,
  options: Omit<PgBoss.Queue, 'name'> = {},
  concurrency = 1,
): QueueDef<T> {
  return {
    name,
    options: { ...DEFAULT_QUEUE_OPTIONS, deadLetter: DEAD_LETTER_QUEUE, ...options },
    concurrency,
  }
}

/**
 * Thrown by a handler that cannot go on now but will be able to in `seconds` (a Telegram budget's window is closed:
 * src/telegram/budget.ts's BudgetWait extends it). The worker does not wait: Jobs writes the same job again for
 * then (same payload, singleton key and priority) and completes this one, so the worker serves other jobs
 * meanwhile. Not a failure: no retry is used up, nothing is logged as failed.
 */
export class JobDeferred extends Error {
  override name = 'JobDeferred'
  constructor(
    readonly seconds: number,
    message = `job deferred for ${seconds.toFixed(2)} s`,
  ) {
    super(message)
  }
}

export type PayloadOf<Q> = Q extends QueueDef<infer T> ? T : never
