import { sql } from 'kysely'
import type { Db, Trx } from '../db/database'
import { PAYMENT_FROM, type PaymentRow } from './dashboard.repository'

// ---------------------------------------------------------------------------------------------------------------
// CSV rows. Instants come formatted by PostgreSQL in the desk's zone (ISO 8601 with the offset, e.g.
// 2026-10-02T12:00:00+03:00): the export's transaction sets its TimeZone, and to_char prints each value in it.
// Formatting in JavaScript (luxon) cost ~28 µs per instant, over a second for a month of a busy desk.

export interface ExportRange {
  botId: number
  from: Date
  to: Date
  zone: string
}

type Iso = string

function inZone<T>(db: Db, zone: string, f: (trx: Trx) => Promise<T>): Promise<T> {
  return db.transaction().execute(async (trx) => {
    await sql`select set_config('TimeZone', ${zone}, true)`.execute(trx)
    return f(trx)
  })
}

const at = (column: string) => sql`to_char(${sql.ref(column)}, 'YYYY-MM-DD"T"HH24:MI:SSTZH:TZM')`

export interface PaymentExportRow
  extends Omit<
    PaymentRow,
    | 'createdAt'
    | 'refundedAt'
    | 'title'
    | 'refundStartedAt'
    | 'refundError'
    | 'orderKind'
    | 'topupQuestions'
    | 'topupHours'
  > {
  paidAt: Iso
  refundedAt: Iso | null
}

export function paymentRows(db: Db, r: ExportRange): Promise<PaymentExportRow[]> {
  return inZone(db, r.zone, async (trx) => {
    const q = await sql<PaymentExportRow>`
      select p.id, ${at('p.created_at')} as "paidAt", p.user_id as "userId", cl.first_name as "firstName",
        cl.last_name as "lastName", cl.username, p.kind, p.total_amount as amount, p.currency, p.order_id as "orderId",
        c.id as "consultationId", o.tariff_code as "tariffCode", p.telegram_payment_charge_id as charge,
        ${at('p.refunded_at')} as "refundedAt", p.refund_source as "refundSource", p.refunded_by as "refundedBy"
      from ${PAYMENT_FROM}
      where p.bot_id = ${r.botId} and p.created_at >= ${r.from} and p.created_at < ${r.to}
      order by p.created_at, p.id`.execute(trx)
    return q.rows
  })
}

export interface ConsultationExportRow {
  id: number
  createdAt: Iso
  state: string
  userId: number
  firstName: string | null
  lastName: string | null
  username: string | null
  tariffCode: string
  title: string
  priceStars: number
  startsAt: Iso | null
  accessUntil: Iso | null
  closedAt: Iso | null
  revokedAt: Iso | null
  appealsTotal: number
  appealsUsed: number
  answeredInTime: number
  answeredLate: number
  experts: string
}

export function consultationRows(db: Db, r: ExportRange): Promise<ConsultationExportRow[]> {
  return inZone(db, r.zone, async (trx) => {
    const q = await sql<ConsultationExportRow>`
      select c.id, ${at('c.created_at')} as "createdAt", c.state, c.user_id as "userId",
        cl.first_name as "firstName", cl.last_name as "lastName", cl.username, o.tariff_code as "tariffCode",
        o.title, o.price_stars as "priceStars", ${at('c.starts_at')} as "startsAt",
        ${at('c.access_until')} as "accessUntil", ${at('c.closed_at')} as "closedAt",
        ${at('c.revoked_at')} as "revokedAt", o.appeals as "appealsTotal",
        coalesce(a.used, 0) as "appealsUsed", coalesce(a.in_time, 0) as "answeredInTime",
        coalesce(a.late, 0) as "answeredLate", coalesce(a.experts, '') as experts
      from consultation c
        join orders o on o.id = c.order_id
        left join client cl on cl.bot_id = c.bot_id and cl.user_id = c.user_id
        left join lateral (
          select count(*)::int as used, count(*) filter (where in_time)::int as in_time,
            count(*) filter (where in_time = false)::int as late,
            string_agg(distinct answered_by::text, ' ') as experts
          from desk_appeal where consultation_id = c.id) a on true
      where c.bot_id = ${r.botId} and c.created_at >= ${r.from} and c.created_at < ${r.to}
      order by c.created_at, c.id`.execute(trx)
    return q.rows
  })
}

export interface QuestionExportRow {
  consultationId: number
  number: number
  userId: number
  tariffCode: string
  state: string
  acceptedAt: Iso
  slaMinutes: number
  dueAt: Iso
  firstResponseAt: Iso | null
  answeredBy: number | null
  responseBusinessMinutes: number | null
  inTime: boolean | null
  breachedAt: Iso | null
}

export function questionRows(db: Db, r: ExportRange): Promise<QuestionExportRow[]> {
  return inZone(db, r.zone, async (trx) => {
    const q = await sql<QuestionExportRow>`
      select a.consultation_id as "consultationId", a.number, c.user_id as "userId", o.tariff_code as "tariffCode",
        a.state, ${at('a.accepted_at')} as "acceptedAt", a.sla_minutes as "slaMinutes", ${at('a.due_at')} as "dueAt",
        ${at('a.first_response_at')} as "firstResponseAt", a.answered_by as "answeredBy",
        a.response_business_minutes as "responseBusinessMinutes", a.in_time as "inTime",
        ${at('a.breached_at')} as "breachedAt"
      from desk_appeal a
        join consultation c on c.id = a.consultation_id
        join orders o on o.id = c.order_id
      where a.bot_id = ${r.botId} and a.accepted_at >= ${r.from} and a.accepted_at < ${r.to}
      order by a.accepted_at, a.id`.execute(trx)
    return q.rows
  })
}
