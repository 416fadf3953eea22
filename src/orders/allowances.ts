import { sql } from 'kysely'
import type { DeskRuntime } from '../config/load'
import type { Trx } from '../db/database'
import { LedgerTx } from '../ledger/ledger.service'
import type { Consultation, Order } from './orders.repository'

/**
 * A consultation's allowances on the quota ledger, granted when its window starts (in the activation transaction):
 * appeals (questions and clarification rounds; amount = the order's appeals) and AI drafts (amount = the order's
 * drafts, possibly 0, so drafting refuses with numbers instead of "no account"). Both: scope 'consultation',
 * subject = the consultation id, period = the access window [starts_at, access_until). Grants are idempotent by
 * request id, so a replayed activation grants nothing twice.
 */
export const CONSULTATION_SCOPE = 'consultation'
export const APPEALS_UNIT = 'appeals'
export const DRAFTS_UNIT = 'drafts'

function ledger(trx: Trx): LedgerTx {
  return new LedgerTx(trx, 'allow', 0)
}

export async function grantConsultationAllowances(
  trx: Trx,
  desk: DeskRuntime,
  c: Consultation,
  order: Order,
): Promise<void> {
  if (!c.starts_at || !c.access_until) throw new Error(`consultation ${c.id}: no window to grant for`)
  const l = ledger(trx)
  for (const [unit, amount] of [
    [APPEALS_UNIT, order.appeals],
    [DRAFTS_UNIT, order.drafts],
  ] as const) {
    const g = await l.grant({
      requestId: `consultation:${c.id}:${unit}`,
      scope: CONSULTATION_SCOPE,
      subject: c.id,
      unit,
      periodStart: c.starts_at,
      periodEnd: c.access_until,
      amount,
      timeZone: desk.schedule.timezone,
    })
    if (!g.ok) throw new Error(`consultation ${c.id}: ${unit} grant refused (${g.reason})`)
  }
}

/**
 * On refund: the consultation's accounts stop admitting (deactivated), and under the 'stop' policy its open holds
 * (questions accepted but not answered) are released. Under 'deliver' those holds stay: the answers are still
 * delivered and the holds commit as usual. Returns how many holds were released.
 */
export async function revokeConsultationAllowances(
  trx: Trx,
  consultationId: number,
  policy: 'deliver' | 'stop',
): Promise<number> {
  const accounts = await trx
    .selectFrom('ledger_account')
    .select('id')
    .where('scope', '=', CONSULTATION_SCOPE)
    .where('subject', '=', String(consultationId))
    .orderBy('id')
    .execute()
  return stopAccounts(
    trx,
    accounts.map((a) => a.id),
    policy === 'stop',
    'consultation refunded',
  )
}

/**
 * Ledger accounts that stop admitting (deactivated); with `release`, the holds still open on them (questions
 * accepted but not answered) are released with the note. Returns how many holds were released.
 */
export async function stopAccounts(
  trx: Trx,
  accountIds: number[],
  release: boolean,
  note: string,
): Promise<number> {
  const l = ledger(trx)
  for (const id of accountIds) await l.setActive(id, false)
  if (!release || accountIds.length === 0) return 0
  const open = await trx
    .selectFrom('ledger_reservation')
    .select('request_id')
    .where('state', '=', 'reserved')
    .where(sql<boolean>`account_ids && ${sql.val(accountIds)}::bigint[]`)
    .execute()
  let released = 0
  for (const r of open) {
    const s = await l.release(r.request_id, { note })
    if (s.ok && !s.replayed) released++
  }
  return released
}
