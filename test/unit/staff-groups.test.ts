import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { mayActIn } from '../../src/config/access'
import { type DeskRuntime, parseConfig } from '../../src/config/load'
import { expertsOfGroup, isStaffGroup, staffChatOf, staffGroupsOf } from '../../src/config/staff-groups'
import { assignable } from '../../src/experts/availability'
import { TEST_CONFIG } from '../support/app'

/** Several staff groups per desk without a database: who acts where, the config's checks. */

const yaml = readFileSync(TEST_CONFIG, 'utf8')
const HOME = -1009000000001
const B = -1009000000002
const ADMIN = 900001
const ED = 900002
const EVE = 900003

function desk(extra: string, experts = `[${ED}, ${EVE}]`): DeskRuntime {
  const text = yaml
    .replace(`      experts: [${ED}]\n`, `      experts: ${experts}\n`)
    .replace('    holdMinutes: 30\n', `    holdMinutes: 30\n${extra}`)
  return parseConfig('test.yaml', text).desks[0] as DeskRuntime
}

const groups = `    staffGroups:
      - { chatId: ${HOME}, experts: [${ED}] }
      - { chatId: ${B}, experts: [${EVE}] }
`

describe('staff groups: who acts where', () => {
  it('one group (no staffGroups): the home group, every expert, as before', () => {
    const d = desk('')
    expect(staffGroupsOf(d)).toEqual([{ chatId: HOME, experts: [ED, EVE] }])
    expect(mayActIn(d, HOME, EVE)).toBe(true)
    expect(isStaffGroup(d, B)).toBe(false)
    expect(staffChatOf(d, { staff_chat_id: null })).toBe(HOME)
  })

  it('several: experts act in the groups that list them, admins everywhere; strangers nowhere', () => {
    const d = desk(groups)
    expect(isStaffGroup(d, B)).toBe(true)
    expect(isStaffGroup(d, -5)).toBe(false)
    expect(mayActIn(d, B, EVE)).toBe(true)
    expect(mayActIn(d, B, ED)).toBe(false)
    expect(mayActIn(d, HOME, EVE)).toBe(false)
    expect(mayActIn(d, B, ADMIN)).toBe(true)
    expect(mayActIn(d, B, 12345)).toBe(false)
    expect(expertsOfGroup(d, B)).toEqual([EVE])
    expect(staffChatOf(d, { staff_chat_id: B })).toBe(B)
    expect(staffChatOf(d, { staff_chat_id: null })).toBe(HOME)
  })

  it('a home group that is not listed keeps its older topics for every expert; owners come from the groups', () => {
    const d = desk(`    staffGroups:\n      - { chatId: ${B}, experts: [${EVE}] }\n`)
    expect(mayActIn(d, HOME, ED)).toBe(true)
    expect(mayActIn(d, B, ED)).toBe(false)
    // Ed is in no group: a consultation given to him would land where he cannot answer.
    expect(assignable(d)).toEqual([EVE])
  })
})

describe('staff groups: config', () => {
  it('a group listed twice, or an expert not on the staff, is refused with its path', () => {
    expect(() =>
      desk(
        `    staffGroups:\n      - { chatId: ${B}, experts: [${EVE}] }\n      - { chatId: ${B}, experts: [] }\n`,
      ),
    ).toThrow(/staffGroups\[1\]\.chatId: listed twice/)
    expect(() => desk(`    staffGroups:\n      - { chatId: ${B}, experts: [777] }\n`)).toThrow(
      /staffGroups\[0\]\.experts\[0\]: not one of staff/,
    )
    expect(() => desk(`    staffGroups:\n      - { chatId: ${B}, experts: [${EVE}], title: x }\n`)).toThrow(
      /staffGroups\[0\]\.title: unknown key/,
    )
  })
})
