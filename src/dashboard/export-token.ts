import { createHmac, timingSafeEqual } from 'node:crypto'
import type { ExportKind } from './dashboard.model'

/**
 * A CSV is downloaded by a plain GET: Telegram's downloadFile (and a browser's download) fetch a URL and cannot
 * send the page's initData header. So the page first asks for a link (with its initData), and the link carries a
 * token: what to export, for whom, until when, signed with a key derived from the desk's bot token. Stateless and
 * short-lived (a few minutes, never past the initData it was issued for); the download checks the staff role again.
 */

export interface ExportGrant {
  userId: number
  kind: ExportKind
  from: Date
  to: Date
  expiresAt: Date
}

function key(botToken: string): Buffer {
  return createHmac('sha256', 'DashboardExport').update(botToken).digest()
}

function mac(botToken: string, payload: string): Buffer {
  return createHmac('sha256', key(botToken)).update(payload).digest()
}

export function signExport(botToken: string, g: ExportGrant): string {
  const payload = Buffer.from(
    JSON.stringify({
      u: g.userId,
      k: g.kind,
      f: g.from.getTime(),
      t: g.to.getTime(),
      e: Math.floor(g.expiresAt.getTime() / 1000),
    }),
  ).toString('base64url')
  return `${payload}.${mac(botToken, payload).toString('base64url')}`
}

export function verifyExport(botToken: string, token: string, now: Date): ExportGrant | undefined {
  const [payload, sig, ...rest] = token.split('.')
  if (!payload || !sig || rest.length > 0 || token.length > 1000) return undefined
  const expected = mac(botToken, payload)
  const given = Buffer.from(sig, 'base64url')
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined
  try {
    const p = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>
    const g: ExportGrant = {
      userId: Number(p.u),
      kind: p.k as ExportKind,
      from: new Date(Number(p.f)),
      to: new Date(Number(p.t)),
      expiresAt: new Date(Number(p.e) * 1000),
    }
    return g.expiresAt.getTime() > now.getTime() ? g : undefined
  } catch {
    return undefined
  }
}
