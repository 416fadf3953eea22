import type { DeskConsultationView } from '../orders/orders.repository'
import { formatInstant } from '../time/format'

/**
 * Why a client's message was refused, with the numbers the decision was made on, and the text the client gets for
 * it (src/consultations/admission.ts decides; this file words it).
 */

export type RefusalReason =
  | 'no_consultation'
  | 'not_started'
  | 'window_closed'
  | 'closed'
  | 'no_appeals'
  | 'refunded'
  | 'banned'
  /** A feature the client's plan does not include (src/consultations/plan-refusals.ts). */
  | 'not_in_plan'
  | 'unavailable'

export interface AdmissionRefusal {
  reason: RefusalReason
  /** The numbers behind it: window bounds, appeal counts (granted/used/held), as the check saw them. */
  numbers: Record<string, string | number | boolean | null>
}

/** The locale key and parameters of a refusal, built from the refusal's own numbers. */
export function refusalText(
  c: Pick<DeskConsultationView, 'start_mode' | 'needs_start_date'> | null,
  r: AdmissionRefusal,
  zone: string,
  lang: string,
): { key: string; params: Record<string, string | number>; more?: { key: string }[] } {
  const n = r.numbers
  const when = (iso: unknown) => (typeof iso === 'string' ? formatInstant(new Date(iso), zone, lang) : '—')
  switch (r.reason) {
    case 'not_started':
      if (typeof n.startsAt === 'string')
        return { key: 'desk-refused-not-started', params: { start: when(n.startsAt) } }
      if (c?.start_mode === 'on_request' && !c.needs_start_date)
        return { key: 'desk-refused-not-started-on-request', params: {} }
      return { key: 'desk-refused-not-started-no-date', params: {} }
    case 'window_closed':
      return {
        key: 'desk-refused-window-closed',
        params: { end: when(n.accessUntil) },
        ...(n.openAppeal ? { more: [{ key: 'desk-refused-window-closed-open' }] } : {}),
      }
    case 'closed':
      // Closed by the window-end job (closed_at = access_until, src/lifecycle): it reads as the window closing.
      if (typeof n.closedAt === 'string' && n.closedAt === n.accessUntil)
        return {
          key: 'desk-refused-window-closed',
          params: { end: when(n.closedAt) },
          ...(n.openAppeal ? { more: [{ key: 'desk-refused-window-closed-open' }] } : {}),
        }
      return {
        key: 'desk-refused-closed',
        params: { end: when(n.closedAt) },
        ...(n.openAppeal ? { more: [{ key: 'desk-refused-window-closed-open' }] } : {}),
      }
    case 'no_appeals':
      return {
        key: 'desk-refused-no-appeals',
        params: { left: Number(n.left), total: Number(n.granted), held: Number(n.held) },
      }
    case 'refunded':
      return { key: 'desk-refused-refunded', params: {} }
    case 'banned':
      return { key: 'desk-refused-banned', params: {} }
    case 'no_consultation':
      return { key: 'desk-refused-no-consultation', params: {} }
    default:
      return { key: 'desk-refused-unavailable', params: {} }
  }
}
