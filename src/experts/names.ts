import type { DeskRuntime } from '../config/load'
import type { Db, Trx } from '../db/database'
import { profiles } from './experts.repository'

/**
 * The one way staff are named to people (/report, the dashboard, SLA mentions, cards): the name the desk document
 * gives (expertSettings.names), else the Telegram name stored when they last wrote in a staff group
 * (expert_profile.name, rememberStaffName). A person with neither is absent from the map: the caller says what
 * stands in (a role and id in /report, "id N" on cards).
 */
export async function staffNames(
  q: Db | Trx,
  desk: DeskRuntime,
  ids: Iterable<number>,
): Promise<Map<number, string>> {
  const wanted = [...new Set(ids)]
  const out = new Map<number, string>()
  const stored = new Map((await profiles(q, desk.botId, wanted)).map((p) => [p.user_id, p.name]))
  for (const id of wanted) {
    const name = desk.expertSettings.names[String(id)] ?? stored.get(id)
    if (name) out.set(id, name)
  }
  return out
}
