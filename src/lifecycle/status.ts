import type { I18n } from '@grammyjs/i18n'
import { clockNow } from '../db/clock'
import type { Db } from '../db/database'
import { Ledger } from '../ledger/ledger.service'
import { APPEALS_UNIT, CONSULTATION_SCOPE } from '../orders/allowances'
import { listUserOrders } from '../orders/orders.repository'
import { formatInstant, type Zone } from '../time/format'
import { formatDuration } from '../time/instants'
import { openAppealsOf } from './lifecycle.repository'

/** The client's orders for /status, newest first, with their consultation's state and window. */
export function clientOrders(deps: { db: Db }, desk: { botId: number }, userId: number, limit = 10) {
  return listUserOrders(deps.db, desk.botId, userId, limit)
}

/**
 * What /status adds under a consultation (src/bot/features/status.ts renders the rest): while it is active, the time
 * left in the window and the appeals used and left (from the ledger's balance, the numbers the admission decides
 * on); and each open appeal with its due time (also after the window: accepted questions are still answered), in
 * the client's zone and language.
 */
export async function consultationStatusLines(
  deps: { db: Db; i18n: I18n<any> },
  c: { id: number; state: string | null; starts_at: Date | null; access_until: Date | null },
  zone: Zone,
  lang: string,
): Promise<string[]> {
  const t = (key: string, p?: Record<string, string | number>) => deps.i18n.t(lang, key, p)
  const lines: string[] = []
  if (c.state === 'active' && c.starts_at && c.access_until) {
    const now = await clockNow(deps.db)
    const left = (c.access_until.getTime() - now.getTime()) / 60_000
    lines.push(left > 0 ? t('status-time-left', { left: formatDuration(left, lang) }) : t('status-time-over'))
    const acc = await new Ledger(deps.db).balance(
      { scope: CONSULTATION_SCOPE, subject: c.id, unit: APPEALS_UNIT },
      c.starts_at,
    )
    if (acc)
      lines.push(
        t('status-appeals', {
          used: acc.used,
          held: acc.reserved,
          left: Math.max(0, acc.available),
          total: acc.granted,
        }),
      )
  }
  for (const a of await openAppealsOf(deps.db, c.id))
    lines.push(
      t(a.breached_at ? 'status-open-appeal-late' : 'status-open-appeal', {
        number: a.number,
        // The list's title says the zone once for all its dates.
        accepted: formatInstant(a.accepted_at, zone, lang, { zone: false }),
        due: formatInstant(a.due_at, zone, lang, { zone: false }),
      }),
    )
  return lines
}

/**
 * The client's payments for /status, newest first (issue 26): every Stars payment of theirs (a consultation, a
 * top-up, a plan's first payment and renewals, an overpayment) with its amount, what it paid for, and its refund.
 */
export function clientPayments(deps: { db: Db }, desk: { botId: number }, userId: number, limit = 10) {
  return deps.db
    .selectFrom('payment as p')
    .leftJoin('orders as o', 'o.id', 'p.order_id')
    .select([
      'p.id',
      'p.total_amount',
      'p.currency',
      'p.kind',
      'p.created_at',
      'p.refunded_at',
      'o.id as order_id',
      'o.title',
      'o.kind as order_kind',
    ])
    .where('p.bot_id', '=', desk.botId)
    .where('p.user_id', '=', userId)
    .orderBy('p.created_at', 'desc')
    .orderBy('p.id', 'desc')
    .limit(limit)
    .execute()
}

/**
 * A support plan's periods for /status, newest first (issue 26): the current one and the past ones of every
 * subscription of the client (a change of plan continues on a new subscription), with the questions each granted.
 */
export function clientPlanPeriods(deps: { db: Db }, desk: { botId: number }, userId: number, limit = 12) {
  return deps.db
    .selectFrom('subscription_period as sp')
    .innerJoin('subscription as s', 's.id', 'sp.subscription_id')
    .leftJoin('payment as p', 'p.id', 'sp.payment_id')
    .select([
      'sp.id',
      'sp.number',
      'sp.plan_code',
      'sp.period_start',
      'sp.period_end',
      'sp.granted',
      'sp.carried',
      's.state as subscription_state',
      'p.total_amount',
      'p.refunded_at',
    ])
    .where('s.bot_id', '=', desk.botId)
    .where('s.user_id', '=', userId)
    .orderBy('sp.period_start', 'desc')
    .orderBy('sp.id', 'desc')
    .limit(limit)
    .execute()
}
