import { DateTime } from 'luxon'
import { audit } from '../audit/audit'
import { type DeskRuntime, pick } from '../config/load'
import type { Deps } from '../deps'
import { topicLink } from '../experts/alerts'
import { staffNames } from '../experts/names'
import { buildTranscript } from '../lifecycle/transcript'
import type { ConsultationState } from '../orders/orders.tables'
import { refundWithTopUps } from '../payments/refund-with-topups'
import { type RefundOutcome, refundPayment } from '../payments/refunds'
import { topUpsOf } from '../payments/topup-refund'
import type { Viewer } from './access'
import type {
  AppealDto,
  ConsultationDetailDto,
  ConsultationItemDto,
  MeDto,
  PaymentDto,
  RefundResultDto,
  TimelineEventDto,
  TopUpDto,
} from './dashboard.model'
import {
  type AppealRow,
  consultationAppeals,
  consultationCard,
  consultationDrafts,
  consultationEvents,
  findPaymentRow,
  isExpertsConsultation,
  listConsultations,
  listPayments,
  type PaymentRow,
} from './dashboard.repository'

/**
 * The dashboard's use cases. Admins see the whole desk and can refund; experts see their own figures and their
 * consultations: those they own now (expert_assignment, src/experts) and those with a question they answered
 * (dashboard.repository.ts, mineOf). The overview's totals are /report's own (buildReport, the same SQL); its charts are the
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
const PAGE = 50

export const iso = (d: Date) => d.toISOString()
const isoOrNull = (d: Date | null) => (d ? d.toISOString() : null)

export function adminOnly(viewer: Viewer): void {
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

export async function me(deps: Pick<Deps, 'config' | 'db'>, viewer: Viewer): Promise<MeDto> {
  const { desk } = viewer
  const lang = viewer.lang
  const staff = [
    ...desk.staff.admins.map((id) => ({ id, role: 'admin' as const })),
    ...desk.staff.experts
      .filter((id) => !desk.staff.admins.includes(id))
      .map((id) => ({ id, role: 'expert' as const })),
  ]
  const names = await staffNames(
    deps.db,
    desk,
    staff.map((s) => s.id),
  )
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
    staff: staff.map((s) => {
      const name = names.get(s.id)
      return name ? { ...s, name } : s
    }),
    llm: { currency: deps.config.llm.currency, minorUnitsPerMajor: deps.config.llm.minorUnitsPerMajor },
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

/** The paid top-ups not refunded yet of the consultations these payments paid for (their own payments only). */
async function openTopUps(deps: Deps, botId: number, rows: PaymentRow[]): Promise<Map<number, TopUpDto[]>> {
  const ids = [
    ...new Set(
      rows
        .filter((p) => p.kind === 'payment' && p.orderKind === 'consultation' && p.consultationId !== null)
        .map((p) => p.consultationId!),
    ),
  ]
  const out = new Map<number, TopUpDto[]>()
  for (const t of await topUpsOf(deps.db, botId, ids)) {
    if (t.refundedAt) continue
    const list = out.get(t.consultationId) ?? []
    list.push({
      paymentId: t.paymentId,
      amount: t.amount,
      charge: t.charge,
      questions: t.questions,
      hours: t.hours,
    })
    out.set(t.consultationId, list)
  }
  return out
}

function paymentDto(p: PaymentRow, topUps?: Map<number, TopUpDto[]>): PaymentDto {
  const own = p.kind === 'payment' && p.orderKind === 'consultation' && p.consultationId !== null
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
    orderKind: p.orderKind,
    topUp: p.orderKind === 'topup' ? { questions: p.topupQuestions, hours: p.topupHours } : null,
    topUps: own ? (topUps?.get(p.consultationId!) ?? []) : [],
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
  if (
    viewer.role === 'expert' &&
    !(await isExpertsConsultation(deps.db, desk.botId, consultationId, viewer.userId))
  )
    throw new DashboardError(404, 'not-found')
  const [appeals, payments, events, drafts, transcript] = await Promise.all([
    consultationAppeals(deps.db, consultationId),
    viewer.role === 'admin'
      ? listPayments(deps.db, { botId: desk.botId, consultationId, limit: PAGE })
      : Promise.resolve([]),
    consultationEvents(deps.db, consultationId),
    consultationDrafts(deps.db, consultationId),
    staffNames(deps.db, desk, [...desk.staff.admins, ...desk.staff.experts]).then((names) =>
      buildTranscript(deps, desk, consultationId, viewer.lang, { names }),
    ),
  ])

  const topUps = await openTopUps(deps, desk.botId, payments)
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
      topicLink:
        card.topicChatId !== null && card.topicThreadId !== null
          ? topicLink(card.topicChatId, card.topicThreadId)
          : null,
    },
    appeals: appeals.map(appealDto),
    payments: payments.map((p) => paymentDto(p, topUps)),
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
  const topUps = await openTopUps(deps, desk.botId, rows)
  return rows.map((p) => paymentDto(p, topUps))
}

/**
 * A refund from the page: the bot's own refund (refundPayment: claim, refundStarPayment outside any transaction,
 * apply and audit `payment.refunded` with the admin as actor), so a second press, a press in the bot and a press
 * here at once still refund once. The page's confirmation step sends back the charge id it showed; a mismatch
 * (a stale page, a wrong row) refunds nothing. With `topUps` (the top-up payments the page listed with the
 * consultation's payment and the admin chose to refund with it) each is refunded after it, once; one that is not a
 * top-up of that consultation refunds nothing at all (409). The request itself is audited as coming from the
 * dashboard.
 */
export async function refund(
  deps: Deps,
  viewer: Viewer,
  paymentId: number,
  confirmCharge: string,
  topUps: readonly number[] = [],
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
    details: {
      charge: row.charge,
      amount: row.amount,
      alreadyRefunded: row.refundedAt !== null,
      ...(topUps.length ? { topUps } : {}),
    },
  })
  const actor = { id: viewer.userId, source: 'admin' as const }
  let r: RefundOutcome
  let withTopUps: RefundResultDto['topUps']
  if (topUps.length > 0) {
    const b = await refundWithTopUps(deps, desk, paymentId, { ids: topUps }, actor)
    if (b.status === 'unknown-payment') throw new DashboardError(404, 'not-found')
    if (b.status !== 'done') throw new DashboardError(409, 'confirmation-mismatch')
    r = b.main
    withTopUps = b.topUps.map((t) => ({
      paymentId: t.topUp.paymentId,
      status: t.outcome.status,
      ...(t.outcome.status === 'failed' ? { description: t.outcome.description } : {}),
    }))
  } else r = await refundPayment(deps, desk, { paymentId }, actor)
  const after = (await findPaymentRow(deps.db, desk.botId, paymentId))!
  const dto = paymentDto(after, await openTopUps(deps, desk.botId, [after]))
  const extra = withTopUps ? { topUps: withTopUps } : {}
  switch (r.status) {
    case 'unknown-payment':
      throw new DashboardError(404, 'not-found')
    case 'failed':
      return { status: 'failed', payment: dto, description: r.description, ...extra }
    default:
      return { status: r.status, payment: dto, ...extra }
  }
}
