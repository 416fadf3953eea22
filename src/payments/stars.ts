import type { StarTransaction } from 'grammy/types'
import type { DeskRuntime } from '../config/load'
import type { Deps } from '../deps'
import { fetchTransactions } from './reconciliation'

/**
 * The bot's Stars for an admin's /stars: the balance (getMyStarBalance), the recent transactions
 * (getStarTransactions) and what is withdrawable. The Bot API does not report what can be withdrawn; Telegram makes
 * Stars a bot received withdrawable STARS_HOLD_DAYS after they arrive, so the estimate is the balance less what
 * came in within that many days (never below 0), and the answer calls it an estimate. Read-only: nothing is stored.
 */
export const STARS_HOLD_DAYS = 21

export interface StarLine {
  id: string
  date: Date
  /** Positive: received; negative: paid out (a refund, a withdrawal). */
  amount: number
  /** The user it came from or went to, if a user. */
  userId: number | null
  /** invoice_payment, withdrawal, ... as Telegram names it; '' when Telegram names none. */
  kind: string
}

export interface StarsOverview {
  balance: number
  withdrawable: number
  /** Received within the hold period, not withdrawable yet. */
  held: number
  holdDays: number
  recent: StarLine[]
}

function lineOf(t: StarTransaction): StarLine {
  const partner = t.source ?? t.receiver
  return {
    id: t.id,
    date: new Date(t.date * 1000),
    amount: t.source ? t.amount : -t.amount,
    userId: partner?.type === 'user' ? partner.user.id : null,
    kind:
      partner && 'transaction_type' in partner
        ? String(partner.transaction_type ?? '')
        : (partner?.type ?? ''),
  }
}

export async function starsOverview(
  deps: Deps,
  desk: DeskRuntime,
  opts: { now?: Date; recent?: number } = {},
): Promise<StarsOverview> {
  const now = opts.now ?? new Date()
  const api = deps.api(desk.botId)
  const balance = (await api.getMyStarBalance()).amount
  const since = new Date(now.getTime() - STARS_HOLD_DAYS * 86_400_000)
  const lines = (await fetchTransactions(deps, desk, since)).map(lineOf).sort((a, b) => +b.date - +a.date)
  const incoming = lines.filter((l) => l.amount > 0 && l.date >= since).reduce((n, l) => n + l.amount, 0)
  const withdrawable = Math.max(0, balance - incoming)
  return {
    balance,
    withdrawable,
    held: balance - withdrawable,
    holdDays: STARS_HOLD_DAYS,
    recent: lines.slice(0, opts.recent ?? 10),
  }
}
