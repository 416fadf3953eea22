import type { Trx } from '../db/database'
import { formatDate, type Zone } from '../time/format'
import type { AdmissionRefusal } from './refusals'

/**
 * A refusal on a consultation that carries a subscription (src/subscriptions) is worded for the plan: "0 of 20
 * questions left in this period; the next period starts on 14 Dec", "your plan ended on ...; renew to continue",
 * "renewal is cancelled; access until ...". The numbers are the refusal's own (those the check decided on); only
 * the period dates and the renewal flag are read here. Undefined: not a subscription, the generic text applies.
 */
export async function planRefusalText(
  trx: Trx,
  consultationId: number,
  r: AdmissionRefusal,
  zone: Zone,
  lang: string,
): Promise<{ key: string; params: Record<string, string | number>; more?: { key: string }[] } | undefined> {
  const sub = await trx
    .selectFrom('subscription')
    .select(['id', 'state', 'renewal_cancelled'])
    .where('consultation_id', '=', consultationId)
    .orderBy('id', 'desc') // a change of plan continues on the same consultation: the newest subscription
    .executeTakeFirst()
  if (!sub) return undefined
  const last = await trx
    .selectFrom('subscription_period')
    .select(['period_end'])
    .where('subscription_id', '=', sub.id)
    .orderBy('number', 'desc')
    .executeTakeFirst()
  const n = r.numbers
  const date = (d: Date | undefined) => (d ? formatDate(d, zone, lang) : '—')
  const lastEnd = last?.period_end
  const open = n.openAppeal ? { more: [{ key: 'desk-refused-window-closed-open' }] } : {}
  switch (r.reason) {
    case 'no_appeals': {
      const end = typeof n.periodEnd === 'string' ? new Date(n.periodEnd) : lastEnd
      const params = { left: Number(n.left), total: Number(n.granted), held: Number(n.held) }
      if (sub.renewal_cancelled)
        return { key: 'sub-refused-no-questions-cancelled', params: { ...params, end: date(end) } }
      return { key: 'sub-refused-no-questions', params: { ...params, next: date(end) } }
    }
    case 'window_closed':
    case 'closed':
      return { key: 'sub-refused-ended', params: { end: date(lastEnd) }, ...open }
    case 'refunded':
      return { key: 'sub-refused-refunded', params: {} }
    case 'not_in_plan':
      return { key: 'sub-refused-not-in-plan', params: {} }
    case 'unavailable':
      // Between a period's end and its renewal (the grace) there is no account for the instant.
      if (n.ledgerReason === 'no_account' || n.ledgerReason === 'inactive') {
        if (sub.state === 'refunded') return { key: 'sub-refused-refunded', params: {} }
        if (sub.renewal_cancelled) return { key: 'sub-refused-ended', params: { end: date(lastEnd) } }
        return { key: 'sub-refused-renewal-pending', params: { end: date(lastEnd) } }
      }
      return undefined
    default:
      return undefined
  }
}
