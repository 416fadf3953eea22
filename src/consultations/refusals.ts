import type { Deps } from '../deps'
import type { Refusal as LedgerRefusal } from '../ledger/ledger.model'
import type { DeskConsultationView } from '../orders/orders.repository'
import { formatInstant, type Zone } from '../time/format'
import type { AdmitRow } from './desk.repository'

/**
 * Why a client's message was refused, with the numbers the decision was made on, and the text the client gets for
 * it (src/consultations/admission.ts decides; this file turns the decision's numbers into a refusal and words it).
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
  zone: Zone,
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

/** The refusal desk_admit decided, with the window numbers it decided on. */
export function accessRefusal(a: AdmitRow): AdmissionRefusal {
  const iso = (d: Date | null) => d?.toISOString() ?? null
  const window = {
    checkedAt: iso(a.o_checked_at),
    startsAt: iso(a.o_starts_at),
    accessUntil: iso(a.o_access_until),
  }
  const openAppeal = a.o_open_appeal_id !== null
  switch (a.o_reason) {
    case 'closed':
      return {
        reason: 'closed',
        numbers: { ...window, closedAt: iso(a.o_closed_at ?? a.o_access_until), openAppeal },
      }
    case 'not_started':
      return {
        reason: 'not_started',
        numbers: {
          ...window,
          startsAt: iso(a.o_starts_at ?? a.o_slot_start),
          startMode: a.o_start_mode,
          needsStartDate: a.o_needs_start_date,
        },
      }
    case 'window_closed':
      return { reason: 'window_closed', numbers: { ...window, openAppeal } }
    case 'banned':
    case 'refunded':
      return { reason: a.o_reason, numbers: window }
    default:
      return { reason: 'unavailable', numbers: window }
  }
}

/** The ledger's refusal as the client sees it: the same granted/used/held numbers the decision was made on. */
export function ledgerRefusal(
  deps: Pick<Deps, 'log'>,
  consultationId: number,
  r: LedgerRefusal,
): AdmissionRefusal {
  const a = r.account
  if ((r.reason === 'exhausted' || r.reason === 'held_by_active') && a)
    return {
      reason: 'no_appeals',
      numbers: {
        granted: a.granted,
        used: a.used,
        held: a.reserved,
        left: Math.max(0, a.granted - a.reserved - a.used),
        ledgerReason: r.reason,
        periodEnd: a.periodEnd.toISOString(),
      },
    }
  // No account or an inactive one while the window is open: the grants are out of step with the window. Fail
  // closed and say so in the log; the client is told nothing was counted.
  deps.log.warn(
    { consultation_id: consultationId, reason: r.reason, detail: r.detail },
    'appeal reserve refused unexpectedly',
  )
  return { reason: 'unavailable', numbers: { ledgerReason: r.reason } }
}
