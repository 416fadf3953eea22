import { describe, expect, it } from 'vitest'
import {
  type DeskAccess,
  deskRole,
  groupRole,
  mayActOn,
  type Role,
  roleHere,
  roleOn,
  type Sender,
} from '../../src/config/access'

/**
 * The desk's one access policy (src/config/access.ts), as a table: who is what in the desk, in each group, as an
 * anonymous admin, and on a consultation judged in its own group. No database, no bot.
 */

const HOME = -1001
const B = -1002
const OTHER = -1003 // a group that is not the desk's
const OWNER = 1
const ADMIN = 2
const ED = 3 // expert listed in the home group
const EVE = 4 // expert listed in group B
const STRAY = 5 // expert in no listed group
const CLIENT = 9

const base = {
  slug: 'd',
  staff: { owner: OWNER, admins: [OWNER, ADMIN], experts: [ED, EVE, STRAY], anonymousAdmins: false },
  staffChatId: HOME,
}
const oneGroup: DeskAccess & { slug: string } = base
const groups: DeskAccess & { slug: string } = {
  ...base,
  staffGroups: [
    { chatId: HOME, experts: [ED] },
    { chatId: B, experts: [EVE] },
  ],
}
const anonymousOn = (d: DeskAccess & { slug: string }) => ({
  ...d,
  staff: { ...d.staff, anonymousAdmins: true },
})
const noOwner = { ...base, staff: { ...base.staff, owner: undefined } }

const user = (id: number, is_bot = false): Sender => ({ from: { id, is_bot } })
const asChat = (id: number): Sender => ({ from: { id: 1087968824, is_bot: true }, sender_chat: { id } })
const priv = (id: number) => ({ id, type: 'private' })
const group = (id: number) => ({ id, type: 'supergroup' })

describe('access policy: the role in the desk', () => {
  const rows: [string, DeskAccess, number, Role][] = [
    ['the owner', oneGroup, OWNER, 'owner'],
    ['an admin', oneGroup, ADMIN, 'admin'],
    ['an expert', oneGroup, ED, 'expert'],
    ['a client', oneGroup, CLIENT, 'none'],
    ['a desk from YAML without an owner: its admins', noOwner, OWNER, 'admin'],
  ]
  it.each(rows)('%s', (_, desk, id, role) => expect(deskRole(desk, id)).toBe(role))
})

describe('access policy: the role where an update comes from', () => {
  const rows: [string, DeskAccess, { id: number; type: string } | undefined, Sender, Role][] = [
    ['expert in private', groups, priv(STRAY), user(STRAY), 'expert'],
    ['client in private', groups, priv(CLIENT), user(CLIENT), 'none'],
    ['owner in any group of the desk', groups, group(B), user(OWNER), 'owner'],
    ['admin in a group that lists no one', groups, group(B), user(ADMIN), 'admin'],
    ['expert in the group that lists them', groups, group(B), user(EVE), 'expert'],
    ['expert in a group that does not list them', groups, group(HOME), user(EVE), 'none'],
    ['expert in no listed group, in the listed home group', groups, group(HOME), user(STRAY), 'none'],
    ['every expert in the home group of a one-group desk', oneGroup, group(HOME), user(STRAY), 'expert'],
    [
      'an unlisted home group keeps every expert',
      { ...base, staffGroups: [{ chatId: B, experts: [EVE] }] },
      group(HOME),
      user(ED),
      'expert',
    ],
    ['client in a staff group', groups, group(HOME), user(CLIENT), 'none'],
    ['a bot, even with an admin id', groups, group(HOME), user(ADMIN, true), 'none'],
    ['nobody (no from)', groups, group(HOME), {}, 'none'],
    ['anonymous admin, desk says no', groups, group(HOME), asChat(HOME), 'none'],
    ['anonymous admin, desk says yes', anonymousOn(groups), group(HOME), asChat(HOME), 'admin'],
    ['anonymous admin in a listed group', anonymousOn(groups), group(B), asChat(B), 'admin'],
    ['a group posting as itself outside the desk', anonymousOn(groups), group(OTHER), asChat(OTHER), 'none'],
    ['a channel posting into a staff group', anonymousOn(groups), group(HOME), asChat(-100777), 'none'],
    ['a sender chat in private', anonymousOn(groups), priv(CLIENT), asChat(HOME), 'none'],
  ]
  it.each(rows)('%s', (_, desk, chat, sender, role) => expect(roleHere(desk, chat, sender)).toBe(role))

  it('groupRole agrees with roleHere for users in groups', () => {
    for (const id of [OWNER, ADMIN, ED, EVE, STRAY, CLIENT])
      for (const chat of [HOME, B])
        expect(groupRole(groups, chat, id)).toBe(roleHere(groups, group(chat), user(id)))
  })
})

describe('access policy: the role on a consultation, in its own group', () => {
  const inB = { staff_chat_id: B }
  const old = { staff_chat_id: null } // activated before groups existed: the home group
  const rows: [string, DeskAccess & { slug: string }, { staff_chat_id: number | null }, number, Role][] = [
    ['expert of its group', groups, inB, EVE, 'expert'],
    ['expert of another group (a forged button)', groups, inB, ED, 'none'],
    ['admin on any consultation', groups, inB, ADMIN, 'admin'],
    ['owner on any consultation', groups, old, OWNER, 'owner'],
    ['an older consultation: the home group', groups, old, ED, 'expert'],
    ['an older consultation, expert of B', groups, old, EVE, 'none'],
    ['anonymous admin of its group, desk says no', groups, inB, B, 'none'],
    ['anonymous admin of its group, desk says yes', anonymousOn(groups), inB, B, 'admin'],
    ['anonymous admin of another group', anonymousOn(groups), inB, HOME, 'none'],
    ['a client', groups, inB, CLIENT, 'none'],
  ]
  it.each(rows)('%s', (_, desk, c, id, role) => {
    expect(roleOn(desk, c, id)).toBe(role)
    expect(mayActOn(desk, c, id)).toBe(role !== 'none')
  })
})
