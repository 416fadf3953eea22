import type { DeskConfig } from '../config/schema'

/**
 * Whether a desk may sell (issue 24): a desk being set up from Telegram starts with no owner, no staff group and
 * no tariffs, and sells nothing until it has all three. `setupGaps` says what is missing, in this order.
 */
export type SetupGap = 'no-owner' | 'no-staff-group' | 'no-tariff'

type SetupFields = Pick<DeskConfig, 'staff' | 'tariffs'> & { staffChatId?: number | undefined }

export function setupGaps(desk: SetupFields): SetupGap[] {
  const gaps: SetupGap[] = []
  if (desk.staff.owner === undefined) gaps.push('no-owner')
  if (desk.staffChatId === undefined) gaps.push('no-staff-group')
  if (desk.tariffs.length === 0) gaps.push('no-tariff')
  return gaps
}

export function isSetUp(desk: SetupFields): boolean {
  return setupGaps(desk).length === 0
}
