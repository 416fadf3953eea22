/**
 * Deadlocks (40P01) and serialization failures (40001) roll the whole transaction back and say nothing about the
 * data: running it again is the correct answer. The lock order of the desk (consultation row first) makes them
 * rare; this makes them invisible to the client instead of "temporarily unavailable, send it again".
 */
const RETRYABLE = new Set(['40P01', '40001'])

export function isRetryableConflict(err: unknown): boolean {
  return RETRYABLE.has((err as { code?: string })?.code ?? '')
}

export async function retryConflicts<T>(fn: () => Promise<T>, attempts = 4): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn()
    } catch (err) {
      if (i >= attempts || !isRetryableConflict(err)) throw err
      // A short, jittered pause lets the other transaction finish first.
      await new Promise((r) => setTimeout(r, 5 + Math.random() * 20 * i))
    }
  }
}
