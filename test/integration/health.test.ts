import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { jobsHealth } from '../../src/jobs/health'
import { Jobs } from '../../src/jobs/jobs'
import { DEAD_LETTER_QUEUE } from '../../src/jobs/queue'
import { quietLogger } from '../../src/log'
import { notifyQueue } from '../../src/telegram/notify'
import { QUEUES } from '../../src/workers'
import { createTestDatabase, type TestDatabase } from '../support/db'

/**
 * The outbox's readiness, from the database: stalled when jobs are due for longer than the limit and no live worker
 * took one for as long; dead letters counted when new. No workers run here: the test writes the heartbeats.
 */

let t: TestDatabase
let jobs: Jobs
beforeAll(async () => {
  t = await createTestDatabase()
  jobs = Jobs.create(t.url, QUEUES, quietLogger(), { schedule: false })
  await jobs.start()
})
afterAll(async () => {
  await jobs?.stop()
  await t?.drop()
})

const worker = async (role: string, tookAgo: string | null, beatAgo = '0 s') => {
  const id = randomUUID()
  await sql`insert into app_instance (id, role, host, pid, beat_at, started_at, took_at)
    values (${id}, ${role}, 'h', 1, now() - ${beatAgo}::interval, now() - interval '1 hour',
      ${tookAgo === null ? null : sql`now() - ${tookAgo}::interval`})`.execute(t.db)
  return id
}

describe('jobsHealth', () => {
  it('stalled only when a job waits past the limit and no live worker took one for as long', async () => {
    expect(await jobsHealth(t.db, { stallSeconds: 60 })).toMatchObject({
      stalled: false,
      oldestDueSeconds: 0,
    })
    const id = await jobs.boss.send(notifyQueue.name, { probe: true })
    await sql`update pgboss.job set created_on = now() - interval '5 minutes', start_after = now() - interval '5 minutes' where id = ${id}`.execute(
      t.db,
    )
    // Due for 5 minutes, no worker process at all.
    expect(await jobsHealth(t.db, { stallSeconds: 60 })).toMatchObject({ stalled: true, workers: 0 })
    // A dead worker (no beat for a minute) does not count; a bot process never does.
    await worker('worker', '1 s', '1 minute')
    await worker('bot', '1 s')
    expect(await jobsHealth(t.db, { stallSeconds: 60 })).toMatchObject({ stalled: true, workers: 0 })
    // A live worker that last took a job 10 minutes ago: stalled.
    const w = await worker('worker', '10 minutes')
    const h = await jobsHealth(t.db, { stallSeconds: 60 })
    expect(h).toMatchObject({ stalled: true, workers: 1 })
    expect(h.oldestDueSeconds).toBeGreaterThanOrEqual(299)
    // It takes jobs again (a busy queue, the old job just waits its turn): not stalled.
    await sql`update app_instance set took_at = now() where id = ${w}`.execute(t.db)
    expect(await jobsHealth(t.db, { stallSeconds: 60 })).toMatchObject({ stalled: false, workers: 1 })
    // The job is younger than the limit: not stalled either, whatever the workers do.
    await sql`update app_instance set took_at = now() - interval '10 minutes' where id = ${w}`.execute(t.db)
    expect(await jobsHealth(t.db, { stallSeconds: 600 })).toMatchObject({ stalled: false })
    await sql`delete from pgboss.job where id = ${id}`.execute(t.db)
    expect(await jobsHealth(t.db, { stallSeconds: 60 })).toMatchObject({ stalled: false })
  })

  it('counts dead letters that arrived within the window', async () => {
    expect((await jobsHealth(t.db)).newDeadLetters).toBe(0)
    const old = await jobs.boss.send(DEAD_LETTER_QUEUE, { n: 1 })
    await sql`update pgboss.job set created_on = now() - interval '1 hour' where id = ${old}`.execute(t.db)
    expect((await jobsHealth(t.db, { deadLetterWindowMinutes: 15 })).newDeadLetters).toBe(0)
    await jobs.boss.send(DEAD_LETTER_QUEUE, { n: 2 })
    expect((await jobsHealth(t.db, { deadLetterWindowMinutes: 15 })).newDeadLetters).toBe(1)
  })
})
