import { sql } from 'kysely'
import type { Db } from '../db/database'
import { APPEAL_COUNT_COLUMNS, type AppealCounts, type ReportRange } from './reports.repository'

/**
 * The report's numbers over time, for the dashboard's charts. Each series is the statement of its total in
 * reports.repository.ts (same table, same instant dating the row, same half-open range, same conditions) grouped by
 * the desk-local day or week, so the buckets of a series add up to what /report says for the same range
 * (test/e2e/dashboard-api.test.ts holds them equal). Buckets without rows are present with zeros.
 */

export interface SeriesRange extends ReportRange {
  /** The desk's IANA zone: days and weeks are the desk's calendar days and ISO weeks (Monday first). */
  zone: string
}

/** The desk-local calendar days of [from, to), as a set of rows `day` (date). */
function days(r: SeriesRange) {
  return sql`select d::date as day from generate_series(
      (${r.from}::timestamptz at time zone ${r.zone})::date,
      ((${r.to}::timestamptz - interval '1 microsecond') at time zone ${r.zone})::date,
      interval '1 day') d`
}

/** The desk-local ISO weeks (their Mondays) that [from, to) touches. */
function weeks(r: SeriesRange) {
  return sql`select d::date as week from generate_series(
      date_trunc('week', ${r.from}::timestamptz at time zone ${r.zone}),
      date_trunc('week', (${r.to}::timestamptz - interval '1 microsecond') at time zone ${r.zone}),
      interval '1 week') d`
}

export interface RevenueDay {
  /** YYYY-MM-DD, desk-local. */
  day: string
  paidCount: number
  paidStars: number
  refundedCount: number
  refundedStars: number
}

/** `revenue` per day: payments by the day they came in, refunds by the day they were made. */
export async function revenueByDay(db: Db, r: SeriesRange): Promise<RevenueDay[]> {
  const q = await sql<RevenueDay>`
    with days as (${days(r)}),
    paid as (
      select (created_at at time zone ${r.zone})::date as day, count(*)::int as n, sum(total_amount)::bigint as stars
        from payment
        where bot_id = ${r.botId} and created_at >= ${r.from} and created_at < ${r.to}
        group by 1),
    refunded as (
      select (refunded_at at time zone ${r.zone})::date as day, count(*)::int as n, sum(total_amount)::bigint as stars
        from payment
        where bot_id = ${r.botId} and refunded_at >= ${r.from} and refunded_at < ${r.to}
        group by 1)
    select to_char(days.day, 'YYYY-MM-DD') as day,
      coalesce(paid.n, 0) as "paidCount", coalesce(paid.stars, 0)::bigint as "paidStars",
      coalesce(refunded.n, 0) as "refundedCount", coalesce(refunded.stars, 0)::bigint as "refundedStars"
    from days left join paid using (day) left join refunded using (day)
    order by days.day`.execute(db)
  return q.rows
}

export interface AppealWeek extends AppealCounts {
  /** Monday of the desk-local ISO week, YYYY-MM-DD. */
  week: string
}

/**
 * `appealCounts` per week of acceptance. With `answeredBy`: only the questions that staff member answered first (an
 * expert's own figures; open questions have no one yet and are left out).
 */
export async function appealsByWeek(db: Db, r: SeriesRange, answeredBy?: number): Promise<AppealWeek[]> {
  const byWho = answeredBy === undefined ? sql`` : sql`and answered_by = ${answeredBy}`
  const q = await sql<AppealWeek>`
    with weeks as (${weeks(r)}),
    a as (
      select date_trunc('week', accepted_at at time zone ${r.zone})::date as week, ${APPEAL_COUNT_COLUMNS}
      from desk_appeal
      where bot_id = ${r.botId} and accepted_at >= ${r.from} and accepted_at < ${r.to} ${byWho}
      group by 1)
    select to_char(weeks.week, 'YYYY-MM-DD') as week, coalesce(accepted, 0) as accepted,
      coalesce("answeredInTime", 0) as "answeredInTime", coalesce("answeredLate", 0) as "answeredLate",
      coalesce(breached, 0) as breached, coalesce(open, 0) as open,
      coalesce("openBreached", 0) as "openBreached"
    from weeks left join a using (week)
    order by weeks.week`.execute(db)
  return q.rows
}

export interface DraftDay {
  day: string
  /** Drafts admitted (every state but refused). */
  drafts: number
  refused: number
  /** Provider cost of the settled drafts, in llm.currency's minor units, and their tokens (input + output). */
  costMinor: number
  tokens: number
}

/** AI drafts per day of request; with `requestedBy`, one staff member's. */
export async function draftsByDay(db: Db, r: SeriesRange, requestedBy?: number): Promise<DraftDay[]> {
  const byWho = requestedBy === undefined ? sql`` : sql`and requested_by = ${requestedBy}`
  const q = await sql<DraftDay>`
    with days as (${days(r)}),
    d as (
      select (created_at at time zone ${r.zone})::date as day,
        count(*) filter (where state <> 'refused')::int as drafts,
        count(*) filter (where state = 'refused')::int as refused,
        coalesce(sum(cost), 0)::bigint as "costMinor",
        coalesce(sum(coalesce(input_tokens, 0) + coalesce(output_tokens, 0)), 0)::bigint as tokens
      from draft
      where bot_id = ${r.botId} and created_at >= ${r.from} and created_at < ${r.to} ${byWho}
      group by 1)
    select to_char(days.day, 'YYYY-MM-DD') as day, coalesce(drafts, 0) as drafts, coalesce(refused, 0) as refused,
      coalesce("costMinor", 0)::bigint as "costMinor", coalesce(tokens, 0)::bigint as tokens
    from days left join d using (day)
    order by days.day`.execute(db)
  return q.rows
}
