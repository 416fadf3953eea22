import { defineQueue } from '../jobs/queue'

/** Activates a consultation at its agreed start (a scheduled slot, or a start agreed after a late payment). */
export const scheduledStartQueue = defineQueue<{ consultationId: number; startsAt: string }>(
  'orders.scheduled-start',
)

/** Every minute: lapsed capacity holds, stale unpaid orders, ended Start periods (see sweepOrders). */
export const ordersSweepQueue = defineQueue<Record<string, never>>('orders.sweep', {
  retryLimit: 1,
  expireInSeconds: 60,
})

/**
 * A reminder to the client before a start (issue 22): `start` an hour before a scheduled start (a slot, the desk's
 * opening, a start agreed after a late payment), `deadline` a day before an on_request order's Start period ends.
 * Written by the transaction that schedules the start or sets the deadline (scheduleStart,
 * scheduleStartDeadlineReminder), under a job id made of the consultation, the kind and the instant, so a start moved
 * to another instant gets its own reminder and the old one finds the order changed and sends nothing
 * (src/lifecycle/start-reminders.ts).
 */
export interface StartReminderJob {
  consultationId: number
  kind: 'start' | 'deadline'
  /** ISO instant of the start (kind start) or of the order's start_by (kind deadline). */
  at: string
}
export const startReminderQueue = defineQueue<StartReminderJob>('orders.start-reminder')

/** How long before the start / the Start deadline the client is reminded. */
export const START_REMINDER_LEAD_MS = 3_600_000
export const START_DEADLINE_REMINDER_LEAD_MS = 24 * 3_600_000

/**
 * The end of a waitlist hold (src/orders/waitlist.ts): written with the hold, for its end (startAfter), one per
 * entry (its id from the entry). Unbought by then, the held place passes to the next in line; an entry already
 * bought, left or ended is left as it is.
 */
export const waitlistHoldQueue = defineQueue<{ entryId: number }>('orders.waitlist-hold')
