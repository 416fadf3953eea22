import type { DeskRuntime } from '../config/load'
import type { Db } from '../db/database'

/**
 * The consultation's owner as its topic name and card show it. src/experts assigns owners (a floor above the lanes);
 * the lanes only read its rows to draw the topic: the config's name, the name Telegram gave us, else the id.
 */
export async function ownerLabel(
  db: Db,
  desk: DeskRuntime,
  consultationId: number,
): Promise<string | undefined> {
  const r = await db
    .selectFrom('expert_assignment as a')
    .leftJoin('expert_profile as p', (j) =>
      j.onRef('p.bot_id', '=', 'a.bot_id').onRef('p.user_id', '=', 'a.expert_id'),
    )
    .select(['a.expert_id', 'p.name'])
    .where('a.consultation_id', '=', consultationId)
    .where('a.ended_at', 'is', null)
    .executeTakeFirst()
  if (!r) return undefined
  return desk.expertSettings.names[String(r.expert_id)] ?? r.name ?? `id ${r.expert_id}`
}
