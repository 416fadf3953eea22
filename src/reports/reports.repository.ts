import { sql } from 'kysely'
import type { Db } from '../db/database'

/**
 * The admins' report, computed in SQL from the tables the desk works on (payments, consultations, appeals, the
 * ledger's reservations, refused messages): nothing is kept as a separate counter, so a number here is whatever the
 * rows say. Each query is one statement over a half-open range [from, to) of the instant that dates the row.
 */

export interface ReportRange {
  botId: number
  from: Date
  to: Date
  /**
   * One staff group's report (several groups per desk, src/config/staff-groups.ts): only its consultations, with
   * `home` the desk's home group (consultations with no group stored belong to it). Unset: the whole desk.
   */
  group?: { chatId: number; home: number }
}

/** `column` (a consultation id) belongs to the report's group; true for a whole-desk report. */
function inGroup(r: Pick<ReportRange, 'botId' | 'group'>, column: string) {
  if (!r.group) return sql`true`
  return sql`${sql.ref(column)} in (select id from consultation
    where bot_id = ${r.botId} and coalesce(staff_chat_id, ${r.group.home}) = ${r.group.chatId})`
}

export interface Revenue {
  /** Payments received in the range (every kind: the Stars came in). */
  paidCount: number
  paidStars: number
  /** Refunds made in the range (dated by refunded_at, whenever the payment was). */
  refundedCount: number
  refundedStars: number
  netStars: number
}

export async function revenue(db: Db, r: ReportRange): Promise<Revenue> {
  const q = await sql<Omit<Revenue, 'netStars'>>`
    select
      count(*) filter (where created_at >= ${r.from} and created_at < ${r.to})::int as "paidCount",
      coalesce(sum(total_amount) filter (where created_at >= ${r.from} and created_at < ${r.to}), 0)::bigint
        as "paidStars",
      count(*) filter (where refunded_at >= ${r.from} and refunded_at < ${r.to})::int as "refundedCount",
      coalesce(sum(total_amount) filter (where refunded_at >= ${r.from} and refunded_at < ${r.to}), 0)::bigint
        as "refundedStars"
    from payment
    where bot_id = ${r.botId}
      and (${r.group ? sql`order_id in (select order_id from consultation where ${inGroup(r, 'id')})` : sql`true`})
      and ((created_at >= ${r.from} and created_at < ${r.to}) or (refunded_at >= ${r.from} and refunded_at < ${r.to}))`.execute(
    db,
  )
  const row = q.rows[0]!
  return { ...row, netStars: row.paidStars - row.refundedStars }
}

/** Consultations paid for in the range (a consultation row is written with its payment), by their state now. */
export async function consultationsByState(
  db: Db,
  r: ReportRange,
): Promise<{ state: string; count: number }[]> {
  const q = await sql<{ state: string; count: number }>`
    select state, count(*)::int as count from consultation
      where bot_id = ${r.botId} and created_at >= ${r.from} and created_at < ${r.to} and ${inGroup(r, 'id')}
      group by state order by state`.execute(db)
  return q.rows
}

export interface AppealCounts {
  accepted: number
  answeredInTime: number
  answeredLate: number
  /** Marked breached by the SLA job (due time passed unanswered), answered since or not. */
  breached: number
  open: number
  openBreached: number
}

/** The columns of AppealCounts over the desk_appeal rows a query selects (the dashboard counts per week with it). */
export const APPEAL_COUNT_COLUMNS = sql`
      count(*)::int as accepted,
      count(*) filter (where in_time)::int as "answeredInTime",
      count(*) filter (where in_time = false)::int as "answeredLate",
      count(*) filter (where breached_at is not null)::int as breached,
      count(*) filter (where state = 'open')::int as open,
      count(*) filter (where state = 'open' and breached_at is not null)::int as "openBreached"`

/** Appeals accepted in the range. */
export async function appealCounts(db: Db, r: ReportRange): Promise<AppealCounts> {
  const q = await sql<AppealCounts>`
    select ${APPEAL_COUNT_COLUMNS}
    from desk_appeal
    where bot_id = ${r.botId} and accepted_at >= ${r.from} and accepted_at < ${r.to}
      and ${inGroup(r, 'consultation_id')}`.execute(db)
  return q.rows[0]!
}

export interface ExpertResponse {
  staffId: number
  answered: number
  inTime: number
  /** Median of response_business_minutes (business minutes from acceptance to the first answer). */
  medianMinutes: number
}

/** First answers given in the range, per staff member who gave them. */
export async function responseByExpert(db: Db, r: ReportRange): Promise<ExpertResponse[]> {
  const q = await sql<ExpertResponse>`
    select answered_by as "staffId", count(*)::int as answered,
      count(*) filter (where in_time)::int as "inTime",
      percentile_cont(0.5) within group (order by response_business_minutes)::float8 as "medianMinutes"
    from desk_appeal
    where bot_id = ${r.botId} and first_response_at >= ${r.from} and first_response_at < ${r.to}
      and answered_by is not null and response_business_minutes is not null
      and ${inGroup(r, 'consultation_id')}
    group by answered_by
    order by "medianMinutes", answered_by`.execute(db)
  return q.rows
}

export interface OpenAppeal {
  consultationId: number
  number: number
  acceptedAt: Date
  dueAt: Date
  breachedAt: Date | null
}

/** Open appeals now, nearest to (or furthest past) their due time first. Not limited to the range: it is a to-do. */
export async function nearestToBreach(
  db: Db,
  r: Pick<ReportRange, 'botId' | 'group'>,
  limit = 5,
): Promise<OpenAppeal[]> {
  const q = await sql<OpenAppeal>`
    select consultation_id as "consultationId", number, accepted_at as "acceptedAt", due_at as "dueAt",
      breached_at as "breachedAt"
    from desk_appeal
    where bot_id = ${r.botId} and state = 'open' and ${inGroup(r, 'consultation_id')}
    order by due_at, id
    limit ${limit}`.execute(db)
  return q.rows
}

export interface RefusalCount {
  reason: string
  /** The ledger account's scope and unit (e.g. consultation/appeals, expert/drafts); admission refusals: null. */
  scope: string | null
  unit: string | null
  count: number
}

/**
 * The ledger's refusals in the range by reason and by the account that refused (the refusing line of the stored
 * decision; its scope/subject tell which desk it belongs to: a consultation of this bot, or a subject that is the
 * bot id or starts with it).
 */
export async function ledgerRefusals(db: Db, r: ReportRange): Promise<RefusalCount[]> {
  const q = await sql<RefusalCount>`
    with refused as (
      select decision->>'reason' as reason,
             decision->'lines'->coalesce((decision->>'line')::int, 0) as line
        from ledger_reservation
        where state = 'refused' and created_at >= ${r.from} and created_at < ${r.to}
    )
    select reason, line->>'scope' as scope, line->>'unit' as unit, count(*)::int as count
      from refused
      where (line->>'scope' = 'consultation' and exists (
               -- By primary key: comparing c.id::text would scan every consultation once per refusal.
               select 1 from consultation c
                 where c.id = case when line->>'subject' ~ '^[0-9]{1,18}$' then (line->>'subject')::bigint end
                   and c.bot_id = ${r.botId} and ${inGroup(r, 'c.id')}))
         -- Lines of other scopes (an expert's drafts, the desk's) belong to the desk, not to one group.
         or (${r.group ? sql`false` : sql`true`} and line->>'scope' <> 'consultation'
             and (line->>'subject' = ${String(r.botId)} or line->>'subject' like ${`${r.botId}:%`}))
      group by 1, 2, 3
      order by count desc, reason`.execute(db)
  return q.rows
}

/** Client messages the admission refused in the range, by reason (window closed, no appeals left, ...). */
export async function admissionRefusals(db: Db, r: ReportRange): Promise<RefusalCount[]> {
  const q = await sql<RefusalCount>`
    select coalesce(refusal->>'reason', 'unknown') as reason, null as scope, null as unit, count(*)::int as count
      from desk_message
      where bot_id = ${r.botId} and direction = 'in' and state = 'refused'
        and created_at >= ${r.from} and created_at < ${r.to} and ${inGroup(r, 'consultation_id')}
      group by 1
      order by count desc, reason`.execute(db)
  return q.rows
}

export interface RatingCount {
  /** The staff member the ratings count for (who answered most of the consultation); null: nobody answered. */
  expertId: number | null
  count: number
  average: number
}

/**
 * Client ratings given in the range (by the time of the first rating), per answering expert: average and count.
 * When consultations get an owner (issue 14's Experts part), grouping by it is a change of this one query.
 */
export async function ratingsByExpert(db: Db, r: ReportRange): Promise<RatingCount[]> {
  const q = await sql<RatingCount>`
    select expert_id as "expertId", count(*)::int as count, round(avg(score), 2)::float8 as average
      from consultation_rating
      where bot_id = ${r.botId} and created_at >= ${r.from} and created_at < ${r.to}
        and ${inGroup(r, 'consultation_id')}
      group by expert_id
      order by count desc, expert_id nulls last`.execute(db)
  return q.rows
}

export interface GroupLoad {
  chatId: number
  active: number
  openAppeals: number
}

/** Live consultations and open questions now, per staff group of the desk (no group stored: the home group). */
export async function loadByGroup(db: Db, botId: number, home: number): Promise<GroupLoad[]> {
  const q = await sql<GroupLoad>`
    select coalesce(c.staff_chat_id, ${home}) as "chatId",
      count(*) filter (where c.state = 'active')::int as active,
      coalesce(sum((select count(*) from desk_appeal a where a.consultation_id = c.id and a.state = 'open')), 0)::int
        as "openAppeals"
    from consultation c
    where c.bot_id = ${botId} and c.state = 'active'
    group by 1
    order by 1`.execute(db)
  return q.rows
}
