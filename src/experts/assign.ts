import { sql } from 'kysely'
import type { DeskRuntime } from '../config/load'
import { staffGroupsOf } from '../config/staff-groups'
import { clockNow } from '../db/clock'
import type { Trx } from '../db/database'
import type { Outbox } from '../jobs/jobs'
import { findTariff } from '../orders/tariffs'
import { chooseStaffGroup } from '../routing/staff-groups'
import { notify } from '../telegram/notify'
import { assignable, isAvailable, staffName } from './availability'
import { loads, markAssigned, profiles, recordAssignment } from './experts.repository'
import type { AssignmentReason } from './experts.tables'

/**
 * The owner of a consultation, chosen at activation: the tariff's `expert` when the tariff names one (the client
 * bought that person), else the least loaded available expert: fewest open questions, then fewest live
 * consultations, then the one given a consultation longest ago (round robin on ties), then config order.
 *
 * The choice runs under a transaction-level advisory lock per desk, held to commit: two activations at once choose
 * one after the other, and the second sees the first's assignment (READ COMMITTED: each statement a new snapshot).
 * Every activation takes the order, then the consultation, then this lock, so it cannot deadlock with another.
 */

export interface OwnerChoice {
  expertId: number
  reason: Extract<AssignmentReason, 'tariff' | 'least_loaded'>
}

/** Held to commit: the desk's next activation waits here and then sees this one's owner and group. */
async function lockAssignment(trx: Trx, desk: DeskRuntime): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext(${`experts:assign:${desk.botId}`}))`.execute(trx)
}

/**
 * Chooses (does not record) the owner of a consultation of `tariffCode`; undefined when nobody is available.
 * Takes the desk's assignment lock (unless the tariff names the expert): call it in the transaction that records
 * the choice.
 */
export async function chooseOwner(
  trx: Trx,
  desk: DeskRuntime,
  input: { tariffCode: string; at?: Date },
): Promise<OwnerChoice | undefined> {
  const named = findTariff(desk, input.tariffCode)?.expert
  if (named !== undefined) return { expertId: named, reason: 'tariff' }
  await lockAssignment(trx, desk)
  const at = input.at ?? (await clockNow(trx))
  const candidates = assignable(desk)
  const ps = new Map((await profiles(trx, desk.botId, candidates)).map((p) => [p.user_id, p]))
  const available = candidates.filter((id) => isAvailable(desk, id, ps.get(id), at))
  if (available.length === 0) return undefined
  const load = await loads(trx, desk.botId, available)
  const last = (id: number) => ps.get(id)?.last_assigned_at?.getTime() ?? Number.NEGATIVE_INFINITY
  const ranked = available
    .map((id, order) => ({ id, order, ...load.get(id)! }))
    .sort(
      (a, b) =>
        a.open - b.open || a.consultations - b.consultations || last(a.id) - last(b.id) || a.order - b.order,
    )
  return { expertId: ranked[0]!.id, reason: 'least_loaded' }
}

/**
 * Activation's step: chooses and records the owner, marks the round robin, and tells the owner in private (through
 * the outbox; an owner who never started the bot is recorded as blocked, quietly). Returns the owner, or undefined
 * when nobody was available (the consultation stays unassigned; reminders go to the admins).
 */
export async function assignAtActivation(
  trx: Trx,
  outbox: Outbox,
  desk: DeskRuntime,
  c: { id: number; tariffCode: string; title: string },
): Promise<number | undefined> {
  // Several staff groups: the group is chosen under the same lock as the owner, so two activations at once see
  // each other's group (chooseOwner takes it again: a transaction's advisory locks are reentrant).
  if (staffGroupsOf(desk).length > 1) await lockAssignment(trx, desk)
  const choice = await chooseOwner(trx, desk, { tariffCode: c.tariffCode })
  const group = await chooseStaffGroup(trx, desk, choice?.expertId, c.id)
  await trx.updateTable('consultation').set({ staff_chat_id: group }).where('id', '=', c.id).execute()
  if (!choice) return undefined
  await recordAssignment(trx, {
    botId: desk.botId,
    consultationId: c.id,
    expertId: choice.expertId,
    by: null,
    reason: choice.reason,
  })
  const p = await markAssigned(trx, desk.botId, choice.expertId)
  await notify(outbox, {
    botId: desk.botId,
    chatId: choice.expertId,
    lang: desk.defaultLanguage,
    key: 'experts-owner-assigned',
    params: { id: String(c.id), title: c.title, name: staffName(desk, choice.expertId, p) },
    dedupeKey: `experts:owner:${c.id}:${choice.expertId}:activation`,
  })
  return choice.expertId
}
