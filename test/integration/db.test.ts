import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../support/db'

let t: TestDatabase
beforeAll(async () => {
  t = await createTestDatabase()
})
afterAll(() => t.drop())

describe('database', () => {
  it('parses int8 as number and keeps Telegram-sized ids exact', async () => {
    const r = await sql<{ v: number }>`select ${-1001234567890}::bigint as v`.execute(t.db)
    expect(r.rows[0]!.v).toBe(-1001234567890)
  })

  it('refuses an int8 that would lose precision', async () => {
    await expect(sql`select 9007199254740993::bigint as v`.execute(t.db)).rejects.toThrow(/safe integer/)
  })

  it('parses int8[] element by element', async () => {
    const r = await sql<{ v: number[] }>`select array[1, ${-1001234567890}]::bigint[] as v`.execute(t.db)
    expect(r.rows[0]!.v).toEqual([1, -1001234567890])
  })

  it('has the migrations applied', async () => {
    const r = await sql<{ n: number }>`select count(*)::int as n from kysely_migration`.execute(t.db)
    expect(r.rows[0]!.n).toBeGreaterThan(0)
  })
})
