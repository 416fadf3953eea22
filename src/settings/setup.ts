import type { DeskConfig } from '../config/schema'

/**
 * Whether a desk may sell (issue 24). A desk started with only a token has no owner, no staff group and no tariffs,
 * and sells nothing until it has all three. `setupGaps` says what is missing, in this order:
 * - `no-owner`: neither `staff.owner` nor any admin (a desk configured in YAML with admins is run by them);
 * - `no-staff-group`: no `staffChatId`;
 * - `no-tariff`: no tariff and no plan.
 */
export type SetupGap = 'no-owner' | 'no-staff-group' | 'no-tariff'

export type SetupFields = Pick<DeskConfig, 'staff' | 'tariffs'> & {
  staffChatId?: number | undefined
  plans?: readonly unknown[] | undefined
}

export function setupGaps(desk: SetupFields): SetupGap[] {
  const gaps: SetupGap[] = []
  if (desk.staff.owner === undefined && desk.staff.admins.length === 0) gaps.push('no-owner')
  if (desk.staffChatId === undefined) gaps.push('no-staff-group')
  if (desk.tariffs.length === 0 && (desk.plans?.length ?? 0) === 0) gaps.push('no-tariff')
  return gaps
}

export function isSetUp(desk: SetupFields): boolean {
  return setupGaps(desk).length === 0
}

/** Whether clients can buy: someone runs the desk and its staff group is set (a tariff to buy is checked apart). */
export function openForSale(desk: SetupFields): boolean {
  return !setupGaps(desk).some((g) => g === 'no-owner' || g === 'no-staff-group')
}
