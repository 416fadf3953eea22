import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chooseStaffGroup, staffGroupsOf } from '../../src/routing/staff-groups'
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

async function routes(chat: number, n: number, from: number) {
  // Routes alone (their consultations do not matter here): foreign keys off for this transaction.
  await db.db.transaction().execute(async (trx) => {
    await sql`set local session_replication_role = replica`.execute(trx)
    for (let i = 0; i < n; i++)
      await sql`insert into desk_route (bot_id, support_chat_id, message_thread_id, consultation_id, user_id, topic_name)
        values (${BOT}, ${chat}, ${from + i}, ${from + i}, ${from + i}, 't')`.execute(trx)
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
    await routes(A, 2, 100)
    expect(await chooseStaffGroup(db.db, desk)).toBe(B)
    expect(await chooseStaffGroup(db.db, desk, 11)).toBe(A)
    await routes(B, 3, 200)
    expect(await chooseStaffGroup(db.db, desk)).toBe(A)
    expect(await chooseStaffGroup(db.db, desk, 20)).toBe(B)
    // An owner in no group: the least loaded.
    expect(await chooseStaffGroup(db.db, desk, 99)).toBe(A)
  })
})
