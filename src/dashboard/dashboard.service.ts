import { DateTime } from 'luxon'
import { audit } from '../audit/audit'
import { deskDrafting } from '../config/drafting'
import { type DeskRuntime, pick } from '../config/load'
import { clockNow } from '../db/clock'
import type { Db } from '../db/database'
import type { Deps } from '../deps'
import { BUDGET_UNITS, DESK_SCOPE } from '../drafting/drafting.service'
import { monthlyPeriod } from '../ledger/ledger.periods'
import { findAccountByKey } from '../ledger/ledger.repository'
import { buildTranscript } from '../lifecycle/transcript'
import type { ConsultationState } from '../orders/orders.tables'
import { refundPayment } from '../payments/refunds'
import { ratingsByExpert, responseByExpert } from '../reports/reports.repository'
import { buildReport } from '../reports/reports.service'
import { appealsByWeek, draftsByDay, revenueByDay, type SeriesRange } from '../reports/series.repository'
import type { Viewer } from './access'
import { type Column, toCsv } from './csv'
import type {
  AppealDto,
  AppealTotalsDto,
  BudgetDto,
  ConsultationDetailDto,
  ConsultationItemDto,
  ExportKind,
  ExportLinkDto,
  MeDto,
  OverviewDto,
  PaymentDto,
  RatingsDto,
  RefundResultDto,
  TimelineEventDto,
} from './dashboard.model'
import {
  type AppealRow,
  answeredBy,
  type ConsultationExportRow,
  consultationAppeals,
  consultationCard,
  consultationDrafts,
  consultationEvents,
  consultationRows,
  findPaymentRow,
  listConsultations,
  listPayments,
  type PaymentExportRow,
  type PaymentRow,
  paymentRows,
  type QuestionExportRow,
  questionRows,
} from './dashboard.repository'
import { type ExportGrant, signExport } from './export-token'

/**
 * The dashboard's use cases. Admins see the whole desk and can refund; experts see their own figures and the
 * consultations with a question they answered (until consultations have an owner expert, answered_by is what makes
 * a consultation "theirs"). The overview's totals are /report's own (buildReport, the same SQL); its charts are the
 * same statements per day or week (src/reports/series.repository.ts).
 */

/** A refusal the HTTP edge turns into a status and a code, with no detail of the data behind it. */
export class DashboardError extends Error {
  constructor(
    readonly status: 400 | 403 | 404 | 409,
    readonly code: string,
  ) {
    super(code)
  }
}

export const OVERVIEW_DAYS = [7, 30, 90] as const
/** Longest range a CSV export covers. */
export const MAX_EXPORT_DAYS = 366
/** How long an export link works (and never past the initData it was asked with). */
export const EXPORT_LINK_SECONDS = 300
const PAGE = 50

const iso = (d: Date) => d.toISOString()
const isoOrNull = (d: Date | null) => (d ? d.toISOString() : null)

function adminOnly(viewer: Viewer): void {
  if (viewer.role !== 'admin') throw new DashboardError(403, 'admins-only')
}

/** The last `days` desk-local calendar days, today included, up to now. */
export function dayRange(desk: DeskRuntime, days: number, now: Date): { from: Date; to: Date } {
  const start = DateTime.fromJSDate(now, { zone: desk.schedule.timezone })
    .startOf('day')
    .minus({ days: days - 1 })
  return { from: start.toJSDate(), to: now }
}

/** `YYYY-MM-DD`..`YYYY-MM-DD` (both included) in the desk's zone. */
export function dateRange(desk: DeskRuntime, from: string, to: string): { from: Date; to: Date } {
  const zone = desk.schedule.timezone
  const a = DateTime.fromISO(from, { zone }).startOf('day')
  const b = DateTime.fromISO(to, { zone }).startOf('day').plus({ days: 1 })
  if (!a.isValid || !b.isValid || b <= a) throw new DashboardError(400, 'bad-range')
  return { from: a.toJSDate(), to: b.toJSDate() }
}

export function me(deps: Pick<Deps, 'config'>, viewer: Viewer): MeDto {
  const { desk } = viewer
  const lang = viewer.lang
  return {
    desk: {
      slug: desk.slug,
      name: pick(desk.name, lang, desk.defaultLanguage),
      zone: desk.schedule.timezone,
    },
    user: { id: viewer.userId, firstName: viewer.user.first_name ?? '' },
    role: viewer.role,
    lang,
    expiresAt: iso(viewer.expiresAt),
    tariffs: desk.tariffs.map((t) => ({ code: t.code, title: pick(t.title, lang, desk.defaultLanguage) })),
    staff: [
      ...desk.staff.admins.map((id) => ({ id, role: 'admin' as const })),
      ...desk.staff.experts
        .filter((id) => !desk.staff.admins.includes(id))
        .map((id) => ({ id, role: 'expert' as const })),
    ],
    llm: { currency: deps.config.llm.currency, minorUnitsPerMajor: deps.config.llm.minorUnitsPerMajor },
  }
}

/**
 * Client ratings of consultations per answering expert (average and count), from the same query as /report; null
 * while the range has none (the page then shows "no ratings yet"). Ratings nobody answered are left out here.
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

export async function overview(deps: Deps, viewer: Viewer, days: number): Promise<OverviewDto> {
  if (!(OVERVIEW_DAYS as readonly number[]).includes(days)) throw new DashboardError(400, 'bad-range')
  const { desk } = viewer
  const now = await clockNow(deps.db)
  const { from, to } = dayRange(desk, days, now)
  const zone = desk.schedule.timezone
  const r: SeriesRange = { botId: desk.botId, from, to, zone }
  const range = { days, from: iso(from), to: iso(to), zone }

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
  return {
    role: viewer.role,
    range,
    revenue: null,
    consultations: null,
    appeals: { totals: sumWeeks(weeks), byWeek: weeks },
    experts: experts.filter((e) => e.staffId === viewer.userId),
    ratings: ratings && { byExpert: ratings.byExpert.filter((e) => e.staffId === viewer.userId) },
    drafts: { byDay: drafts, budget: null },
    refusals: null,
  }
}

export interface ConsultationQuery {
  state?: ConsultationState | undefined
  tariff?: string | undefined
  expert?: number | undefined
  from?: string | undefined
  to?: string | undefined
  q?: string | undefined
  before?: number | undefined
}

export async function consultations(
  deps: Deps,
  viewer: Viewer,
  query: ConsultationQuery,
): Promise<ConsultationItemDto[]> {
  const { desk } = viewer
  const range =
    query.from || query.to ? dateRange(desk, query.from ?? '2000-01-01', query.to ?? '2999-12-31') : {}
  const rows = await listConsultations(deps.db, {
    botId: desk.botId,
    state: query.state,
    tariff: query.tariff,
    expert: query.expert,
    mine: viewer.role === 'expert' ? viewer.userId : undefined,
    q: query.q,
    before: query.before,
    limit: PAGE,
    ...range,
  })
  return rows.map((c) => ({
    id: c.id,
    state: c.state,
    client: { id: c.userId, firstName: c.firstName, lastName: c.lastName, username: c.username },
    tariffCode: c.tariffCode,
    title: c.title,
    priceStars: c.priceStars,
    appealsTotal: c.appealsTotal,
    appealsUsed: c.appealsUsed,
    createdAt: iso(c.createdAt),
    startsAt: isoOrNull(c.startsAt),
    accessUntil: isoOrNull(c.accessUntil),
    experts: c.experts,
    match: c.match,
  }))
}

function paymentDto(p: PaymentRow): PaymentDto {
  return {
    id: p.id,
    createdAt: iso(p.createdAt),
    client: { id: p.userId, firstName: p.firstName, lastName: p.lastName, username: p.username },
    kind: p.kind,
    amount: p.amount,
    currency: p.currency,
    orderId: p.orderId,
    consultationId: p.consultationId,
    tariffCode: p.tariffCode,
    title: p.title,
    charge: p.charge,
    refundedAt: isoOrNull(p.refundedAt),
    refundedBy: p.refundedBy,
    refundSource: p.refundSource,
    refundInProgress: p.refundedAt === null && p.refundStartedAt !== null,
    refundError: p.refundError,
  }
}

function appealDto(a: AppealRow): AppealDto {
  return {
    number: a.number,
    state: a.state,
    acceptedAt: iso(a.acceptedAt),
    slaMinutes: a.slaMinutes,
    dueAt: iso(a.dueAt),
    firstResponseAt: isoOrNull(a.firstResponseAt),
    answeredBy: a.answeredBy,
    responseBusinessMinutes: a.responseBusinessMinutes,
    inTime: a.inTime,
    breachedAt: isoOrNull(a.breachedAt),
  }
}

export async function consultationDetail(
  deps: Deps,
  viewer: Viewer,
  consultationId: number,
): Promise<ConsultationDetailDto> {
  const { desk } = viewer
  const card = await consultationCard(deps.db, desk.botId, consultationId)
  // Another desk's consultation, or not one of this expert's: the same answer as one that does not exist.
  if (!card) throw new DashboardError(404, 'not-found')
  if (viewer.role === 'expert' && !(await answeredBy(deps.db, consultationId, viewer.userId)))
    throw new DashboardError(404, 'not-found')
  const [appeals, payments, events, drafts, transcript] = await Promise.all([
    consultationAppeals(deps.db, consultationId),
    viewer.role === 'admin'
      ? listPayments(deps.db, { botId: desk.botId, consultationId, limit: PAGE })
      : Promise.resolve([]),
    consultationEvents(deps.db, consultationId),
    consultationDrafts(deps.db, consultationId),
    buildTranscript(deps, desk, consultationId, viewer.lang),
  ])

  const timeline: TimelineEventDto[] = [{ at: iso(card.createdAt), type: 'created' }]
  const at = (d: Date | null, type: 'window-start' | 'window-end' | 'closed' | 'revoked') => {
    if (d) timeline.push({ at: iso(d), type })
  }
  at(card.startsAt, 'window-start')
  if (card.accessUntil && card.accessUntil.getTime() <= Date.now()) at(card.accessUntil, 'window-end')
  at(card.closedAt, 'closed')
  at(card.revokedAt, 'revoked')
  for (const p of payments) {
    timeline.push({ at: iso(p.createdAt), type: 'payment', paymentId: p.id, amount: p.amount, kind: p.kind })
    if (p.refundedAt)
      timeline.push({
        at: iso(p.refundedAt),
        type: 'refund',
        paymentId: p.id,
        amount: p.amount,
        source: p.refundSource,
      })
  }
  for (const a of appeals) {
    timeline.push({ at: iso(a.acceptedAt), type: 'question', number: a.number, dueAt: iso(a.dueAt) })
    if (a.firstResponseAt)
      timeline.push({
        at: iso(a.firstResponseAt),
        type: 'answer',
        number: a.number,
        by: a.answeredBy,
        inTime: a.inTime,
        minutes: a.responseBusinessMinutes,
      })
    if (a.breachedAt) timeline.push({ at: iso(a.breachedAt), type: 'breach', number: a.number })
  }
  for (const m of events)
    timeline.push(
      m.state === 'refused'
        ? { at: iso(m.at), type: 'refusal', reason: m.refusalReason, text: m.text }
        : { at: iso(m.at), type: 'note', direction: m.direction, text: m.text, key: m.noteKey },
    )
  for (const d of drafts)
    timeline.push({ at: iso(d.createdAt), type: 'draft', draftId: d.id, state: d.state, by: d.requestedBy })
  timeline.sort((a, b) => a.at.localeCompare(b.at))

  return {
    card: {
      id: card.id,
      state: card.state,
      client: {
        id: card.userId,
        firstName: card.firstName,
        lastName: card.lastName,
        username: card.username,
        languageCode: card.languageCode,
      },
      tariffCode: card.tariffCode,
      title: card.title,
      priceStars: card.priceStars,
      appealsTotal: card.appealsTotal,
      appealsUsed: appeals.length,
      slaMinutes: card.slaMinutes,
      windowMinutes: card.windowMinutes,
      createdAt: iso(card.createdAt),
      startsAt: isoOrNull(card.startsAt),
      accessUntil: isoOrNull(card.accessUntil),
      closedAt: isoOrNull(card.closedAt),
      revokedAt: isoOrNull(card.revokedAt),
      refundPolicy: card.refundPolicy,
      topicThreadId: card.topicThreadId,
    },
    appeals: appeals.map(appealDto),
    payments: payments.map(paymentDto),
    timeline,
    transcript,
  }
}

export interface PaymentQuery {
  status?: 'refunded' | 'not-refunded' | undefined
  from?: string | undefined
  to?: string | undefined
  before?: number | undefined
}

export async function payments(deps: Deps, viewer: Viewer, query: PaymentQuery): Promise<PaymentDto[]> {
  adminOnly(viewer)
  const { desk } = viewer
  const range =
    query.from || query.to ? dateRange(desk, query.from ?? '2000-01-01', query.to ?? '2999-12-31') : {}
  const rows = await listPayments(deps.db, {
    botId: desk.botId,
    status: query.status,
    before: query.before,
    limit: PAGE,
    ...range,
  })
  return rows.map(paymentDto)
}

/**
 * A refund from the page: the bot's own refund (refundPayment: claim, refundStarPayment outside any transaction,
 * apply and audit `payment.refunded` with the admin as actor), so a second press, a press in the bot and a press
 * here at once still refund once. The page's confirmation step sends back the charge id it showed; a mismatch
 * (a stale page, a wrong row) refunds nothing. The request itself is audited as coming from the dashboard.
 */
export async function refund(
  deps: Deps,
  viewer: Viewer,
  paymentId: number,
  confirmCharge: string,
): Promise<RefundResultDto> {
  adminOnly(viewer)
  const { desk } = viewer
  const row = await findPaymentRow(deps.db, desk.botId, paymentId)
  if (!row) throw new DashboardError(404, 'not-found')
  if (row.charge !== confirmCharge) throw new DashboardError(409, 'confirmation-mismatch')
  await audit(deps.db, {
    botId: desk.botId,
    actorId: viewer.userId,
    action: 'dashboard.refund_requested',
    subjectType: 'payment',
    subjectId: paymentId,
    details: { charge: row.charge, amount: row.amount, alreadyRefunded: row.refundedAt !== null },
  })
  const r = await refundPayment(deps, desk, { paymentId }, { id: viewer.userId, source: 'admin' })
  const after = (await findPaymentRow(deps.db, desk.botId, paymentId))!
  switch (r.status) {
    case 'unknown-payment':
      throw new DashboardError(404, 'not-found')
    case 'failed':
      return { status: 'failed', payment: paymentDto(after), description: r.description }
    default:
      return { status: r.status, payment: paymentDto(after) }
  }
}

export const EXPORT_KINDS: readonly ExportKind[] = ['payments', 'consultations', 'questions']

/** A download link for one CSV: signed, for this admin, valid a few minutes. */
export function exportLink(
  viewer: Viewer,
  kind: ExportKind,
  range: { from: Date; to: Date },
  now: Date,
): ExportLinkDto {
  adminOnly(viewer)
  if (range.to.getTime() - range.from.getTime() > MAX_EXPORT_DAYS * 86_400_000)
    throw new DashboardError(400, 'range-too-long')
  const expiresAt = new Date(Math.min(now.getTime() + EXPORT_LINK_SECONDS * 1000, viewer.expiresAt.getTime()))
  const token = signExport(viewer.desk.token, { userId: viewer.userId, kind, ...range, expiresAt })
  return {
    url: `export/${kind}.csv?t=${encodeURIComponent(token)}`,
    filename: exportFilename(viewer.desk, kind, range),
  }
}

function exportFilename(desk: DeskRuntime, kind: ExportKind, r: { from: Date; to: Date }): string {
  const zone = desk.schedule.timezone
  const day = (d: Date) => DateTime.fromJSDate(d, { zone }).toISODate()
  return `${desk.slug}-${kind}-${day(r.from)}_${day(new Date(r.to.getTime() - 1))}.csv`
}

/** The columns of each export. Append new columns at the end: scripts read these files by position too. */
const PAYMENT_COLUMNS: Column<PaymentExportRow>[] = [
  { header: 'payment_id', value: (r) => r.id },
  { header: 'paid_at', value: (r) => r.paidAt },
  { header: 'user_id', value: (r) => r.userId },
  { header: 'first_name', value: (r) => r.firstName },
  { header: 'last_name', value: (r) => r.lastName },
  { header: 'username', value: (r) => r.username },
  { header: 'kind', value: (r) => r.kind },
  { header: 'amount', value: (r) => r.amount },
  { header: 'currency', value: (r) => r.currency },
  { header: 'order_id', value: (r) => r.orderId },
  { header: 'consultation_id', value: (r) => r.consultationId },
  { header: 'tariff', value: (r) => r.tariffCode },
  { header: 'telegram_payment_charge_id', value: (r) => r.charge },
  { header: 'refunded_at', value: (r) => r.refundedAt },
  { header: 'refund_source', value: (r) => r.refundSource },
  { header: 'refunded_by', value: (r) => r.refundedBy },
]

const CONSULTATION_COLUMNS: Column<ConsultationExportRow>[] = [
  { header: 'consultation_id', value: (r) => r.id },
  { header: 'created_at', value: (r) => r.createdAt },
  { header: 'state', value: (r) => r.state },
  { header: 'user_id', value: (r) => r.userId },
  { header: 'first_name', value: (r) => r.firstName },
  { header: 'last_name', value: (r) => r.lastName },
  { header: 'username', value: (r) => r.username },
  { header: 'tariff', value: (r) => r.tariffCode },
  { header: 'title', value: (r) => r.title },
  { header: 'price_stars', value: (r) => r.priceStars },
  { header: 'starts_at', value: (r) => r.startsAt },
  { header: 'access_until', value: (r) => r.accessUntil },
  { header: 'closed_at', value: (r) => r.closedAt },
  { header: 'revoked_at', value: (r) => r.revokedAt },
  { header: 'questions_included', value: (r) => r.appealsTotal },
  { header: 'questions_asked', value: (r) => r.appealsUsed },
  { header: 'answered_in_time', value: (r) => r.answeredInTime },
  { header: 'answered_late', value: (r) => r.answeredLate },
  { header: 'answered_by', value: (r) => r.experts },
]

const QUESTION_COLUMNS: Column<QuestionExportRow>[] = [
  { header: 'consultation_id', value: (r) => r.consultationId },
  { header: 'question_number', value: (r) => r.number },
  { header: 'user_id', value: (r) => r.userId },
  { header: 'tariff', value: (r) => r.tariffCode },
  { header: 'state', value: (r) => r.state },
  { header: 'accepted_at', value: (r) => r.acceptedAt },
  { header: 'sla_business_minutes', value: (r) => r.slaMinutes },
  { header: 'due_at', value: (r) => r.dueAt },
  { header: 'first_response_at', value: (r) => r.firstResponseAt },
  { header: 'answered_by', value: (r) => r.answeredBy },
  { header: 'response_business_minutes', value: (r) => r.responseBusinessMinutes },
  { header: 'in_time', value: (r) => r.inTime },
  { header: 'breached_at', value: (r) => r.breachedAt },
]

/** The CSV of a signed export link (the caller verified the token; the role is checked again here). */
export async function exportCsv(
  deps: Deps,
  desk: DeskRuntime,
  grant: ExportGrant,
): Promise<{ filename: string; body: string }> {
  if (!desk.staff.admins.includes(grant.userId)) throw new DashboardError(403, 'admins-only')
  const r = { botId: desk.botId, from: grant.from, to: grant.to, zone: desk.schedule.timezone }
  const body =
    grant.kind === 'payments'
      ? toCsv(PAYMENT_COLUMNS, await paymentRows(deps.db, r))
      : grant.kind === 'consultations'
        ? toCsv(CONSULTATION_COLUMNS, await consultationRows(deps.db, r))
        : toCsv(QUESTION_COLUMNS, await questionRows(deps.db, r))
  return { filename: exportFilename(desk, grant.kind, grant), body }
}
