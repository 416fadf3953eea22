import { AsyncLocalStorage } from 'node:async_hooks'
import pino from 'pino'

export type Logger = pino.Logger

/**
 * The trace of the work being done: the update that started it (`u<bot id>:<update id>`), carried from the update's
 * handler into every job it enqueues (the job payload's `trace_id`, src/jobs/jobs.ts) and from a job into the jobs
 * it enqueues in turn. Every log line written meanwhile carries it as `trace_id`.
 */
const traces = new AsyncLocalStorage<string>()

export function withTrace<T>(traceId: string | undefined, fn: () => T): T {
  return traceId ? traces.run(traceId, fn) : fn()
}

export function currentTrace(): string | undefined {
  return traces.getStore()
}

/** pino mixin: the current trace on every line. */
function traceMixin(): Record<string, string> {
  const t = traces.getStore()
  return t ? { trace_id: t } : {}
}

/**
 * JSON logs in production, pretty ones in a terminal. Anything that could carry a secret is redacted by path;
 * code never logs request payloads or tokens in the first place.
 */
export function createLogger(
  level = process.env.LOG_LEVEL ?? 'info',
  destination?: pino.DestinationStream,
): Logger {
  const pretty =
    !destination && process.env.NODE_ENV !== 'production' && process.stdout.isTTY && !process.env.CI
  const options: pino.LoggerOptions = {
    level,
    base: { app: 'consult-desk' },
    mixin: traceMixin,
    redact: {
      paths: [
        'token',
        '*.token',
        'apiKey',
        '*.apiKey',
        'authorization',
        '*.authorization',
        'headers',
        '*.headers',
      ],
      censor: '[redacted]',
    },
    ...(pretty ? { transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l' } } } : {}),
  }
  return destination ? pino(options, destination) : pino(options)
}

/** A logger for tests and benchmarks: silent unless LOG_LEVEL asks otherwise. */
export function quietLogger(): Logger {
  return pino({ level: process.env.LOG_LEVEL ?? 'silent', mixin: traceMixin })
}
