import { DateTime } from 'luxon'
import type { DeskRuntime } from '../config/load'
import type { Deps } from '../deps'
import type { Viewer } from './access'
import { type Column, toCsv } from './csv'
import {
  type ConsultationExportRow,
  consultationRows,
  type PaymentExportRow,
  paymentRows,
  type QuestionExportRow,
  questionRows,
} from './dashboard.export.repository'
import type { ExportKind, ExportLinkDto } from './dashboard.model'
import { adminOnly, DashboardError } from './dashboard.service'
import { type ExportGrant, signExport } from './export-token'

/**
 * CSV exports: a signed, short-lived link for an admin, and the files behind it with stable columns in the desk's
 * time zone (payments, consultations, questions with SLA).
 */

/** Longest range a CSV export covers. */
export const MAX_EXPORT_DAYS = 366
/** How long an export link works (and never past the initData it was asked with). */
export const EXPORT_LINK_SECONDS = 300

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
