import pino from 'pino'

export type Logger = pino.Logger

/**
 * JSON logs in production, pretty ones in a terminal. Anything that could carry a secret is redacted by path;
 * code never logs request payloads or tokens in the first place.
 */
export function createLogger(level = process.env.LOG_LEVEL ?? 'info'): Logger {
  const pretty = process.env.NODE_ENV !== 'production' && process.stdout.isTTY && !process.env.CI
  return pino({
    level,
    base: { app: 'consult-desk' },
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
  })
}

/** A logger for tests and benchmarks: silent unless LOG_LEVEL asks otherwise. */
export function quietLogger(): Logger {
  return pino({ level: process.env.LOG_LEVEL ?? 'silent' })
}
