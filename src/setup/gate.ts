import type { DeskRuntime } from '../config/load'
import type { Db } from '../db/database'
import { setupGaps } from '../settings/setup'
import { brokenGroups } from './groups'
import { type ClosedReason, lastBroken } from './last-look'

/**
 * Whether the desk sells new consultations now (issue 24): what src/settings/setup.ts says a desk needs (someone
 * who runs it - an owner, or admins from the settings -, a staff group, something to sell), and none of its groups
 * broken by the bot's last look (removed, a right taken away, Topics off). Consultations already paid go on
 * regardless. The reasons are words for /health and the log.
 */
export type { ClosedReason }

/** What the desk's settings still lack (src/settings/setup.ts), as reasons. */
function gapReasons(desk: DeskRuntime): ClosedReason[] {
  return setupGaps(desk).map(
    (g): ClosedReason =>
      g === 'no-owner'
        ? { kind: 'no-owner' }
        : g === 'no-staff-group'
          ? { kind: 'no-group' }
          : { kind: 'no-tariff' },
  )
}

export async function sellingClosed(db: Db, desk: DeskRuntime): Promise<ClosedReason[]> {
  const out = gapReasons(desk)
  for (const g of await brokenGroups(db, desk)) out.push({ kind: 'group', ...g })
  return out
}

/** One line for /health: "no owner yet; staff group «Staff»: gone". */
export function closedSummary(reasons: ClosedReason[]): string {
  return reasons
    .map((r) =>
      r.kind === 'no-owner'
        ? 'no owner yet (open the claim link printed at start)'
        : r.kind === 'no-group'
          ? 'no staff group yet (add the bot to a forum supergroup)'
          : r.kind === 'no-tariff'
            ? 'nothing to sell yet (no tariff, no plan)'
            : `staff group «${r.title}»: ${r.problems.map((p) => PROBLEM_WORDS[p] ?? p).join(', ')}`,
    )
    .join('; ')
}

const PROBLEM_WORDS: Record<string, string> = {
  gone: 'the bot is not in the group',
  'not-supergroup': 'not a supergroup',
  'not-forum': 'Topics are off',
  'not-admin': 'the bot is not an admin',
  'manage-topics': 'no Manage topics right',
  'pin-messages': 'no Pin messages right',
  'delete-messages': 'no Delete messages right',
}

/** sellingClosed without a query: the desk's gaps now, and its broken groups as of the last look (<= ~2 s). */
export function sellingClosedNow(db: Db, desk: DeskRuntime): ClosedReason[] {
  return [...gapReasons(desk), ...lastBroken(db, desk.botId)]
}
