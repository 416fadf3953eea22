import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Jobs } from '../../src/jobs/jobs'
import { defineQueue } from '../../src/jobs/queue'
import { quietLogger } from '../../src/log'
import { createTestDatabase, type TestDatabase } from '../support/db'

const probe = defineQueue<{ n: number }>('test.probe', { retryLimit: 0 }, 4)
const missing = defineQueue<{ n: number }>('test.never-created')

let t: TestDatabase
let a: Jobs
let b: Jobs
beforeAll(async () => {
  t = await createTestDatabase()
  await sql`create table probe_run (n int not null, worker text not null)`.execute(t.db)
  // Two pg-boss instances with their own pools: two worker processes competing for the same jobs.
  a = Jobs.create(t.url, [probe], quietLogger())
  b = Jobs.create(t.url, [probe], quietLogger())
  await a.start()
  await b.start()
  for (const [name, jobs] of [
    ['a', a],
    ['b', b],
  ] as const)
    await jobs.work(probe, async ({ n }) => {
      await sql`insert into probe_run (n, worker) values (${n}, ${name})`.execute(t.db)
    })
})
afterAll(async () => {
  await a?.stop()
  await b?.stop()
  await t?.drop()
})

async function runs(): Promise<number[]> {
  const r = await sql<{ n: number }>`select n from probe_run order by n`.execute(t.db)
  return r.rows.map((x) => x.n)
}

async function until(check: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

describe('outbox', () => {
  it('runs a job from a committed transaction exactly once and never one from a rolled-back transaction', async () => {
    const N = 200
    for (let n = 1; n <= N; n++) {
      const commit = n % 2 === 0
      await t.db
        .transaction()
        .execute(async (trx) => {
          await a.send(trx, probe, { n })
          if (!commit) throw new Error('roll back')
        })
        .catch(() => {})
    }
    // A handler's row is written before pg-boss marks its job completed: wait for both.
    const counts = () =>
      sql<{ n: number; done: number }>`
        select count(*)::int as n, count(*) filter (where state = 'completed')::int as done
        from pgboss.job where name = ${probe.name}`.execute(t.db)
    await until(
      async () => (await runs()).length >= N / 2 && (await counts()).rows[0]!.done >= N / 2,
      'the committed jobs',
    )
    // Rolled-back sends left no job row at all; each committed one ran once (a duplicate run would add a row).
    const jobs = await counts()
    expect(jobs.rows[0]).toEqual({ n: N / 2, done: N / 2 })
    const r = await runs()
    expect(r).toEqual(Array.from({ length: N / 2 }, (_, i) => (i + 1) * 2))
  })

  it('refuses loudly to send to a queue that was never created', async () => {
    await expect(t.db.transaction().execute((trx) => a.send(trx, missing, { n: 1 }))).rejects.toThrow(
      /does not exist/,
    )
  })

  it('commits the job with the unit of work and nudges local workers', async () => {
    await a.transaction(t.db, async (_trx, outbox) => {
      await outbox.send(probe, { n: 10_001 })
    })
    await until(async () => (await runs()).includes(10_001), 'the nudged job')
  })
})

describe('stop', () => {
  it('a handler that outlives the grace: its job goes back to the queue and its late end is no unhandled rejection', async () => {
    const slow = defineQueue<{ n: number }>('test.slow', { retryLimit: 1, retryDelay: 0 }, 1)
    const c = Jobs.create(t.url, [slow], quietLogger())
    await c.start()
    let release!: () => void
    const released = new Promise<void>((r) => {
      release = r
    })
    let started = false
    await c.work(slow, async () => {
      started = true
      await released
    })
    const rejections: unknown[] = []
    const onRejection = (e: unknown) => rejections.push(e)
    process.on('unhandledRejection', onRejection)
    try {
      await c.transaction(t.db, async (_trx, outbox) => {
        await outbox.send(slow, { n: 1 })
      })
      await until(async () => started, 'the slow handler to start')
      // pg-boss waits at least 1 s, then fails the job back and the pool closes while the handler still runs.
      await c.stop(1000)
      release()
      await new Promise((r) => setTimeout(r, 500))
      expect(rejections).toEqual([])
      const r = await sql<{ state: string }>`select state from pgboss.job where name = ${slow.name}`.execute(
        t.db,
      )
      // Failed back with a retry left: the job waits to run again.
      expect(r.rows.map((x) => x.state)).toEqual(['retry'])
    } finally {
      process.off('unhandledRejection', onRejection)
    }
  })
})
