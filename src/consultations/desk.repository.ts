import { type Selectable, sql } from 'kysely'
import type { Db, Trx } from '../db/database'
import type { DeskConsultationTables } from './desk.tables'

/** All Kysely code for the desk's side of consultations: the admission reads, desk_consultation, appeals. */

export type Appeal = Selectable<DeskConsultationTables['desk_appeal']>
export type DeskConsultation = Selectable<DeskConsultationTables['desk_consultation']>
type Q = Db | Trx

/** A consultation with the order fields the desk needs (tariff snapshot). */
export interface DeskConsultationView {
  id: number
  bot_id: number
  user_id: number
  order_id: number
  state: 'waiting' | 'active' | 'closed' | 'revoked'
  starts_at: Date | null
  access_until: Date | null
  closed_at: Date | null
  revoked_at: Date | null
  refund_policy: 'deliver' | 'stop' | null
  sla_minutes: number
  appeals: number
  /** AI drafts included per consultation (0 = drafting not in the tariff). */
  drafts: number
  title: string
  tariff_code: string
  price_stars: number
  start_mode: 'immediate' | 'scheduled' | 'on_request'
  slot_start: Date | null
  needs_start_date: boolean
  lang: string
}

const VIEW_COLUMNS = sql`c.id, c.bot_id, c.user_id, c.order_id, c.state, c.starts_at, c.access_until, c.closed_at,
  c.revoked_at, c.refund_policy, o.sla_minutes, o.appeals, o.drafts, o.title, o.tariff_code, o.price_stars, o.start_mode,
  o.slot_start, o.needs_start_date, o.lang`

/** Locks a consultation by id (same order of locks as the admission: the consultation row only). */
export async function lockConsultationView(trx: Trx, consultationId: number) {
  const r = await sql<DeskConsultationView>`
    select ${VIEW_COLUMNS}
      from consultation c join orders o on o.id = c.order_id
      where c.id = ${consultationId}
      for update of c`.execute(trx)
  return r.rows[0]
}

export async function consultationView(q: Q, consultationId: number) {
  const r = await sql<DeskConsultationView>`
    select ${VIEW_COLUMNS} from consultation c join orders o on o.id = c.order_id where c.id = ${consultationId}`.execute(
    q,
  )
  return r.rows[0]
}

/** What desk_admit (migration 2026-11-30T0410) decided, with the numbers it decided on. */
export interface AdmitRow {
  /**
   * none: no consultation; duplicate; refused (o_reason); accepted (stored, joins the open appeal); open (the
   * caller finishes under the lock); retry (fast mode only: nothing done, run the full admission).
   */
  o_outcome: 'none' | 'duplicate' | 'refused' | 'accepted' | 'open' | 'retry'
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
}

/**
 * Locks the client's consultation, reads the database clock after the lock, checks access, and stores the message
 * when it joins an open appeal: one round trip (see migrations 2026-11-30T0410 and T0420 for the rule and why it
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
  },
): Promise<AdmitRow> {
  const r = await sql<AdmitRow>`select * from desk_admit(${a.botId}, ${a.userId}, ${a.chatId}, ${a.messageId},
    ${a.mediaGroupId}, ${a.replyTo}, ${a.type}, ${a.content}::jsonb, ${fast})`.execute(q)
  return r.rows[0]!
}

/** The database clock, for checks that must use the instant after a lock was granted. */
export async function clockNow(q: Q): Promise<Date> {
  const r = await sql<{ now: Date }>`select clock_timestamp() as now`.execute(q)
  return r.rows[0]!.now
}

/**
 * The lock order every writer of desk rows follows: the consultation row first, then desk_consultation, desk_message
 * and job rows. The admission holds the consultation FOR UPDATE and then takes desk_consultation; anything that
 * would take desk_consultation (or insert a row whose foreign key key-share-locks the consultation) before the
 * consultation could deadlock with it. KEY SHARE is enough: it waits for an admission in progress without holding
 * anything, and does not block other key-share holders.
 */
export async function lockConsultationKey(trx: Trx, consultationId: number): Promise<void> {
  await sql`select 1 from consultation where id = ${consultationId} for key share`.execute(trx)
}

export async function ensureDeskConsultation(
  trx: Trx,
  c: { id: number; bot_id: number; user_id: number },
  topicWanted = false,
): Promise<void> {
  await lockConsultationKey(trx, c.id)
  await trx
    .insertInto('desk_consultation')
    .values({ consultation_id: c.id, bot_id: c.bot_id, user_id: c.user_id, topic_wanted: topicWanted })
    .onConflict((oc) =>
      topicWanted ? oc.column('consultation_id').doUpdateSet({ topic_wanted: true }) : oc.doNothing(),
    )
    .execute()
}

export function findDeskConsultation(q: Q, consultationId: number) {
  return q
    .selectFrom('desk_consultation')
    .selectAll()
    .where('consultation_id', '=', consultationId)
    .executeTakeFirst()
}

export async function setDeskFlags(
  q: Q,
  consultationId: number,
  set: Partial<Pick<DeskConsultation, 'card_dirty' | 'title_dirty' | 'topic_wanted'>>,
): Promise<void> {
  await q.updateTable('desk_consultation').set(set).where('consultation_id', '=', consultationId).execute()
}

/**
 * Clears a work flag before the work is done (and the lane sets it again if the work fails), so a request that
 * arrives while the work runs sets it anew and is not lost.
 */
export async function clearDeskFlag(q: Q, consultationId: number, flag: 'card_dirty' | 'title_dirty') {
  await q
    .updateTable('desk_consultation')
    .set({ [flag]: false })
    .where('consultation_id', '=', consultationId)
    .execute()
}

/**
 * A topic-lane job starts: the queued job is being served. Waits for an admission holding the row (it may just have
 * relied on the flag), so whatever that admission stored is committed before the lane looks for work.
 */
export async function clearInQueued(q: Q, consultationId: number): Promise<void> {
  await q
    .updateTable('desk_consultation')
    .set({ in_queued: false })
    .where('consultation_id', '=', consultationId)
    .where('in_queued', '=', true)
    .execute()
}

export async function countTopicCreated(q: Q, consultationId: number): Promise<number> {
  const r = await q
    .updateTable('desk_consultation')
    .set({ topics_created: sql`topics_created + 1` })
    .where('consultation_id', '=', consultationId)
    .returning('topics_created')
    .executeTakeFirst()
  return r?.topics_created ?? 1
}

/** Records a 403 once; true when this call recorded it (the staff are told only then). */
export async function markClientBlocked(q: Q, consultationId: number): Promise<Date | undefined> {
  const r = await q
    .updateTable('desk_consultation')
    .set({ client_blocked_at: sql`now()` })
    .where('consultation_id', '=', consultationId)
    .where('client_blocked_at', 'is', null)
    .returning('client_blocked_at')
    .executeTakeFirst()
  return r?.client_blocked_at ?? undefined
}

export async function clearClientBlocked(trx: Trx, consultationId: number): Promise<void> {
  await trx
    .updateTable('desk_consultation')
    .set({ client_blocked_at: null })
    .where('consultation_id', '=', consultationId)
    .execute()
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

export function listAppeals(q: Q, consultationId: number) {
  return q
    .selectFrom('desk_appeal')
    .selectAll()
    .where('consultation_id', '=', consultationId)
    .orderBy('number')
    .execute()
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
