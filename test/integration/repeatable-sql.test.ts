import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { migrateToLatest, type RepeatableFile, repeatableFiles } from '../../src/db/migrator'
import { createTestDatabase, type TestDatabase } from '../support/db'

/**
 * The database functions live in .sql files next to the code that calls them and are applied after the versioned
 * migrations whenever their text changed (src/db/migrator.ts). A probe function in a temporary directory stands in
 * for a changed file.
 */

let t: TestDatabase
let dir: string
let app: RepeatableFile[]

beforeAll(async () => {
  t = await createTestDatabase(6)
  dir = path.join(await mkdtemp(path.join(tmpdir(), 'cd-repeatable-')), 'sql')
  await mkdir(dir)
  app = await repeatableFiles()
})
afterAll(async () => {
  await t.drop()
  await rm(path.dirname(dir), { recursive: true, force: true })
})

async function probe(body: string): Promise<RepeatableFile[]> {
  await writeFile(path.join(dir, 'cd_probe.sql'), body)
  return [...app, ...(await repeatableFiles(dir))]
}

describe('repeatable database functions', () => {
  it('every function file is applied and recorded with its checksum; an unchanged file is not applied again', async () => {
    const names = app.map((f) => f.name).sort()
    expect(names).toEqual(
      expect.arrayContaining(['desk_admit', 'ledger_reserve', 'ledger_reserve_one', 'pre_checkout_hold']),
    )
    const rows = await sql<{ name: string; checksum: string }>`
      select name, checksum from repeatable_migration order by name`.execute(t.db)
    expect(rows.rows).toEqual(
      app.map((f) => ({ name: f.name, checksum: f.checksum })).sort((a, b) => a.name.localeCompare(b.name)),
    )
    expect(await migrateToLatest(t.db)).toEqual([])
  })

  it('a changed text is applied once, by one of several processes starting together', async () => {
    // The sleep keeps the first run inside its step while the others arrive: without the lock, all would apply.
    const slow = 'select pg_sleep(0.3);\n'
    const v1 = await probe(
      `${slow}create or replace function cd_probe() returns integer language sql as 'select 1';\n`,
    )
    const first = await Promise.all([1, 2, 3].map(() => migrateToLatest(t.db, { repeatables: v1 })))
    expect(first.flat()).toEqual(['sql:cd_probe'])
    const v2 = await probe(
      `${slow}create or replace function cd_probe() returns integer language sql as 'select 2';\n`,
    )
    const second = await Promise.all([1, 2, 3].map(() => migrateToLatest(t.db, { repeatables: v2 })))
    expect(second.flat()).toEqual(['sql:cd_probe'])
    const r = await sql<{ v: number }>`select cd_probe() as v`.execute(t.db)
    expect(r.rows[0]!.v).toBe(2)
  })

  it('a changed signature without a versioned drop of the old one fails, and nothing of the step is kept', async () => {
    const v3 = await probe(
      "create or replace function cd_probe(x integer) returns integer language sql as 'select x';\n",
    )
    await expect(migrateToLatest(t.db, { repeatables: v3 })).rejects.toThrow(
      /2 functions are named cd_probe: a changed signature/,
    )
    const r = await sql<{
      n: number
    }>`select count(*)::int as n from pg_proc where proname = 'cd_probe'`.execute(t.db)
    expect(r.rows[0]!.n).toBe(1)
    // After the versioned step drops the old signature, the file applies.
    await sql`drop function cd_probe()`.execute(t.db)
    expect(await migrateToLatest(t.db, { repeatables: v3 })).toEqual(['sql:cd_probe'])
    expect((await sql<{ v: number }>`select cd_probe(7) as v`.execute(t.db)).rows[0]!.v).toBe(7)
  })

  it('applies a file after the ones it requires; an unknown or circular requirement stops the migration', async () => {
    const d = path.join(await mkdtemp(path.join(tmpdir(), 'cd-requires-')), 'sql')
    await mkdir(d)
    try {
      await writeFile(path.join(d, 'a_outer.sql'), '-- requires: z_inner\nselect 1;\n')
      await writeFile(path.join(d, 'z_inner.sql'), 'select 1;\n')
      expect((await repeatableFiles(d)).map((f) => f.name)).toEqual(['z_inner', 'a_outer'])
      await writeFile(path.join(d, 'z_inner.sql'), '-- requires: a_outer\nselect 1;\n')
      await expect(repeatableFiles(d)).rejects.toThrow(/in a circle: a_outer -> z_inner -> a_outer/)
      await writeFile(path.join(d, 'z_inner.sql'), '-- requires: nowhere\nselect 1;\n')
      await expect(repeatableFiles(d)).rejects.toThrow(/requires nowhere, but no nowhere.sql exists/)
    } finally {
      await rm(path.dirname(d), { recursive: true, force: true })
    }
  })
})
