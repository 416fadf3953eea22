import { sql } from 'kysely'
import type { Db } from '../../src/db/database'
import { BOSS_SCHEMA } from '../../src/jobs/jobs'

/** An hour and a minute in ms, the steps tests move a consultation forward by. */
export const H = 3600_000
export const MIN = 60_000

/**
 * Moves one consultation forward in time without sleeping: every stored instant of it (window, ledger periods,
 * appeals, messages, what the lifecycle jobs recorded) and the start of its scheduled jobs move back by `ms`, as if
 * that much time had passed for it. The database clock stays the source of truth: admissions and jobs still decide
 * on now(); only the consultation's own instants move, consistently, so the real jobs fire by themselves when their
 * (shifted) instant has come. Used by the lifecycle/SLA tests and by `npm run demo`.
 */
export async function fastForward(db: Db, consultationId: number, ms: number): Promise<void> {
  const d = sql`make_interval(secs => ${ms / 1000})`
  await db.transaction().execute(async (trx) => {
    await sql`update consultation set starts_at = starts_at - ${d}, access_until = access_until - ${d},
      closed_at = closed_at - ${d}, created_at = created_at - ${d} where id = ${consultationId}`.execute(trx)
    await sql`update ledger_account set period_start = period_start - ${d}, period_end = period_end - ${d}
      where scope = 'consultation' and subject = ${String(consultationId)}`.execute(trx)
    await sql`update desk_appeal set accepted_at = accepted_at - ${d}, due_at = due_at - ${d},
      first_response_at = first_response_at - ${d}, breached_at = breached_at - ${d},
      created_at = created_at - ${d} where consultation_id = ${consultationId}`.execute(trx)
    await sql`update desk_message set accepted_at = accepted_at - ${d}, created_at = created_at - ${d},
      sent_at = sent_at - ${d} where consultation_id = ${consultationId}`.execute(trx)
    await sql`update appeal_sla set reminded_at = reminded_at - ${d}, refund_flagged_at = refund_flagged_at - ${d}
      where consultation_id = ${consultationId}`.execute(trx)
    await sql`update consultation_lifecycle set closing_soon_for = closing_soon_for - ${d},
      window_closed_at = window_closed_at - ${d} where consultation_id = ${consultationId}`.execute(trx)
    // Jobs not started yet that concern this consultation or one of its appeals (their payload names them).
    await sql`update ${sql.id(BOSS_SCHEMA, 'job')} set start_after = start_after - ${d}
      where state in ('created', 'retry')
        and (data->>'consultationId' = ${String(consultationId)}
             or data->>'appealId' in (select id::text from desk_appeal where consultation_id = ${consultationId}))`.execute(
      trx,
    )
  })
}

/** The jobs of a queue that concern a consultation (by payload), e.g. to assert one job per instant. */
export async function jobsFor(db: Db, queue: string, consultationId: number) {
  const r = await sql<{ id: string; state: string; start_after: Date; data: Record<string, unknown> }>`
    select id, state, start_after, data from ${sql.id(BOSS_SCHEMA, 'job')}
      where name = ${queue}
        and (data->>'consultationId' = ${String(consultationId)}
             or data->>'appealId' in (select id::text from desk_appeal where consultation_id = ${consultationId}))
      order by created_on`.execute(db)
  return r.rows
}
