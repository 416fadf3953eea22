import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Jobs } from '../../src/jobs/jobs'
import { defineQueue, JobDeferred } from '../../src/jobs/queue'
import { quietLogger } from '../../src/log'
import { createTestDatabase, type TestDatabase } from '../support/db'
import { eventually } from '../support/fixtures'

/**
 * A handler that cannot go on now (JobDeferred, e.g. a chat's Telegram window is closed: BudgetWait) gives its worker
 * up: the job is written again for later with the same payload and singleton key, this one completes, no retry is
 * used up and nothing reaches the dead letters. Meanwhile the worker takes the next job.
 */

const q = defineQueue<{ n: number; defer: number; secs?: number }>(
  'test.defer',
  { retryLimit: 0, policy: 'short' },
  1,
)

let t: TestDatabase
let jobs: Jobs
beforeAll(async () => {
  t = await createTestDatabase()
  await sql`create table defer_run (n int not null, at timestamptz not null default clock_timestamp())`.execute(
    t.db,
  )
  jobs = Jobs.create(t.url, [q], quietLogger())
  await jobs.start()
  await jobs.work(q, async ({ n, defer, secs }) => {
    const r = await sql<{ c: number }>`
      with i as (insert into defer_run (n) values (${n}) returning 1)
      select (select count(*)::int from defer_run where n = ${n}) + 1 as c`.execute(t.db)
    // The first `defer` runs of job n cannot go on yet.
    if (r.rows[0]!.c <= defer) throw new JobDeferred(secs ?? 0.3)
    return { done: n }
  })
})
afterAll(async () => {
  await jobs?.stop()
  await t?.drop()
})

const rows = (n: number) =>
  sql<{ state: string; output: unknown; singleton_key: string | null; retry_count: number }>`
    select state, output, singleton_key, retry_count from pgboss.job
      where name = ${q.name} and (data->>'n')::int = ${n} order by created_on`.execute(t.db)

describe('a deferred job', () => {
  it('is written again with its payload and singleton key, completes, and uses no retry', async () => {
    await t.db.transaction().execute((trx) => jobs.send(trx, q, { n: 1, defer: 2 }, { singletonKey: 'one' }))
    await eventually(
      async () => {
        const r = await rows(1)
        return r.rows.length === 3 && r.rows.every((x) => x.state === 'completed') ? true : undefined
      },
      'three runs of job 1',
      30_000,
    )
    const r = (await rows(1)).rows
    expect(r.map((x) => x.output)).toEqual([{ deferred: 0.3 }, { deferred: 0.3 }, { done: 1 }])
    expect(r.map((x) => x.singleton_key)).toEqual(['one', 'one', 'one'])
    expect(r.every((x) => x.retry_count === 0)).toBe(true)
    const dead = await sql<{
      n: number
    }>`select count(*)::int as n from pgboss.job where name = 'dead-letter'`.execute(t.db)
    expect(dead.rows[0]!.n).toBe(0)
  })

  it('frees its worker: a job written after it runs before its second run (one worker)', async () => {
    // Job 10 cannot go on for 3 s; job 11 is written once 10 has given up its (only) worker.
    await t.db
      .transaction()
      .execute((trx) => jobs.send(trx, q, { n: 10, defer: 1, secs: 3 }, { singletonKey: 'ten' }))
    await eventually(async () => (await rows(10)).rows.length === 2 || undefined, 'job 10 deferred')
    await t.db
      .transaction()
      .execute((trx) => jobs.send(trx, q, { n: 11, defer: 0 }, { singletonKey: 'eleven' }))
    await eventually(
      async () => {
        const r = await sql<{
          c: number
        }>`select count(*)::int as c from defer_run where n in (10, 11)`.execute(t.db)
        return r.rows[0]!.c === 3 || undefined
      },
      'jobs 10 and 11',
      30_000,
    )
    const order = await sql<{ n: number }>`select n from defer_run where n in (10, 11) order by at`.execute(
      t.db,
    )
    expect(order.rows.map((x) => x.n)).toEqual([10, 11, 10])
  })
})
