import { addBusinessMinutes, businessMinutesBetween, nextOpening } from './business-time'
import { type DeskSchedule, deskSchedule } from './schedule'
import { timeWord } from './words'

/** What these instants need of a desk (a DeskRuntime is one): its schedule and its reminder leads. */
export interface DeskReminders extends DeskSchedule {
  readonly reminders: { readonly beforeDueBusinessMinutes: number; readonly beforeCloseMinutes: number }
}

/**
 * When the SLA and window jobs are due: pure calendar arithmetic over the desk's schedule and config. The instants
 * they are applied to come from the database clock.
 */

/**
 * The reminder instant of an appeal: `beforeDueBusinessMinutes` of business time before its due time, i.e. the
 * instant from which exactly that much working time is left. Computed forward from acceptance (due = accepted +
 * SLA) so the two agree to the millisecond; a result on a closing instant moves to the next opening (Friday 18:00
 * for a Monday 10:30 due time becomes Monday 10:00: the reminder comes when someone is there to read it).
 * None when the reminders are off or the SLA is not longer than the lead (the reminder would come at once).
 */
export function reminderAt(
  desk: DeskReminders,
  a: { accepted_at: Date; sla_minutes: number },
): Date | undefined {
  const lead = desk.reminders.beforeDueBusinessMinutes
  if (lead <= 0 || a.sla_minutes <= lead) return undefined
  const s = deskSchedule(desk)
  return nextOpening(s, addBusinessMinutes(s, a.accepted_at, a.sla_minutes - lead))
}

/** Business minutes left until `due` from `now` (never negative), whole minutes rounded up. */
export function businessMinutesLeft(desk: DeskSchedule, now: Date, due: Date): number {
  if (due.getTime() <= now.getTime()) return 0
  return Math.ceil(businessMinutesBetween(deskSchedule(desk), now, due))
}

/**
 * The "closes soon" instant of a window: `beforeCloseMinutes` (wall-clock) before access_until. None when the
 * notice is off or the window is too short for it to come after the start.
 */
export function closingSoonAt(
  desk: DeskReminders,
  c: { starts_at: Date; access_until: Date },
): Date | undefined {
  const lead = desk.reminders.beforeCloseMinutes
  if (lead <= 0) return undefined
  const at = new Date(c.access_until.getTime() - lead * 60_000)
  return at.getTime() > c.starts_at.getTime() ? at : undefined
}

/** A duration for clients and staff: "2 h 05 min", "45 min", "3 days 4 h" (the words: time.ftl). */
export function formatDuration(minutes: number, lang: string): string {
  const m = Math.max(0, Math.round(minutes))
  const days = Math.floor(m / 1440)
  const hours = Math.floor((m % 1440) / 60)
  const mins = m % 60
  const d = () => timeWord(lang, 'time-days', { n: days }, `${days} ${days === 1 ? 'day' : 'days'}`)
  const h = () => timeWord(lang, 'time-hours', { n: hours }, `${hours} h`)
  const min = (n: string) => timeWord(lang, 'time-minutes', { n }, `${n} min`)
  if (days > 0) return hours > 0 ? `${d()} ${h()}` : d()
  if (hours > 0) return mins > 0 ? `${h()} ${min(String(mins).padStart(2, '0'))}` : h()
  return min(String(mins))
}
