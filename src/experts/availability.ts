import { DateTime } from 'luxon'
import type { DeskRuntime } from '../config/load'
import { WEEKDAYS } from '../time/business-time'
import type { ExpertProfile } from './experts.repository'

/**
 * Who the desk's staff are for assignments, and who is available: not /away, and not on a day off of the config
 * (`expertSettings.daysOff`: weekdays or dates, in the desk's time zone).
 */

/**
 * The people a consultation can be given to: the experts (with several staff groups, those some group lists: an
 * owner must be able to answer in the group the topic goes to), or the admins when there are none.
 */
export function assignable(desk: DeskRuntime): number[] {
  const groups = desk.staffGroups ?? []
  const experts = groups.length
    ? desk.staff.experts.filter((e) => groups.some((g) => g.experts.includes(e)))
    : desk.staff.experts
  return experts.length ? [...experts] : [...desk.staff.admins]
}

/** Everyone on the staff (experts first, then admins), once each: who /assign offers. */
export function everyStaff(desk: DeskRuntime): number[] {
  return [...new Set([...desk.staff.experts, ...desk.staff.admins])]
}

/** Whether `at` is a day off of the person in the config (desk-local weekday or date). */
export function isDayOff(desk: DeskRuntime, userId: number, at: Date): boolean {
  const days = desk.expertSettings.daysOff[String(userId)]
  if (!days?.length) return false
  const d = DateTime.fromJSDate(at, { zone: desk.schedule.timezone })
  const weekday = WEEKDAYS[d.weekday - 1]!
  const date = d.toISODate()!
  return days.some((x) => x === weekday || x === date)
}

export function isAvailable(
  desk: DeskRuntime,
  userId: number,
  p: Pick<ExpertProfile, 'away_since'> | undefined,
  at: Date,
): boolean {
  return !p?.away_since && !isDayOff(desk, userId, at)
}

/** How cards, titles and notes name a staff member: the config's name, the name Telegram gave us, else the id. */
export function staffName(desk: DeskRuntime, userId: number, p?: Pick<ExpertProfile, 'name'>): string {
  return desk.expertSettings.names[String(userId)] ?? p?.name ?? `id ${userId}`
}
