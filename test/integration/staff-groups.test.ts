import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { staffGroupsOf } from '../../src/config/staff-groups'
import { chooseStaffGroup } from '../../src/routing/staff-groups'
import { createTestDatabase, type TestDatabase } from '../support/db'

/** The choice of a staff group for a new consultation: the owner's group, else the least loaded; one group as before. */

let db: TestDatabase
beforeAll(async () => {
  db = await createTestDatabase(2)
})
afterAll(() => db.drop())

const BOT = 7000001
const A = -1001
const B = -1002
const desk = {
  botId: BOT,
  staffChatId: A,
  staff: { admins: [1], experts: [10], anonymousAdmins: false },
  staffGroups: [
    { chatId: A, experts: [10, 11] },
    { chatId: B, experts: [20] },
  ],
}

async function live(chat: number | null, n: number, from: number) {
  // Consultations alone (their orders do not matter here): foreign keys off for this transaction.
  await db.db.transaction().execute(async (trx) => {
    await sql`set local session_replication_role = replica`.execute(trx)
    for (let i = 0; i < n; i++)
      await sql`insert into consultation (bot_id, order_id, user_id, state, staff_chat_id)
        values (${BOT}, ${from + i}, ${from + i}, 'active', ${chat})`.execute(trx)
  })
}

describe('choosing a staff group', () => {
  it('one group: staffChatId, with or without an owner', async () => {
    const one = { ...desk, staffGroups: undefined }
    expect(staffGroupsOf(one)).toEqual([{ chatId: A, experts: [10] }])
    expect(await chooseStaffGroup(db.db, one)).toBe(A)
    expect(await chooseStaffGroup(db.db, one, 20)).toBe(A)
  })

  it("the owner's group first, else the least loaded (ties: the first listed)", async () => {
    expect(await chooseStaffGroup(db.db, desk)).toBe(A)
    await live(A, 2, 100)
    expect(await chooseStaffGroup(db.db, desk)).toBe(B)
    expect(await chooseStaffGroup(db.db, desk, 11)).toBe(A)
    await live(B, 3, 200)
    expect(await chooseStaffGroup(db.db, desk)).toBe(A)
    expect(await chooseStaffGroup(db.db, desk, 20)).toBe(B)
    // An owner in no group: the least loaded.
    expect(await chooseStaffGroup(db.db, desk, 99)).toBe(A)
    // Consultations from before groups (no group stored) count for the home group; closed ones for none.
    await live(null, 2, 300)
    expect(await chooseStaffGroup(db.db, desk)).toBe(B)
    await sql`update consultation set state = 'closed' where bot_id = ${BOT} and staff_chat_id = ${B}`.execute(
      db.db,
    )
    expect(await chooseStaffGroup(db.db, desk)).toBe(B)
    await live(B, 5, 400)
    expect(await chooseStaffGroup(db.db, desk)).toBe(A)
    // The consultation being placed (active already in its activation's transaction) is not its own load.
    await live(A, 1, 500)
    const placed = await sql<{ id: number }>`select id from consultation where order_id = 500`.execute(db.db)
    expect(await chooseStaffGroup(db.db, desk, null, placed.rows[0]!.id)).toBe(A)
    expect(await chooseStaffGroup(db.db, desk)).toBe(A) // 5 and 5: a tie goes to the first listed
    await live(A, 1, 501)
    expect(await chooseStaffGroup(db.db, desk, null, placed.rows[0]!.id)).toBe(A)
    expect(await chooseStaffGroup(db.db, desk)).toBe(B)
  })
})
