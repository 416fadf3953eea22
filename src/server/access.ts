import { timingSafeEqual } from 'node:crypto'
import type { IncomingMessage } from 'node:http'

/**
 * Who may read the operator's figures (/metrics, /health's detail): a request with `Authorization: Bearer
 * <METRICS_TOKEN>`, or, only where the token is not required, one made on this host directly. A request that
 * carries a forwarding header (X-Forwarded-For, Forwarded, X-Real-IP) came through a proxy: its socket address
 * is the proxy's (often 127.0.0.1 on the same host), which says nothing about the caller, so it is never local.
 */
export function hasToken(req: IncomingMessage, token: string | undefined): boolean {
  if (!token) return false
  const given = Buffer.from(/^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '')
  const want = Buffer.from(token)
  return given.length === want.length && timingSafeEqual(given, want)
}

export const FORWARDING_HEADERS = ['x-forwarded-for', 'forwarded', 'x-real-ip'] as const

/** A request from the loopback address that no proxy forwarded. */
export function isDirectLoopback(req: IncomingMessage): boolean {
  if (FORWARDING_HEADERS.some((h) => req.headers[h] !== undefined)) return false
  const ip = req.socket.remoteAddress ?? ''
  return ip === '127.0.0.1' || ip === '::1' || ip === '::ffff:127.0.0.1'
}
