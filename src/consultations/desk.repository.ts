import { type Selectable, sql } from 'kysely'
import type { Db, Trx } from '../db/database'
import type { DeskConsultationView } from '../orders/orders.repository'
import type { DeskConsultationTables } from './desk.tables'

/** All Kysely code of the desk's rules: the admission call and the appeals (the lanes' state is in src/routing). */

export type Appeal = Selectable<DeskConsultationTables['desk_appeal']>
type Q = Db | Trx

/** What desk_admit (src/consultations/sql/desk_admit.sql) decided, with the numbers it decided on. */
export interface AdmitRow {
  /**
   * none: no consultation; duplicate; refused (o_reason); accepted (stored, joins the open appeal); open (the
   * caller finishes under the lock); retry (fast mode only: nothing done, run the full admission); choose (several
   * live consultations and nothing names one: the caller holds the message and asks the client); behind (messages
   * are held for a choice no longer there: the caller holds this one behind them and has them all settled).
   */
  o_outcome: 'none' | 'duplicate' | 'refused' | 'accepted' | 'open' | 'retry' | 'choose' | 'behind'
  o_reason: 'banned' | 'refunded' | 'closed' | 'not_started' | 'window_closed' | null
  o_consultation_id: number | null
  o_item_id: number | null
  o_open_appeal_id: number | null
  o_last_appeal_number: number | null
  o_checked_at: Date | null
  o_state: DeskConsultationView['state'] | null
  o_starts_at: Date | null
  o_access_until: Date | null
  o_closed_at: Date | null
  o_slot_start: Date | null
  o_start_mode: DeskConsultationView['start_mode'] | null
  o_needs_start_date: boolean | null
  o_sla_minutes: number | null
  o_client_blocked_at: Date | null
  o_desk_row: boolean | null
  /** accepted: true when the caller must write the lane's job (none is queued). */
  o_wake: boolean | null
  /** The client's live consultations (window holding now): two or more and no target ends in `choose`. */
  o_live: number | null
}

/**
 * Locks the client's consultation, reads the database clock after the lock, checks access, and stores the message
 * when it joins an open appeal: one round trip (see src/consultations/sql/desk_admit.sql for the rule and why it
 * is a function). In a transaction (fast = false), outcome `open` leaves the lock held for the caller to complete
 * the admission. Fast mode runs on its own (the statement is the transaction) and does only the common case.
 */
export async function callAdmit(
  q: Q,
  fast: boolean,
  a: {
    botId: number
    userId: number
    chatId: number
    messageId: number
    mediaGroupId: string | null
    replyTo: number | null
    type: string
    content: string
    /** The topic of the client's private chat it was written in (Bot API 9.3+), if any. */
    thread: number | null
    /** The consultation it goes to, chosen by the client (a held message released). */
    target: number | null
  },
): Promise<AdmitRow> {
  const r = await sql<AdmitRow>`select * from desk_admit(${a.botId}, ${a.userId}, ${a.chatId}, ${a.messageId},
    ${a.mediaGroupId}, ${a.replyTo}, ${a.type}, ${a.content}::jsonb, ${fast}, ${a.thread}::bigint,
    ${a.target}::bigint)`.execute(q)
  return r.rows[0]!
}

// ---------------------------------------------------------------------------------------------------------------
// Appeals

export async function insertAppeal(
  trx: Trx,
  a: {
    botId: number
    consultationId: number
    number: number
    requestId: string
    openedByMessageId: number
    acceptedAt: Date
    slaMinutes: number
    dueAt: Date
  },
): Promise<Appeal> {
  return trx
    .insertInto('desk_appeal')
    .values({
      bot_id: a.botId,
      consultation_id: a.consultationId,
      number: a.number,
      request_id: a.requestId,
      opened_by_message_id: a.openedByMessageId,
      accepted_at: a.acceptedAt,
      sla_minutes: a.slaMinutes,
      due_at: a.dueAt,
    })
    .returningAll()
    .executeTakeFirstOrThrow()
}

export function openAppeal(q: Q, consultationId: number) {
  return q
    .selectFrom('desk_appeal')
    .selectAll()
    .where('consultation_id', '=', consultationId)
    .where('state', '=', 'open')
    .executeTakeFirst()
}

export async function answerAppeal(
  trx: Trx,
  id: number,
  a: {
    at: Date
    by: number
    businessMinutes: number
    inTime: boolean
    ledgerOutcome: string
  },
): Promise<void> {
  await trx
    .updateTable('desk_appeal')
    .set({
      state: 'answered',
      first_response_at: a.at,
      answered_by: a.by,
      response_business_minutes: a.businessMinutes,
      in_time: a.inTime,
      ledger_outcome: a.ledgerOutcome,
    })
    .where('id', '=', id)
    .where('state', '=', 'open')
    .execute()
}
