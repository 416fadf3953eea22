import { type RawBuilder, sql } from 'kysely'
import type { Db } from '../db/database'
import type { ConsultationState } from '../orders/orders.tables'
import { cut } from '../text'

/**
 * The dashboard's reads that /report does not make: lists, one consultation's rows, full-text search (CSV rows: dashboard.export.repository.ts).
 * All of one desk (bot_id); an expert's view is narrowed to their consultations (`mine`): those they own now
 * (expert_assignment, src/experts: assigned, answered or not) and those with a question they answered.
 */

/**
 * The text of a stored message as the full-text index sees it. Must stay character for character the expression of
 * the index desk_message_fts (migrations/2026-12-01T0300_dashboard.ts), or the planner cannot use it.
 */
export const MESSAGE_TSV = sql`(to_tsvector('russian'::regconfig, coalesce(m.content->>'text', m.content->>'caption', ''))
      || to_tsvector('english'::regconfig, coalesce(m.content->>'text', m.content->>'caption', '')))`

export function tsQuery(text: string): RawBuilder<unknown> {
  return sql`(websearch_to_tsquery('russian'::regconfig, ${text}) || websearch_to_tsquery('english'::regconfig, ${text}))`
}

export interface ConsultationFilter {
  botId: number
  state?: ConsultationState | undefined
  tariff?: string | undefined
  /** Consultations with a question this staff member answered. */
  expert?: number | undefined
  /** The viewer is an expert: only their consultations. */
  mine?: number | undefined
  from?: Date | undefined
  to?: Date | undefined
  /** A number (consultation or client id), @username, a name, or words of the conversation. */
  q?: string | undefined
  /** Keyset page: consultations with a smaller id. */
  before?: number | undefined
  limit: number
}

export interface ConsultationRow {
  id: number
  state: ConsultationState
  userId: number
  firstName: string | null
  lastName: string | null
  username: string | null
  tariffCode: string
  title: string
  priceStars: number
  appealsTotal: number
  appealsUsed: number
  createdAt: Date
  startsAt: Date | null
  accessUntil: Date | null
  /** Staff who answered its questions. */
  experts: number[]
  /** With a text search: the best matching message, matched words between « and ». */
  match: string | null
}

/** A LIKE pattern matching `text` literally: \, % and _ escaped with LIKE's default escape character. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (ch) => `\\${ch}`)
}

export async function listConsultations(db: Db, f: ConsultationFilter): Promise<ConsultationRow[]> {
  const where: RawBuilder<unknown>[] = [sql`c.bot_id = ${f.botId}`]
  if (f.state) where.push(sql`c.state = ${f.state}`)
  if (f.tariff) where.push(sql`o.tariff_code = ${f.tariff}`)
  if (f.expert !== undefined)
    where.push(sql`exists (select 1 from desk_appeal a
        where a.bot_id = ${f.botId} and a.answered_by = ${f.expert} and a.consultation_id = c.id)`)
  if (f.mine !== undefined) where.push(sql`c.id in (${mineOf(f.botId, f.mine)})`)
  if (f.from) where.push(sql`c.created_at >= ${f.from}`)
  if (f.to) where.push(sql`c.created_at < ${f.to}`)
  if (f.before !== undefined) where.push(sql`c.id < ${f.before}`)

  const q = f.q?.trim() ?? ''
  let textQuery: string | undefined
  if (/^\d{1,15}$/.test(q)) where.push(sql`(c.id = ${Number(q)} or c.user_id = ${Number(q)})`)
  // @username: that username, case-insensitively ("_" is a letter of it, not LIKE's any-character).
  else if (/^@\w{1,64}$/.test(q)) where.push(sql`cl.username ilike ${escapeLike(q.slice(1))}`)
  else if (q) {
    textQuery = cut(q, 200)
    const like = `%${escapeLike(textQuery)}%`
    // The candidates first (clients by name, messages by the full-text index), then their consultations: an OR
    // over the joined rows would test every consultation of the desk.
    where.push(sql`c.id in (
      select c2.id from consultation c2
        where c2.bot_id = ${f.botId} and c2.user_id in (
          select user_id from client
          where bot_id = ${f.botId} and (first_name ilike ${like} or last_name ilike ${like} or username ilike ${like}))
      union
      select m.consultation_id from desk_message m
        where m.bot_id = ${f.botId} and ${MESSAGE_TSV} @@ ${tsQuery(textQuery)})`)
  }
  const match = textQuery
    ? sql`(select ts_headline('russian'::regconfig, coalesce(m.content->>'text', m.content->>'caption', ''),
            ${tsQuery(textQuery)}, 'StartSel=«, StopSel=», MaxWords=16, MinWords=6')
          from desk_message m
          where m.consultation_id = c.id and ${MESSAGE_TSV} @@ ${tsQuery(textQuery)}
          order by m.id limit 1)`
    : sql`null::text`

  const r = await sql<ConsultationRow>`
    select c.id, c.state, c.user_id as "userId", cl.first_name as "firstName", cl.last_name as "lastName",
      cl.username, o.tariff_code as "tariffCode", o.title, o.price_stars as "priceStars",
      o.appeals as "appealsTotal",
      (select count(*)::int from desk_appeal a where a.consultation_id = c.id) as "appealsUsed",
      c.created_at as "createdAt", c.starts_at as "startsAt", c.access_until as "accessUntil",
      coalesce((select array_agg(distinct a.answered_by) from desk_appeal a
                where a.consultation_id = c.id and a.answered_by is not null), '{}') as experts,
      ${match} as match
    from consultation c
      join orders o on o.id = c.order_id
      left join client cl on cl.bot_id = c.bot_id and cl.user_id = c.user_id
    where ${sql.join(where, sql` and `)}
    order by c.id desc
    limit ${f.limit}`.execute(db)
  return r.rows.map((row) => ({ ...row, experts: (row.experts ?? []).map(Number) }))
}

/** The ids of an expert's consultations: owned now, or with a question they answered. */
function mineOf(botId: number, staffId: number) {
  return sql`select ea.consultation_id from expert_assignment ea
      where ea.bot_id = ${botId} and ea.expert_id = ${staffId} and ea.ended_at is null
    union
    select a.consultation_id from desk_appeal a where a.bot_id = ${botId} and a.answered_by = ${staffId}`
}

/** Whether the consultation is one of this expert's: they own it now, or answered a question of it. */
export async function isExpertsConsultation(
  db: Db,
  botId: number,
  consultationId: number,
  staffId: number,
): Promise<boolean> {
  const r = await sql`select 1 where ${consultationId}::bigint in (${mineOf(botId, staffId)})`.execute(db)
  return r.rows.length > 0
}

export interface ConsultationCard {
  id: number
  botId: number
  orderId: number
  state: ConsultationState
  userId: number
  firstName: string | null
  lastName: string | null
  username: string | null
  languageCode: string | null
  tariffCode: string
  title: string
  priceStars: number
  appealsTotal: number
  slaMinutes: number
  windowMinutes: number
  createdAt: Date
  startsAt: Date | null
  accessUntil: Date | null
  closedAt: Date | null
  revokedAt: Date | null
  refundPolicy: string | null
  topicThreadId: number | null
  topicChatId: number | null
}

export async function consultationCard(
  db: Db,
  botId: number,
  consultationId: number,
): Promise<ConsultationCard | undefined> {
  const r = await sql<ConsultationCard>`
    select c.id, c.bot_id as "botId", c.order_id as "orderId", c.state, c.user_id as "userId",
      cl.first_name as "firstName", cl.last_name as "lastName", cl.username, cl.language_code as "languageCode",
      o.tariff_code as "tariffCode", o.title, o.price_stars as "priceStars", o.appeals as "appealsTotal",
      o.sla_minutes as "slaMinutes", o.window_minutes as "windowMinutes",
      c.created_at as "createdAt", c.starts_at as "startsAt", c.access_until as "accessUntil",
      c.closed_at as "closedAt", c.revoked_at as "revokedAt", c.refund_policy as "refundPolicy",
      t.message_thread_id as "topicThreadId", t.support_chat_id as "topicChatId"
    from consultation c
      join orders o on o.id = c.order_id
      left join client cl on cl.bot_id = c.bot_id and cl.user_id = c.user_id
      -- Its topic: the active one, else the last it had (a closed consultation's topic is still there to read).
      left join lateral (
        select r.message_thread_id, r.support_chat_id from desk_route r
        where r.consultation_id = c.id
        order by (r.state = 'active') desc, r.created_at desc limit 1
      ) t on true
    where c.id = ${consultationId} and c.bot_id = ${botId}`.execute(db)
  return r.rows[0]
}

export interface AppealRow {
  id: number
  number: number
  state: string
  acceptedAt: Date
  slaMinutes: number
  dueAt: Date
  firstResponseAt: Date | null
  answeredBy: number | null
  responseBusinessMinutes: number | null
  inTime: boolean | null
  breachedAt: Date | null
}

export async function consultationAppeals(db: Db, consultationId: number): Promise<AppealRow[]> {
  const r = await sql<AppealRow>`
    select id, number, state, accepted_at as "acceptedAt", sla_minutes as "slaMinutes", due_at as "dueAt",
      first_response_at as "firstResponseAt", answered_by as "answeredBy",
      response_business_minutes as "responseBusinessMinutes", in_time as "inTime", breached_at as "breachedAt"
    from desk_appeal where consultation_id = ${consultationId} order by number`.execute(db)
  return r.rows
}

export interface PaymentRow {
  id: number
  createdAt: Date
  userId: number
  firstName: string | null
  lastName: string | null
  username: string | null
  kind: string
  amount: number
  currency: string
  orderId: number | null
  consultationId: number | null
  tariffCode: string | null
  title: string | null
  charge: string
  refundedAt: Date | null
  refundedBy: number | null
  refundSource: string | null
  refundStartedAt: Date | null
  refundError: string | null
  /** What the order bought (consultation, topup, subscription, ...); null for an unmatched payment. */
  orderKind: string | null
  /** A top-up's: the questions or hours it bought (0 otherwise). */
  topupQuestions: number
  topupHours: number
}

const PAYMENT_COLUMNS = sql`p.id, p.created_at as "createdAt", p.user_id as "userId", cl.first_name as "firstName",
  cl.last_name as "lastName", cl.username, p.kind, p.total_amount as amount, p.currency, p.order_id as "orderId",
  c.id as "consultationId", o.tariff_code as "tariffCode", o.title, p.telegram_payment_charge_id as charge,
  p.refunded_at as "refundedAt", p.refunded_by as "refundedBy", p.refund_source as "refundSource",
  p.refund_started_at as "refundStartedAt", p.refund_error as "refundError", o.kind as "orderKind",
  coalesce(o.topup_questions, 0) as "topupQuestions", coalesce(o.topup_hours, 0) as "topupHours"`
/** A payment with its order, the consultation it paid for (a top-up's: the consultation it topped up) and client. */
export const PAYMENT_FROM = sql`payment p
  left join orders o on o.id = p.order_id
  left join consultation c on c.id = o.topup_consultation_id
    or (o.topup_consultation_id is null and c.order_id = p.order_id)
  left join client cl on cl.bot_id = p.bot_id and cl.user_id = p.user_id`

export interface PaymentFilter {
  botId: number
  status?: 'refunded' | 'not-refunded' | undefined
  consultationId?: number | undefined
  from?: Date | undefined
  to?: Date | undefined
  before?: number | undefined
  limit: number
}

export async function listPayments(db: Db, f: PaymentFilter): Promise<PaymentRow[]> {
  const where: RawBuilder<unknown>[] = [sql`p.bot_id = ${f.botId}`]
  if (f.status === 'refunded') where.push(sql`p.refunded_at is not null`)
  if (f.status === 'not-refunded') where.push(sql`p.refunded_at is null`)
  if (f.consultationId !== undefined) where.push(sql`c.id = ${f.consultationId}`)
  if (f.from) where.push(sql`p.created_at >= ${f.from}`)
  if (f.to) where.push(sql`p.created_at < ${f.to}`)
  if (f.before !== undefined) where.push(sql`p.id < ${f.before}`)
  const r = await sql<PaymentRow>`select ${PAYMENT_COLUMNS} from ${PAYMENT_FROM}
    where ${sql.join(where, sql` and `)} order by p.id desc limit ${f.limit}`.execute(db)
  return r.rows
}

export async function findPaymentRow(
  db: Db,
  botId: number,
  paymentId: number,
): Promise<PaymentRow | undefined> {
  const r = await sql<PaymentRow>`select ${PAYMENT_COLUMNS} from ${PAYMENT_FROM}
    where p.bot_id = ${botId} and p.id = ${paymentId}`.execute(db)
  return r.rows[0]
}

export interface MessageEvent {
  id: number
  direction: 'in' | 'out'
  kind: 'copy' | 'text' | 'note'
  state: string
  contentType: string
  text: string | null
  noteKey: string | null
  refusalReason: string | null
  fromId: number | null
  at: Date
}

/** The consultation's messages that are events of its timeline: bot notes and texts, and refused client messages. */
export async function consultationEvents(db: Db, consultationId: number): Promise<MessageEvent[]> {
  const r = await sql<MessageEvent>`
    select id, direction, kind, state, content_type as "contentType",
      coalesce(content->>'text', content->>'caption') as text, content->>'key' as "noteKey",
      refusal->>'reason' as "refusalReason", from_id as "fromId", coalesce(sent_at, created_at) as at
    from desk_message
    where consultation_id = ${consultationId} and (kind <> 'copy' or state = 'refused')
    order by id`.execute(db)
  return r.rows
}

export interface DraftEvent {
  id: number
  state: string
  requestedBy: number
  approvedBy: number | null
  costMinor: number | null
  createdAt: Date
  sentAt: Date | null
}

export async function consultationDrafts(db: Db, consultationId: number): Promise<DraftEvent[]> {
  const r = await sql<DraftEvent>`
    select id, state, requested_by as "requestedBy", approved_by as "approvedBy", cost as "costMinor",
      created_at as "createdAt", sent_at as "sentAt"
    from draft where consultation_id = ${consultationId} order by id`.execute(db)
  return r.rows
}
