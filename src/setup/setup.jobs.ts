import type { Deps } from '../deps'
import { defineQueue } from '../jobs/queue'
import { checkDeskGroups } from './startup'

/**
 * Every few minutes, one look at every desk's staff groups (src/setup/groups.ts): Telegram tells the bot when its
 * own rights change or it is removed (my_chat_member), but not when someone turns Topics off in a group. A look
 * that finds nothing changed writes nothing and tells nobody. No retries: the next run looks again.
 */
export const groupsCheckQueue = defineQueue<Record<string, never>>('setup.groups-check', {
  retryLimit: 0,
  expireInSeconds: 300,
})
export const GROUPS_CHECK_CRON = '*/5 * * * *'

export async function runGroupsCheck(deps: Deps): Promise<void> {
  for (const d of deps.config.desks) await checkDeskGroups(deps, deps.api(d.botId), deps.desk(d.botId))
}
