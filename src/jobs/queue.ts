import { createHash } from 'node:crypto'
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

/**
 * A UUID (v5 layout) from a key: the same key always names the same job. pg-boss inserts a job with ON CONFLICT DO
 * NOTHING on its id, so a job written twice under one key (a replayed transaction, a retried handler) exists once.
 */
export function jobId(key: string): string {
  const h = createHash('sha256').update(key).digest('hex').slice(0, 32).split('')
  h[12] = '5'
  h[16] = ((Number.parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16)
  const s = h.join('')
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20, 32)}`
}
