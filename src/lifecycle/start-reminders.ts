import { clientZone } from '../clients/clients.service'
import { clockNow } from '../db/clock'
import type { Deps } from '../deps'
import {
  START_DEADLINE_REMINDER_LEAD_MS,
  START_REMINDER_LEAD_MS,
  type StartReminderJob,
} from '../orders/orders.jobs'
import { notify } from '../telegram/notify'
import { isOpen, nextOpening } from '../time/business-time'
import { formatInstant } from '../time/format'
import { deskSchedule } from '../time/schedule'

/**
 * The client's reminders before a start (issue 22; the jobs are written by src/orders/orders.service.ts in the
 * transaction that schedules the start or sets the Start deadline):
 *
 * - `start`: an hour before a scheduled start (a slot, the desk's opening, a start agreed after a late payment):
 *   when it starts, in the client's zone, and how long until then;
 * - `deadline`: a day before an on_request order's Start period ends: until when Start can be pressed, with the
 *   Start button (and, while the desk is closed, when it opens: Start works during business hours).
 *
 * Sent only while the reminder still holds: the consultation still waiting, the order paid and waiting for this very
 * instant (a moved start has its own reminder, keyed by the new instant; a cancel or refund, an activation, an ended
 * Start period change the state), and the order unchanged since the reminder's instant - an order paid, moved or
 * agreed later than that (a slot bought 20 minutes before it starts) was just told when, so no second message.
 * The decision reads the order (locked) and consultation in one transaction with the notification written to the
 * outbox, whose once-key (order, kind, instant) makes a retried or duplicated job send one message.
 */
export async function runStartReminder(deps: Deps, job: StartReminderJob): Promise<'sent' | 'skipped'> {
  return deps.jobs.transaction(deps.db, async (trx, outbox) => {
    const row = await trx
      .selectFrom('consultation as c')
      .innerJoin('orders as o', 'o.id', 'c.order_id')
      .select([
        'c.state as consultation_state',
        'o.id',
        'o.bot_id',
        'o.user_id',
        'o.lang',
        'o.title',
        'o.state',
        'o.start_mode',
        'o.slot_start',
        'o.start_by',
        'o.needs_start_date',
        'o.updated_at',
      ])
      .where('c.id', '=', job.consultationId)
      // The order's lock, as a move, a cancel or refund and an activation take it: the decision and the message
      // commit before any of them, or see what they did.
      .forUpdate('o')
      .executeTakeFirst()
    if (row?.consultation_state !== 'waiting' || row.state !== 'paid_waiting') return 'skipped'
    const at = new Date(job.at)
    const deadline = job.kind === 'deadline'
    const lead = deadline ? START_DEADLINE_REMINDER_LEAD_MS : START_REMINDER_LEAD_MS
    const now = await clockNow(trx)
    if (now.getTime() >= at.getTime()) return 'skipped'
    if (row.updated_at.getTime() >= at.getTime() - lead) return 'skipped'
    if (deadline) {
      if (row.start_mode !== 'on_request' || row.needs_start_date || row.start_by?.getTime() !== at.getTime())
        return 'skipped'
    } else if (row.needs_start_date || (row.slot_start && row.slot_start.getTime() !== at.getTime())) {
      // A start agreed for an on_request order keeps no slot (it cannot be moved); every other one is the slot.
      return 'skipped'
    }
    const desk = deps.desk(row.bot_id)
    const zone = await clientZone(trx, desk, row.user_id)
    const lang = row.lang
    const params = {
      title: row.title,
      at: formatInstant(at, zone, lang),
      left: timeLeft(deps, lang, at.getTime() - now.getTime()),
    }
    const schedule = deskSchedule(desk)
    const opens = deadline && !isOpen(schedule, now) ? nextOpening(schedule, now) : undefined
    // Closed until past the deadline: Start cannot be pressed in time, so no "press Start"; the end of the Start
    // period brings the next free starts and the refund (src/orders/orders.service.ts sweepOrders).
    if (opens && opens.getTime() >= at.getTime()) return 'skipped'
    await notify(outbox, {
      botId: row.bot_id,
      chatId: row.user_id,
      lang,
      key: deadline ? 'start-reminder-deadline' : 'start-reminder-start',
      params,
      ...(opens
        ? { more: [{ key: 'start-reminder-desk-opens', params: { at: formatInstant(opens, zone, lang) } }] }
        : {}),
      ...(deadline
        ? {
            replyMarkup: {
              inline_keyboard: [
                [{ text: deps.i18n.t(lang, 'btn-start'), callback_data: `ord:start:${row.id}` }],
              ],
            },
          }
        : {}),
      consultationId: job.consultationId,
      dedupeKey: `order:${row.id}:start-reminder:${job.kind}:${at.getTime()}`,
    })
    return 'sent'
  })
}

/** "1 hour", "24 hours", "45 minutes": whole hours from an hour on, else whole minutes (plural forms in Fluent). */
function timeLeft(deps: Deps, lang: string, ms: number): string {
  const minutes = Math.max(1, Math.round(ms / 60_000))
  return minutes >= 60
    ? deps.i18n.t(lang, 'start-reminder-hours', { n: Math.round(minutes / 60) })
    : deps.i18n.t(lang, 'start-reminder-minutes', { n: minutes })
}
