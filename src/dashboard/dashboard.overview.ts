import { deskDrafting } from '../config/drafting'
import type { DeskRuntime } from '../config/load'
import { clockNow } from '../db/clock'
import type { Db } from '../db/database'
import type { Deps } from '../deps'
import { BUDGET_UNITS, DESK_SCOPE } from '../drafting/drafting.service'
import { staffNames } from '../experts/names'
import { queueOf } from '../experts/queue'
import { monthlyPeriod } from '../ledger/ledger.periods'
import { findAccountByKey } from '../ledger/ledger.repository'
import { ratingsByExpert, responseByExpert } from '../reports/reports.repository'
import { buildReport } from '../reports/reports.service'
import { appealsByWeek, draftsByDay, revenueByDay, type SeriesRange } from '../reports/series.repository'
import type { Viewer } from './access'
import type { AppealTotalsDto, BudgetDto, OverviewDto, RatingsDto } from './dashboard.model'
import { DashboardError, dayRange, iso, OVERVIEW_DAYS } from './dashboard.service'

/**
 * The overview page: /report's totals (buildReport, the same SQL) and its statements per day or week
 * (src/reports/series.repository.ts) for a 7/30/90-day range in the desk's zone. Experts see their own figures.
 */

/**
 * Client ratings of consultations per owner (src/consultations/ratings.ts: the owner when rated, else whoever
 * answered most; average and count), from the same query as /report; null while the range has none (the page then
 * shows "no ratings yet"). Ratings that count for nobody are left out here.
 */
export async function ratingsSummary(db: Db, r: SeriesRange): Promise<RatingsDto | null> {
  const rows = await ratingsByExpert(db, r)
  const byExpert = rows.flatMap((x) =>
    x.expertId === null ? [] : [{ staffId: x.expertId, count: x.count, average: x.average }],
  )
  return byExpert.length ? { byExpert } : null
}

/** The desk's monthly drafting budget as the ledger holds it for the month containing `now`. */
async function draftBudget(deps: Deps, desk: DeskRuntime, now: Date): Promise<BudgetDto | null> {
  const budget = deskDrafting(deps.config.llm, desk).monthlyBudget
  if (!budget) return null
  const zone = desk.schedule.timezone
  const period = monthlyPeriod(now, zone)
  const account = await findAccountByKey(
    deps.db,
    DESK_SCOPE,
    String(desk.botId),
    BUDGET_UNITS[budget.unit],
    now,
  )
  return {
    unit: budget.unit,
    limit: account?.granted ?? budget.amount,
    used: account?.used ?? 0,
    held: account?.reserved ?? 0,
    periodStart: iso(account?.period_start ?? period.start),
    periodEnd: iso(account?.period_end ?? period.end),
  }
}

function sumWeeks(weeks: AppealTotalsDto[]): AppealTotalsDto {
  const t = { accepted: 0, answeredInTime: 0, answeredLate: 0, breached: 0, open: 0, openBreached: 0 }
  for (const w of weeks) {
    t.accepted += w.accepted
    t.answeredInTime += w.answeredInTime
    t.answeredLate += w.answeredLate
    t.breached += w.breached
    t.open += w.open
    t.openBreached += w.openBreached
  }
  return t
}

/** The viewer's queue (the same as /mine), first on the overview. */
async function openNowOf(deps: Deps, viewer: Viewer, now: Date): Promise<OverviewDto['openNow']> {
  const q = await queueOf(
    deps.db,
    viewer.desk,
    { userId: viewer.userId, admin: viewer.role === 'admin' },
    now,
  )
  return {
    items: q.items.map((i) => ({
      consultationId: i.consultationId,
      number: i.number,
      title: i.title,
      dueAt: iso(i.dueAt),
      minutesLeft: i.minutesLeft,
      minutesOver: i.minutesOver,
      overdue: i.overdue,
      owner: i.ownerId === null ? null : { id: i.ownerId, name: i.ownerName ?? `id ${i.ownerId}` },
      topicLink: i.link,
    })),
    more: q.more,
  }
}

/** Names (src/experts/names.ts) of everyone the overview shows by id. */
async function namesOf(
  deps: Deps,
  desk: DeskRuntime,
  openNow: OverviewDto['openNow'],
  experts: { staffId: number }[],
  ratings: RatingsDto | null,
): Promise<Record<string, string>> {
  const ids = [
    ...experts.map((e) => e.staffId),
    ...(ratings?.byExpert ?? []).map((e) => e.staffId),
    ...openNow.items.flatMap((i) => (i.owner ? [i.owner.id] : [])),
  ]
  return Object.fromEntries(
    [...(await staffNames(deps.db, desk, ids))].map(([id, name]) => [String(id), name]),
  )
}

export async function overview(deps: Deps, viewer: Viewer, days: number): Promise<OverviewDto> {
  if (!(OVERVIEW_DAYS as readonly number[]).includes(days)) throw new DashboardError(400, 'bad-range')
  const { desk } = viewer
  const now = await clockNow(deps.db)
  const { from, to } = dayRange(desk, days, now)
  const zone = desk.schedule.timezone
  const r: SeriesRange = { botId: desk.botId, from, to, zone }
  const range = { days, from: iso(from), to: iso(to), zone }
  const openNow = await openNowOf(deps, viewer, now)

  if (viewer.role === 'admin') {
    const [report, revenue, weeks, drafts, budget, ratings] = await Promise.all([
      buildReport(deps.db, desk.botId, from, to),
      revenueByDay(deps.db, r),
      appealsByWeek(deps.db, r),
      draftsByDay(deps.db, r),
      draftBudget(deps, desk, now),
      ratingsSummary(deps.db, r),
    ])
    return {
      role: viewer.role,
      range,
      openNow,
      staffNames: await namesOf(deps, desk, openNow, report.experts, ratings),
      revenue: { totals: report.revenue, byDay: revenue },
      consultations: report.consultations,
      appeals: { totals: report.appeals, byWeek: weeks },
      experts: report.experts,
      ratings,
      drafts: { byDay: drafts, budget },
      refusals: { ledger: report.ledger, admission: report.admission },
    }
  }
  const [experts, weeks, drafts, ratings] = await Promise.all([
    responseByExpert(deps.db, r),
    appealsByWeek(deps.db, r, viewer.userId),
    draftsByDay(deps.db, r, viewer.userId),
    ratingsSummary(deps.db, r),
  ])
  const mine = experts.filter((e) => e.staffId === viewer.userId)
  const myRatings = ratings && { byExpert: ratings.byExpert.filter((e) => e.staffId === viewer.userId) }
  return {
    role: viewer.role,
    range,
    openNow,
    staffNames: await namesOf(deps, desk, openNow, mine, myRatings),
    revenue: null,
    consultations: null,
    appeals: { totals: sumWeeks(weeks), byWeek: weeks },
    experts: mine,
    ratings: myRatings,
    drafts: { byDay: drafts, budget: null },
    refusals: null,
  }
}
