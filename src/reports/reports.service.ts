import { DateTime } from 'luxon'
import type { DeskRuntime } from '../config/load'
import { homeChat, isStaffGroup, staffGroupsOf } from '../config/staff-groups'
import { clockNow } from '../db/clock'
import type { Db } from '../db/database'
import { staffNames } from '../experts/names'
import { formatInstant, staffZone } from '../time/format'
import { businessMinutesLeft, formatDuration } from '../time/instants'
import {
  type AppealCounts,
  admissionRefusals,
  appealCounts,
  consultationsByState,
  type ExpertResponse,
  type GroupLoad,
  ledgerRefusals,
  loadByGroup,
  nearestToBreach,
  type OpenAppeal,
  type RatingCount,
  type RefusalCount,
  type Revenue,
  ratingsByExpert,
  responseByExpert,
  revenue,
} from './reports.repository'

/** /report: a range from the admin's arguments, the numbers from SQL, and the text in the desk's language. */

export const DEFAULT_REPORT_DAYS = 30
const MAX_DAYS = 3660

export type RangeResult = { ok: true; from: Date; to: Date } | { ok: false }

/**
 * The report's range, in the desk's time zone:
 * - nothing: the last 30 days up to now;
 * - `7d`: the last 7 days up to now;
 * - `2026-11-01`: from that date's start up to now;
 * - `2026-11-01 2026-11-30` (or `2026-11-01..2026-11-30`): both dates included.
 */
export function parseReportRange(args: string, desk: DeskRuntime, now: Date): RangeResult {
  const a = args.trim()
  const zone = desk.schedule.timezone
  const days = (n: number) => ({ ok: true as const, from: new Date(now.getTime() - n * 86_400_000), to: now })
  if (a === '') return days(DEFAULT_REPORT_DAYS)
  const rel = /^(\d{1,4})\s*d$/i.exec(a)
  if (rel) {
    const n = Number(rel[1])
    return n >= 1 && n <= MAX_DAYS ? days(n) : { ok: false }
  }
  const parts = a.split(/\s*(?:\.\.|\s)\s*/).filter(Boolean)
  if (parts.length < 1 || parts.length > 2) return { ok: false }
  const dates = parts.map((p) =>
    /^\d{4}-\d{2}-\d{2}$/.test(p) ? DateTime.fromISO(p, { zone }).startOf('day') : undefined,
  )
  if (dates.some((d) => !d?.isValid)) return { ok: false }
  const from = dates[0]!.toJSDate()
  const to = dates[1] ? dates[1].plus({ days: 1 }).toJSDate() : now
  if (to.getTime() <= from.getTime()) return { ok: false }
  return { ok: true, from, to }
}

export interface Report {
  from: Date
  to: Date
  revenue: Revenue
  consultations: { state: string; count: number }[]
  appeals: AppealCounts
  experts: ExpertResponse[]
  nearest: OpenAppeal[]
  ledger: RefusalCount[]
  admission: RefusalCount[]
  ratings: RatingCount[]
  /** One group's report: that group; else, with several groups, the load of each now. */
  group?: number
  groups: GroupLoad[]
}

/**
 * The numbers of a range. `scope.group`: one staff group's consultations only (src/config/staff-groups.ts); else the
 * whole desk, with each group's load now when `scope.home` is given and the desk has several.
 */
export async function buildReport(
  db: Db,
  botId: number,
  from: Date,
  to: Date,
  scope: { group?: { chatId: number; home: number }; home?: number; groupCount?: number } = {},
): Promise<Report> {
  const r = { botId, from, to, ...(scope.group ? { group: scope.group } : {}) }
  const several = !scope.group && scope.home !== undefined && (scope.groupCount ?? 1) > 1
  const [rev, consultations, appeals, experts, nearest, ledger, admission, ratings, groups] =
    await Promise.all([
      revenue(db, r),
      consultationsByState(db, r),
      appealCounts(db, r),
      responseByExpert(db, r),
      nearestToBreach(db, r),
      ledgerRefusals(db, r),
      admissionRefusals(db, r),
      ratingsByExpert(db, r),
      several ? loadByGroup(db, botId, scope.home!) : Promise.resolve([]),
    ])
  return {
    from,
    to,
    revenue: rev,
    consultations,
    appeals,
    experts,
    nearest,
    ledger,
    admission,
    ratings,
    ...(scope.group ? { group: scope.group.chatId } : {}),
    groups,
  }
}

/**
 * /report with the admin's arguments: the range (relative to the database clock) and its numbers, or not ok when
 * the arguments do not name a range. `now` is what the text measures "time left" from.
 */
export async function reportFor(
  db: Db,
  desk: DeskRuntime,
  args: string,
  chatId: number = homeChat(desk),
): Promise<{ ok: true; report: Report; now: Date; names: Map<number, string> } | { ok: false }> {
  const now = await clockNow(db)
  const range = parseReportRange(args, desk, now)
  if (!range.ok) return { ok: false }
  // In the home group: the whole desk; in another staff group: that group's consultations.
  const home = homeChat(desk)
  const scope =
    chatId === home ? { home, groupCount: staffGroupsOf(desk).length } : { group: { chatId, home } }
  const report = await buildReport(db, desk.botId, range.from, range.to, scope)
  return { ok: true, report, now, names: await reportNames(db, desk, report) }
}

/** The names of the staff a report mentions (src/experts/names.ts). */
export function reportNames(db: Db, desk: DeskRuntime, r: Report): Promise<Map<number, string>> {
  return staffNames(db, desk, [
    ...r.experts.map((e) => e.staffId),
    ...r.ratings.flatMap((x) => (x.expertId === null ? [] : [x.expertId])),
  ])
}

type T = (key: string, params?: Record<string, string | number>) => string

/**
 * How the report names a staff member: by name (src/experts/names.ts, passed in as `names`), else the configured
 * role and the Telegram id.
 */
function staffLabel(t: T, desk: DeskRuntime, id: number, names: Map<number, string>): string {
  if (isStaffGroup(desk, id)) return t('report-who-anonymous')
  const name = names.get(id)
  if (name) return name
  if (desk.staff.admins.includes(id)) return t('report-who-admin', { id: String(id) })
  if (desk.staff.experts.includes(id)) return t('report-who-expert', { id: String(id) })
  return t('report-who-other', { id: String(id) })
}

export function renderReport(
  t: T,
  desk: DeskRuntime,
  r: Report,
  now: Date,
  names: Map<number, string> = new Map(),
): string {
  const lang = desk.defaultLanguage
  const at = (d: Date) => formatInstant(d, staffZone(desk), lang)
  const none = t('report-none')
  const lines = [
    t('report-title', { from: at(r.from), to: at(r.to) }),
    ...(r.group !== undefined ? [t('report-group-only', { chat: String(r.group) })] : []),
    ...(r.groups.length
      ? [
          t('report-groups', {
            list: r.groups
              .map((g) =>
                t('report-group-line', { chat: String(g.chatId), active: g.active, open: g.openAppeals }),
              )
              .join('\n'),
          }),
        ]
      : []),
    '',
    t('report-revenue', {
      paid: r.revenue.paidStars,
      paidCount: r.revenue.paidCount,
      refunded: r.revenue.refundedStars,
      refundedCount: r.revenue.refundedCount,
      net: r.revenue.netStars,
    }),
    t('report-consultations', {
      list: r.consultations.length
        ? r.consultations.map((c) => `${t(`report-state-${c.state}`)} ${c.count}`).join(', ')
        : none,
    }),
    t('report-appeals', {
      accepted: r.appeals.accepted,
      inTime: r.appeals.answeredInTime,
      late: r.appeals.answeredLate,
      breached: r.appeals.breached,
      open: r.appeals.open,
      openBreached: r.appeals.openBreached,
    }),
    '',
    t('report-experts-title'),
  ]
  if (r.experts.length === 0) lines.push(`• ${none}`)
  for (const e of r.experts)
    lines.push(
      t('report-expert-line', {
        who: staffLabel(t, desk, e.staffId, names),
        median: String(Math.round(e.medianMinutes * 10) / 10),
        answered: e.answered,
        inTime: e.inTime,
      }),
    )
  lines.push('', t('report-ratings-title'))
  if (r.ratings.length === 0) lines.push(`• ${none}`)
  for (const x of r.ratings)
    lines.push(
      t('report-rating-line', {
        who: x.expertId === null ? t('report-who-nobody') : staffLabel(t, desk, x.expertId, names),
        average: x.average.toFixed(2),
        count: x.count,
      }),
    )
  lines.push('', t('report-nearest-title'))
  if (r.nearest.length === 0) lines.push(`• ${none}`)
  for (const a of r.nearest)
    lines.push(
      t('report-nearest-line', {
        consultation: String(a.consultationId),
        number: a.number,
        due: at(a.dueAt),
        left:
          a.dueAt.getTime() > now.getTime()
            ? t('report-nearest-left', {
                left: formatDuration(businessMinutesLeft(desk, now, a.dueAt), lang),
              })
            : t('report-nearest-over'),
      }),
    )
  lines.push('', t('report-ledger-title'))
  if (r.ledger.length === 0) lines.push(`• ${none}`)
  for (const x of r.ledger)
    lines.push(
      t('report-refusal-line', {
        reason: t('report-reason', { reason: x.reason }),
        account: t('report-account', { account: `${x.scope ?? '?'}-${x.unit ?? '?'}` }),
        count: x.count,
      }),
    )
  lines.push('', t('report-admission-title'))
  if (r.admission.length === 0) lines.push(`• ${none}`)
  for (const x of r.admission)
    lines.push(
      t('report-admission-line', { reason: t('report-reason', { reason: x.reason }), count: x.count }),
    )
  return lines.join('\n')
}
