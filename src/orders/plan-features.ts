import type { DeskRuntime } from '../config/load'
import type { PlanConfig } from '../config/schema'
import type { Db, Trx } from '../db/database'

/**
 * What a support plan's `features` change for its consultation (issue 22), in one place for every floor that reads
 * them (the admission, the staff group's waiting room, the transcript; the plan card states the same rules):
 *
 * - `prioritySla`: the plan's questions get priority - a new question's first message goes to the staff group with
 *   the urgent items (src/routing/fairness.ts), and its SLA is half the plan's `slaBusinessHours`
 *   (PRIORITY_SLA_SHARE, in business time, whole minutes, at least one), fixed on the question when it is accepted.
 * - `transcriptExport`: /transcript (the transcript file of a finished consultation) is refused with the reason when
 *   the plan does not include it. /mydata, the client's legal right to their data, is never gated by a plan.
 * - `attachments`: read by the admission (src/consultations/admission.ts).
 *
 * The plan is the subscription's current one as the config describes it now (like `attachments`); a plan taken out
 * of the config has none of these extras (standard SLA, no priority, transcript allowed).
 */
export const PRIORITY_SLA_SHARE = 0.5

/** The SLA of one question of the plan, in business minutes. */
export function planSlaMinutes(p: Pick<PlanConfig, 'slaBusinessHours' | 'features'>): number {
  const standard = Math.round(p.slaBusinessHours * 60)
  return p.features.prioritySla ? Math.max(1, Math.round(standard * PRIORITY_SLA_SHARE)) : standard
}

/** The plan of a consultation that serves a support plan (undefined for a one-off consultation). */
export async function consultationPlan(
  q: Db | Trx,
  desk: DeskRuntime,
  consultationId: number,
): Promise<PlanConfig | undefined> {
  if ((desk.plans?.length ?? 0) === 0) return undefined
  const s = await q
    .selectFrom('subscription')
    .select('plan_code')
    .where('consultation_id', '=', consultationId)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst()
  return s ? desk.plans.find((p) => p.code === s.plan_code) : undefined
}

/** Does any plan of the desk have this feature (a cheap check before reading a consultation's plan)? */
export function deskHasPlanWith(
  desk: DeskRuntime,
  f: 'prioritySla' | 'transcriptExport',
  value: boolean,
): boolean {
  return (desk.plans ?? []).some((p) => p.features[f] === value)
}
