import type { Api } from 'grammy'
import type { DeskRuntime } from '../config/load'
import type { Deps } from '../deps'
import { errorSummary } from '../jobs/jobs'
import type { Readiness } from '../readiness'
import { CLAIM_TTL_HOURS, ensureOwnerClaim } from './claim'
import { deepLink } from './codes'
import { closedSummary, sellingClosed } from './gate'
import { inspectGroup, recordGroupFacts } from './groups'
import { rememberBroken } from './last-look'
import { deskAdmins } from './staff-doc'

/**
 * What a bot process does for the set-up at start (issue 24), outside any transaction:
 * - a desk nobody runs yet (no owner, no admins) gets its owner link printed, in the log and on stdout;
 * - every staff group the desk's settings name is looked at once (getChat, getChatMember), as if the bot had just
 *   been added: a broken one tells the owner and admins and stops selling, like a my_chat_member would.
 * A Telegram error here is logged and the start goes on (the next my_chat_member or start looks again).
 */
export async function setUpAtStart(
  deps: Deps,
  api: Api,
  desk: DeskRuntime,
  botUsername: string,
): Promise<void> {
  const log = deps.log.child({ desk: desk.slug })
  if (deskAdmins(desk).length === 0) {
    const claim = await ensureOwnerClaim(deps.db, desk.botId)
    const link = deepLink(botUsername, claim.code)
    log.info({ link, expires_at: claim.expiresAt }, 'the desk has no owner: open the link to claim it')
    process.stdout.write(
      `\n  Desk "${desk.slug}" has no owner yet. Open this link in Telegram to become its owner ` +
        `(single use, valid ${CLAIM_TTL_HOURS} h, until ${claim.expiresAt.toISOString()}):\n\n    https://${link}\n\n`,
    )
  }
  await checkDeskGroups(deps, api, desk)
}

/**
 * One look at each staff group the desk's settings name (at start, and every few minutes from the
 * setup.groups-check job: Telegram sends no update when Topics are turned off in a group).
 */
export async function checkDeskGroups(deps: Deps, api: Api, desk: DeskRuntime): Promise<void> {
  const log = deps.log.child({ desk: desk.slug })
  const groups = [
    ...(desk.staffChatId !== undefined && desk.staffChatId !== null ? [desk.staffChatId] : []),
    ...(desk.staffGroups ?? []).map((g) => g.chatId),
  ]
  for (const chatId of new Set(groups)) {
    try {
      const facts = await inspectGroup(api, desk.botId, chatId)
      await recordGroupFacts(deps, desk, facts)
      if (facts.problems.length)
        log.warn({ chat_id: chatId, problems: facts.problems }, 'staff group not usable')
    } catch (err) {
      log.warn({ chat_id: chatId, err: errorSummary(err) }, 'staff group check failed')
    }
  }
}

/**
 * Keeps this process's /health note of each desk that sells nothing now (why), every two seconds: the reasons live
 * in PostgreSQL and in the desk's settings, so every process shows the same. A failed read leaves the note as is.
 */
export function watchSelling(deps: Deps, desks: () => DeskRuntime[], readiness: Readiness): () => void {
  let stopped = false
  const tick = async () => {
    for (const d of desks()) {
      try {
        const reasons = await sellingClosed(deps.db, deps.desk(d.botId))
        rememberBroken(deps.db, d.botId, reasons)
        readiness.note(
          `desk:${d.slug}`,
          reasons.length ? `not selling: ${closedSummary(reasons)}` : undefined,
        )
      } catch {
        // the database watch reports the outage
      }
    }
  }
  void tick()
  const timer = setInterval(() => {
    if (!stopped) void tick()
  }, 2000)
  timer.unref()
  return () => {
    stopped = true
    clearInterval(timer)
  }
}
