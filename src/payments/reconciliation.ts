import type { StarTransaction } from 'grammy/types'
import { sql } from 'kysely'
import type { DeskRuntime } from '../config/load'
import type { Deps } from '../deps'
import { defineQueue } from '../jobs/queue'
import { notify } from '../telegram/notify'
import { tellAdmins } from '../telegram/private-alerts'

/**
 * Daily reconciliation: the payments table against Telegram's own list (getStarTransactions; a transaction's id is
 * the telegram_payment_charge_id, and a refund carries the id of the payment it refunds). Mismatches are reported
 * to the staff group; nothing is changed automatically — a missing payment or refund is a person's call.
 *
 * The comparison covers RECONCILE_DAYS, minus the last RECONCILE_GRACE_MINUTES (an update on its way is not a
 * mismatch yet).
 */
export const RECONCILE_DAYS = 30
export const RECONCILE_GRACE_MINUTES = 10
/** Telegram's page size limit; pages are read until one is short or older than the range. */
const PAGE = 100
const MAX_PAGES = 200

export const reconcileQueue = defineQueue<{ botId?: number; requestedBy?: number }>('payments.reconcile', {
  retryLimit: 3,
  retryDelay: 60,
  expireInSeconds: 600,
})

/** 03:30 UTC every day. */
export const RECONCILE_CRON = '30 3 * * *'

export interface Mismatch {
  kind:
    | 'missing-in-db' // Telegram has a payment we never recorded
    | 'missing-at-telegram' // we recorded a payment Telegram does not list
    | 'amount-differs'
    | 'refund-missing-in-db' // refunded at Telegram, not in our table
    | 'refund-missing-at-telegram' // refunded in our table, Telegram lists no refund
  charge: string
  user?: number
  telegramAmount?: number
  dbAmount?: number
}

export interface ReconcileReport {
  botId: number
  from: Date
  to: Date
  telegramPayments: number
  dbPayments: number
  mismatches: Mismatch[]
}

export async function fetchTransactions(
  deps: Deps,
  desk: DeskRuntime,
  from: Date,
): Promise<StarTransaction[]> {
  const out: StarTransaction[] = []
  const fromSec = Math.floor(from.getTime() / 1000)
  for (let page = 0; page < MAX_PAGES; page++) {
    const { transactions } = await deps
      .api(desk.botId)
      .getStarTransactions({ offset: page * PAGE, limit: PAGE })
    out.push(...transactions)
    if (transactions.length < PAGE) break
    // The Bot API documents "chronological order" without saying which way; read to the end, but stop early once a
    // whole page is older than the range (newest-first listings), bounded by MAX_PAGES either way.
    if (transactions.every((t) => t.date < fromSec)) break
  }
  return out
}

function userOf(t: StarTransaction): number | undefined {
  const partner = t.source ?? t.receiver
  return partner?.type === 'user' ? partner.user.id : undefined
}

export async function reconcileDesk(
  deps: Deps,
  desk: DeskRuntime,
  now = new Date(),
): Promise<ReconcileReport> {
  const from = new Date(now.getTime() - RECONCILE_DAYS * 86_400_000)
  const to = new Date(now.getTime() - RECONCILE_GRACE_MINUTES * 60_000)
  const inRange = (sec: number) => sec * 1000 >= from.getTime() && sec * 1000 < to.getTime()
  const txs = await fetchTransactions(deps, desk, from)

  // Incoming payments from users, and outgoing refunds to users (same id as the payment).
  const paid = new Map<string, StarTransaction>()
  const refunded = new Map<string, StarTransaction>()
  for (const t of txs) {
    if (t.source?.type === 'user' && t.source.transaction_type === 'invoice_payment') paid.set(t.id, t)
    else if (t.receiver?.type === 'user' && t.receiver.transaction_type === 'invoice_payment')
      refunded.set(t.id, t)
  }

  const rows = await deps.db
    .selectFrom('payment')
    .select(['telegram_payment_charge_id', 'total_amount', 'user_id', 'refunded_at', 'created_at'])
    .where('bot_id', '=', desk.botId)
    .where('created_at', '>=', sql<Date>`${from}::timestamptz - interval '1 day'`)
    .execute()
  const byCharge = new Map(rows.map((r) => [r.telegram_payment_charge_id, r]))

  const mismatches: Mismatch[] = []
  for (const [id, t] of paid) {
    if (!inRange(t.date)) continue
    const r = byCharge.get(id)
    const user = userOf(t)
    if (!r)
      mismatches.push({
        kind: 'missing-in-db',
        charge: id,
        telegramAmount: t.amount,
        ...(user ? { user } : {}),
      })
    else if (r.total_amount !== t.amount)
      mismatches.push({
        kind: 'amount-differs',
        charge: id,
        telegramAmount: t.amount,
        dbAmount: r.total_amount,
        user: r.user_id,
      })
  }
  for (const r of rows) {
    const t = r.created_at.getTime()
    if (t < from.getTime() || t >= to.getTime()) continue
    if (!paid.has(r.telegram_payment_charge_id))
      mismatches.push({
        kind: 'missing-at-telegram',
        charge: r.telegram_payment_charge_id,
        dbAmount: r.total_amount,
        user: r.user_id,
      })
  }
  for (const [id, t] of refunded) {
    if (!inRange(t.date)) continue
    const r = byCharge.get(id)
    if (r && !r.refunded_at)
      mismatches.push({ kind: 'refund-missing-in-db', charge: id, user: r.user_id, telegramAmount: t.amount })
  }
  for (const r of rows) {
    if (!r.refunded_at || r.refunded_at.getTime() >= to.getTime() || r.refunded_at.getTime() < from.getTime())
      continue
    if (!refunded.has(r.telegram_payment_charge_id))
      mismatches.push({
        kind: 'refund-missing-at-telegram',
        charge: r.telegram_payment_charge_id,
        user: r.user_id,
        dbAmount: r.total_amount,
      })
  }
  return {
    botId: desk.botId,
    from,
    to,
    telegramPayments: [...paid.values()].filter((t) => inRange(t.date)).length,
    dbPayments: rows.filter((r) => r.created_at >= from && r.created_at < to).length,
    mismatches,
  }
}

/** Mismatches told privately per run at most (the staff group's report lists up to 30; the rest come next run). */
const PRIVATE_ALERTS_PER_RUN = 10

/** The job: reconcile each desk (or one) and report to its staff group (one message per desk and day). */
export async function runReconciliation(
  deps: Deps,
  data: { botId?: number; requestedBy?: number },
): Promise<ReconcileReport[]> {
  const desks = deps.config.desks.filter((d) => data.botId === undefined || d.botId === data.botId)
  const reports: ReconcileReport[] = []
  for (const desk of desks) {
    const report = await reconcileDesk(deps, desk)
    reports.push(report)
    if (report.mismatches.length === 0 && !data.requestedBy) continue
    const day = new Date().toISOString().slice(0, 10)
    const lines = report.mismatches.slice(0, 30).map((m) =>
      deps.i18n.t(desk.defaultLanguage, `reconcile-${m.kind}`, {
        charge: m.charge,
        user: String(m.user ?? '—'),
        tg: m.telegramAmount ?? '—',
        db: m.dbAmount ?? '—',
      }),
    )
    await deps.jobs.transaction(deps.db, async (trx, outbox) => {
      // Each mismatch told privately to the owner and admins once, however many runs still find it.
      for (const m of report.mismatches.slice(0, PRIVATE_ALERTS_PER_RUN))
        await tellAdmins(trx, outbox, desk, {
          alertKey: `mismatch:${m.kind}:${m.charge}`,
          key: 'alert-mismatch',
          params: {
            what: deps.i18n.t(desk.defaultLanguage, `reconcile-${m.kind}`, {
              charge: m.charge,
              user: String(m.user ?? '—'),
              tg: m.telegramAmount ?? '—',
              db: m.dbAmount ?? '—',
            }),
          },
        })
      await notify(outbox, {
        botId: desk.botId,
        chatId: desk.staffChatId,
        lang: desk.defaultLanguage,
        key: report.mismatches.length ? 'reconcile-mismatches' : 'reconcile-clean',
        params: {
          count: report.mismatches.length,
          tg: report.telegramPayments,
          db: report.dbPayments,
          list: lines.join('\n'),
          more: Math.max(0, report.mismatches.length - lines.length),
        },
        dedupeKey: data.requestedBy
          ? `reconcile:${desk.botId}:${Date.now()}`
          : `reconcile:${desk.botId}:${day}`,
      })
    })
  }
  return reports
}

/** An admin's /reconcile: the job runs now and reports to the staff group even when everything agrees. */
export async function requestReconciliation(deps: Deps, desk: DeskRuntime, adminId: number): Promise<void> {
  await deps.jobs.transaction(deps.db, (_trx, outbox) =>
    outbox.send(reconcileQueue, { botId: desk.botId, requestedBy: adminId }),
  )
}
