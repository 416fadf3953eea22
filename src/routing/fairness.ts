import { sql } from 'kysely'
import type { DeskRuntime } from '../config/load'
import type { Db } from '../db/database'
import { consultationPlan, deskHasPlanWith } from '../orders/plan-features'
import { PRIORITY_NORMAL, PRIORITY_QUESTION, PRIORITY_URGENT } from '../telegram/budget'
import type { Item } from './messages.repository'

/**
 * Priorities within a staff group's budget (README "Telegram's limits"): what the experts must see first goes
 * first. Three levels, lowest number first:
 *   PRIORITY_URGENT (0): SLA reminders/breaches, and the first message of a new question from a consultation whose
 *     support plan has `prioritySla` (src/orders/plan-features.ts);
 *   PRIORITY_QUESTION (1): the first message of any other new question;
 *   PRIORITY_NORMAL (2): further clarifications, cards, summaries and notes.
 * Per-consultation order is never changed: a priority only decides which lane's head goes next
 * (src/telegram/budget.ts's waiting room), never an item's place in its lane.
 */
export async function itemPriority(db: Db, desk: DeskRuntime, item: Item): Promise<number> {
  if (item.direction !== 'in') return PRIORITY_NORMAL
  if (item.dedupe_key?.startsWith('sla:')) return PRIORITY_URGENT
  if (item.chat_id === null || (item.kind !== 'copy' && item.kind !== 'text')) return PRIORITY_NORMAL
  if (!(await startsQuestion(db, item))) return PRIORITY_NORMAL
  if (!deskHasPlanWith(desk, 'prioritySla', true) || item.consultation_id === null) return PRIORITY_QUESTION
  const plan = await consultationPlan(db, desk, item.consultation_id)
  return plan?.features.prioritySla ? PRIORITY_URGENT : PRIORITY_QUESTION
}

/**
 * A new question: no earlier client message in this consultation since the staff last wrote to the client (or ever),
 * both as of the item's place in the consultation: an answer stored after it (while it waited) does not make it new.
 * An album's parts after the first are part of the same question.
 */
async function startsQuestion(db: Db, item: Item): Promise<boolean> {
  const r = await sql<{ earlier: boolean }>`
    select exists (
      select 1 from desk_message m
        where m.consultation_id = ${item.consultation_id} and m.direction = 'in' and m.chat_id is not null
          and m.kind in ('copy', 'text') and m.id < ${item.id}
          and m.id > coalesce((select max(o.id) from desk_message o
                                where o.consultation_id = ${item.consultation_id} and o.direction = 'out'
                                  and o.id < ${item.id}), 0)
    ) as earlier`.execute(db)
  return !r.rows[0]!.earlier
}
