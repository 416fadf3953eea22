import { deskRole } from '../config/access'
import type { DeskConfig } from '../config/schema'

/**
 * The staff part of a desk document, as the set-up flow changes it (src/setup). Pure functions on the document
 * changeDeskIn hands over; every check that needs the database (invites, claims) is done by the caller in the same
 * transaction.
 *
 * Roles: the owner is also an admin (listed in staff.admins, so every admin check holds for them); an admin is in
 * staff.admins and not in staff.experts; an expert in staff.experts (and in every listed staff group's experts).
 */
export type StaffRole = 'owner' | 'admin' | 'expert'

type StaffOf = Pick<DeskConfig, 'staff'>

/** The owner, or undefined (a desk set up from YAML may have none: its admins run it). */
export function ownerOf(desk: StaffOf): number | undefined {
  return desk.staff.owner ?? undefined
}

export { isDeskAdmin, isOwner } from '../config/access'

/** The person's role in the desk (src/config/access.ts), undefined when not staff. */
export function roleOf(desk: StaffOf, userId: number): StaffRole | undefined {
  const r = deskRole(desk, userId)
  return r === 'none' ? undefined : r
}

/** Everyone told about the desk's groups: the owner and the admins, once each. */
export function deskAdmins(desk: StaffOf): number[] {
  const owner = ownerOf(desk)
  return [...new Set([...(owner !== undefined ? [owner] : []), ...desk.staff.admins])]
}

/** A Telegram name as a card shows it: first and last name, at most 64 code points. */
export function telegramName(u: { first_name: string; last_name?: string | undefined }): string {
  const full = [u.first_name, u.last_name].filter(Boolean).join(' ').trim() || 'Staff'
  return [...full].slice(0, 64).join('')
}

function without(list: number[], id: number): number[] {
  return list.filter((x) => x !== id)
}

/** Sets a person's role (owner stays owner; use makeOwner for that). Keeps the name if one is set. */
export function setRole(doc: DeskConfig, userId: number, role: 'admin' | 'expert', name?: string): void {
  const s = doc.staff
  if (role === 'admin') {
    s.admins = [...without(s.admins, userId), userId]
    s.experts = without(s.experts, userId)
    for (const g of doc.staffGroups ?? []) g.experts = without(g.experts, userId)
  } else {
    s.admins = without(s.admins, userId)
    s.experts = [...without(s.experts, userId), userId]
    for (const g of doc.staffGroups ?? []) g.experts = [...without(g.experts, userId), userId]
  }
  setNameIfNone(doc, userId, name)
}

export function makeOwner(doc: DeskConfig, userId: number, name?: string): void {
  doc.staff.owner = userId
  if (!doc.staff.admins.includes(userId)) doc.staff.admins = [...doc.staff.admins, userId]
  doc.staff.experts = without(doc.staff.experts, userId)
  setNameIfNone(doc, userId, name)
}

/** Takes a person off the staff: both lists, every group, their name and days off. */
export function removeStaff(doc: DeskConfig, userId: number): void {
  doc.staff.admins = without(doc.staff.admins, userId)
  doc.staff.experts = without(doc.staff.experts, userId)
  for (const g of doc.staffGroups ?? []) g.experts = without(g.experts, userId)
  delete doc.expertSettings.names[String(userId)]
  delete doc.expertSettings.daysOff[String(userId)]
}

function setNameIfNone(doc: DeskConfig, userId: number, name: string | undefined): void {
  if (name && !doc.expertSettings.names[String(userId)]) doc.expertSettings.names[String(userId)] = name
}

/** The name shown for a staff member: the desk's name for them (set from their Telegram name at join), or ''. */
export function staffName(desk: Pick<DeskConfig, 'expertSettings'>, userId: number): string {
  return desk.expertSettings.names[String(userId)] ?? ''
}

/**
 * Adds a group the bot checked: the first becomes the home group (staffChatId); a further one makes the desk list
 * its groups (staffGroups: the home group and the new one, each with every expert). False when it is one already.
 */
export function addStaffGroup(doc: DeskConfig, chatId: number): 'home' | 'listed' | 'already' {
  if (doc.staffChatId === undefined || doc.staffChatId === null) {
    doc.staffChatId = chatId
    return 'home'
  }
  if (doc.staffChatId === chatId || (doc.staffGroups ?? []).some((g) => g.chatId === chatId)) return 'already'
  const groups = doc.staffGroups?.length
    ? doc.staffGroups
    : [{ chatId: doc.staffChatId, experts: [...doc.staff.experts] }]
  doc.staffGroups = [...groups, { chatId, experts: [...doc.staff.experts] }]
  return 'listed'
}
