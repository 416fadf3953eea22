import type { DeskRuntime } from '../config/load'
import type { Db } from '../db/database'
import { everyStaff, isAvailable, staffName } from './availability'
import { loads, profiles } from './experts.repository'

/**
 * /report's owners section: per staff member who owns something or may be given something, their live
 * consultations and open questions now (not the report's range: ownership is a present fact), and the unassigned.
 */
export async function renderOwners(
  db: Db,
  desk: DeskRuntime,
  t: (key: string, p?: Record<string, string | number>) => string,
  at = new Date(),
): Promise<string> {
  const owning = await db
    .selectFrom('expert_assignment')
    .select('expert_id')
    .distinct()
    .where('bot_id', '=', desk.botId)
    .where('ended_at', 'is', null)
    .execute()
  const ids = [...new Set([...everyStaff(desk), ...owning.map((o) => o.expert_id)])]
  const load = await loads(db, desk.botId, ids)
  const ps = new Map((await profiles(db, desk.botId, ids)).map((p) => [p.user_id, p]))
  const lines = [t('report-owners-title')]
  for (const id of ids) {
    const l = load.get(id)!
    if (l.consultations === 0 && l.open === 0 && !desk.staff.experts.includes(id)) continue
    lines.push(
      `• ${t('report-owners-line', {
        name: staffName(desk, id, ps.get(id)),
        consultations: l.consultations,
        open: l.open,
        away: isAvailable(desk, id, ps.get(id), at) ? '' : ` ${t('report-owners-away')}`,
      })}`,
    )
  }
  const unassigned = await db
    .selectFrom('consultation as c')
    .leftJoin('expert_assignment as a', (j) =>
      j.onRef('a.consultation_id', '=', 'c.id').on('a.ended_at', 'is', null),
    )
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('c.bot_id', '=', desk.botId)
    .where('c.state', '=', 'active')
    .where('a.id', 'is', null)
    .executeTakeFirstOrThrow()
  if (Number(unassigned.n) > 0)
    lines.push(`• ${t('report-owners-unassigned', { count: Number(unassigned.n) })}`)
  return lines.join('\n')
}
