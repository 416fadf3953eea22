import { sql } from 'kysely'
import type { Deps } from '../deps'
import { consultationView } from '../orders/orders.repository'
import { runLane } from './delivery'
import { ensureDeskConsultation } from './desk-consultation.repository'
import { wakeLaneLater } from './routing.jobs'
import type { Direction } from './routing.tables'

/**
 * The desk's job handlers besides the lanes themselves (src/workers.ts registers them): a consultation that starts
 * gets its topic and card right away, through the same lane as its messages, so the two can never create two
 * topics; and the sweeper that gives lanes left with work a job again.
 */

/** consultation.activated: the topic is wanted, and the topic lane creates it with its card. */
export async function openTopic(deps: Deps, consultationId: number): Promise<void> {
  const v = await consultationView(deps.db, consultationId)
  if (!v) return
  await deps.db.transaction().execute((trx) => ensureDeskConsultation(trx, v, true))
  await runLane(deps, consultationId, 'in')
}

/** Lanes left with work and no job (a job dead-lettered after long trouble) get one again. */
export async function sweepLanes(deps: Deps, olderThanSeconds = 30): Promise<number> {
  const r = await sql<{ consultation_id: number; direction: Direction }>`
    select distinct m.consultation_id, m.direction
      from desk_message m join desk_consultation dc on dc.consultation_id = m.consultation_id
      where m.state = 'pending' and m.created_at < now() - make_interval(secs => ${olderThanSeconds})
        and (dc.in_lease_until is null or dc.in_lease_until < now() or m.direction = 'out')
        and (dc.out_lease_until is null or dc.out_lease_until < now() or m.direction = 'in')
    union
    select dc.consultation_id, 'in'::text
      from desk_consultation dc join consultation c on c.id = dc.consultation_id
      where c.state = 'active' and dc.created_at < now() - make_interval(secs => ${olderThanSeconds})
        and (dc.card_dirty or dc.title_dirty or (dc.topic_wanted and not exists (
          select 1 from desk_route r where r.consultation_id = dc.consultation_id and r.state = 'active'))
          or exists (
            select 1 from desk_route r where r.consultation_id = dc.consultation_id and r.state = 'active'
              and r.card_pinned_message_id is distinct from r.card_message_id))
        and (dc.in_lease_until is null or dc.in_lease_until < now())
    limit 500`.execute(deps.db)
  for (const row of r.rows) await wakeLaneLater(deps.jobs, deps.db, row.consultation_id, row.direction)
  return r.rows.length
}
