/**
 * Which database errors say "not now" rather than "not this". An update or job that fails with one of them is
 * retried later, never refused: its transaction rolled back and says nothing about the data.
 *
 * - Class 08 (connection exception) and errors without a SQLSTATE from the driver or the socket (refused, reset,
 *   timed out, "Connection terminated"): the server is unreachable.
 * - 57P01 admin_shutdown (also what pg_terminate_backend sends), 57P02 crash_shutdown, 57P03 cannot_connect_now
 *   (starting up, shutting down, in recovery), 57P05 idle_session_timeout: the server ended or refused the session.
 * - 55000 object_not_in_prerequisite_state, only with "is not currently accepting connections": the answer to a
 *   connection while the database is closed to connections (ALTER DATABASE ... ALLOW_CONNECTIONS false, a
 *   maintenance step). Other 55000s (e.g. lastval before nextval) are bugs and stay permanent.
 * - Class 53 (insufficient resources: too many connections, out of memory, disk full) and class 58 (system and I/O
 *   errors): the server's condition, not the request's.
 * - 40001 serialization_failure, 40P01 deadlock_detected, 55P03 lock_not_available: the transaction lost a race;
 *   running it again is the correct answer.
 * - 57014 query_canceled (statement_timeout, pg_cancel_backend during a shutdown): the statement was stopped, not
 *   refused.
 */
const SERVER_GONE = new Set(['57P01', '57P02', '57P03', '57P05'])
const LOST_RACE = new Set(['40001', '40P01', '55P03', '57014'])
const SOCKET = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNABORTED',
])
const DRIVER_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed and is not queryable|Cannot use a pool after calling end|Connection ended unexpectedly|the database system is (starting up|shutting down|in recovery mode)/i

function codeOf(err: unknown): string {
  const c = (err as { code?: unknown } | null)?.code
  return typeof c === 'string' ? c : ''
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err ?? '')
}

/** The server cannot be reached or ended the session: the database as a whole is unavailable. */
export function isDatabaseUnavailable(err: unknown): boolean {
  const code = codeOf(err)
  if (code.startsWith('08') || SERVER_GONE.has(code) || SOCKET.has(code)) return true
  if (code === '55000') return /not currently accepting connections/i.test(messageOf(err))
  if (code === '') return DRIVER_MESSAGES.test(messageOf(err))
  return false
}

/** Unavailable, or a transaction that lost a race or met a server in trouble: try again later. */
export function isTransientDbError(err: unknown): boolean {
  const code = codeOf(err)
  return isDatabaseUnavailable(err) || LOST_RACE.has(code) || code.startsWith('53') || code.startsWith('58')
}
