import type { Db } from '../db/database'

/** Why a desk sells nothing new now (src/setup/gate.ts). */
export type ClosedReason =
  | { kind: 'no-owner' }
  | { kind: 'no-group' }
  | { kind: 'no-tariff' }
  | { kind: 'group'; chatId: number; title: string; problems: string[] }

/**
 * What the last look found broken, per database handle and desk, in this process: refreshed every two seconds by
 * watchSelling (src/setup/startup.ts) and right after this process records a look (recordGroupFacts). It serves the
 * pre-checkout answer, which must not wait for another query under a burst (bench:checkout); another process's
 * look reaches it within about two seconds. The source of truth stays staff_group_state.
 */
const lastLook = new WeakMap<Db, Map<number, ClosedReason[]>>()

export function rememberBroken(db: Db, botId: number, reasons: ClosedReason[]): void {
  const m = lastLook.get(db) ?? new Map<number, ClosedReason[]>()
  lastLook.set(db, m)
  m.set(
    botId,
    reasons.filter((r) => r.kind === 'group'),
  )
}

export function lastBroken(db: Db, botId: number): ClosedReason[] {
  return lastLook.get(db)?.get(botId) ?? []
}
