import type { DeskRuntime } from '../config/load'
import { addBusinessMinutes, businessMinutesBetween } from '../time/business-time'
import { deskSchedule } from '../time/schedule'

/**
 * An appeal's SLA in business time: due = accepted_at + the order's sla_minutes of the desk's schedule, and the
 * first answer's business minutes. The instants come from the database clock (accepted_at = the admission's
 * checked_at, first_response_at = the answer's); this module only does the calendar arithmetic.
 */

export function appealDueAt(desk: DeskRuntime, acceptedAt: Date, slaMinutes: number): Date {
  return addBusinessMinutes(deskSchedule(desk), acceptedAt, slaMinutes)
}

export interface FirstResponse {
  /** Business minutes from acceptance to the first answer, rounded up to whole minutes. */
  businessMinutes: number
  inTime: boolean
}

/** In time when the answer came no later than the due instant. */
export function firstResponse(
  desk: DeskRuntime,
  appeal: { accepted_at: Date; due_at: Date },
  at: Date,
): FirstResponse {
  const used = businessMinutesBetween(deskSchedule(desk), appeal.accepted_at, at)
  return { businessMinutes: Math.max(0, Math.ceil(used)), inTime: at.getTime() <= appeal.due_at.getTime() }
}
