import { sql } from 'kysely'
import type { Db } from '../db/database'
import { PRIORITY_NORMAL, PRIORITY_URGENT } from '../telegram/budget'
import type { Item } from './messages.repository'

/**
 * Priorities within a staff group's budget (README "Telegram's limits"): what the experts must see first goes
 * first - a client's first message of a new question and SLA reminders/breaches; further clarifications, cards,
 * summaries and notes wait for them. Per-consultation order is never changed: a priority only decides which lane's
 * head goes next (src/telegram/budget.ts's waiting room), never an item's place in its lane.
 */
export async function itemPriority(db: Db, item: Item): Promise<number> {
  if (item.direction !== 'in') return PRIORITY_NORMAL
  if (item.dedupe_key?.startsWith('sla:')) return PRIORITY_URGENT
  if (item.chat_id === null || (item.kind !== 'copy' && item.kind !== 'text')) return PRIORITY_NORMAL
  return (await startsQuestion(db, item)) ? PRIORITY_URGENT : PRIORITY_NORMAL
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
