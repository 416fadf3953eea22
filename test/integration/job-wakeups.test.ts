import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Jobs } from '../../src/jobs/jobs'
import { defineQueue } from '../../src/jobs/queue'
import { JobWakeups } from '../../src/jobs/wakeups'
import { quietLogger } from '../../src/log'
import { createTestDatabase, type TestDatabase } from '../support/db'

/**
 * Wake-ups across processes (src/jobs/wakeups.ts): a transaction that enqueued a job notifies at commit, and only
 * then; a job for later notifies nobody; the listener of another "process" (its own connection) hears it, and hears
 * again after its connection was killed. Checked by what arrives, in order, never by how fast.
 */

const now = defineQueue<{ n: number }>('test.wake-now', { retryLimit: 0 }, 1)
const other = defineQueue<{ n: number }>('test.wake-other', { retryLimit: 0 }, 1)

let t: TestDatabase
let jobs: Jobs
let listener: JobWakeups
const heard: string[] = []

beforeAll(async () => {
  t = await createTestDatabase()
  jobs = Jobs.create(t.url, [now, other], quietLogger(), { schedule: false })
  await jobs.start()
  listener = new JobWakeups(t.url, (q) => heard.push(q), quietLogger())
  listener.start()
  await listening()
})
afterAll(async () => {
  await listener?.stop()
  await jobs?.stop()
  await t?.drop()
})

async function listening(): Promise<void> {
  await until(async () => {
    const r = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
      where application_name = 'consult-desk-wakeups' and datname = current_database() and query ilike 'listen%'`.execute(
      t.db,
    )
    return r.rows[0]!.n > 0
  }, 'the listener')
}

async function until(check: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

/** A committed transaction with a job on `other`: once it is heard, everything before it has been heard too. */
async function fence(): Promise<void> {
  const before = heard.filter((q) => q === other.name).length
  await jobs.transaction(t.db, (_trx, outbox) => outbox.send(other, { n: 0 }))
  await until(async () => heard.filter((q) => q === other.name).length > before, 'the fence')
}

describe('job wake-ups across processes', () => {
  it('a commit that enqueued wakes the other process; a rollback and a job for later wake nobody', async () => {
    heard.length = 0
    await jobs
      .transaction(t.db, async (_trx, outbox) => {
        await outbox.send(now, { n: 1 })
        throw new Error('roll back')
      })
      .catch(() => {})
    await jobs.transaction(t.db, (_trx, outbox) => outbox.send(now, { n: 2 }, { startAfter: 3600 }))
    await fence()
    expect(heard).toEqual([other.name])
    await jobs.transaction(t.db, async (_trx, outbox) => {
      await outbox.send(now, { n: 3 })
      await outbox.send(other, { n: 4 })
      await outbox.send(now, { n: 5 })
    })
    await until(async () => heard.length === 3, 'the commit')
    expect(heard.slice(1).sort()).toEqual([other.name, now.name].sort())
  })

  it('hears again after its connection was killed (the database blinked)', async () => {
    await sql`select pg_terminate_backend(pid) from pg_stat_activity
      where application_name = 'consult-desk-wakeups' and datname = current_database()`.execute(t.db)
    await until(async () => {
      const r = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
        where application_name = 'consult-desk-wakeups' and datname = current_database()`.execute(t.db)
      return r.rows[0]!.n === 0
    }, 'the kill')
    await listening()
    heard.length = 0
    await fence()
    expect(heard).toEqual([other.name])
  })
})
