import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEAD_LETTER_QUEUE } from '../../src/jobs/queue'
import { type DeskWorld, eventually, startDeskWorld } from '../support/fixtures'

const TOKEN = 'health-metrics-token-1'

/**
 * /health/live and /health (= /health/ready) of a process running bot and workers. A frozen database and a start
 * while it is down: test/e2e/faults-frozen.test.ts.
 */
describe('/health', () => {
  let w: DeskWorld
  let base: string
  beforeAll(async () => {
    w = await startDeskWorld({ env: { METRICS_TOKEN: TOKEN } })
    base = `http://127.0.0.1:${w.t.app.httpPort}`
  })
  afterAll(() => w?.stop())

  const get = async (path: string, headers: Record<string, string> = {}) => {
    const r = await fetch(base + path, { headers })
    return { status: r.status, body: (await r.json()) as any }
  }

  it('liveness answers; readiness is ready with a live worker and no dead letters', async () => {
    expect(await get('/health/live')).toMatchObject({ status: 200, body: { ok: true } })
    const ready = await eventually(async () => {
      const h = await get('/health/ready')
      return h.status === 200 && h.body.outbox?.workers >= 1 ? h : undefined
    }, 'ready with a worker')
    expect(ready.body).toMatchObject({
      ok: true,
      database: true,
      jobs: true,
      outbox: { new_dead_letters: 0 },
    })
  })

  it('the outbox figures only with the metrics token or straight from loopback; a forwarded request gets none', async () => {
    await eventually(async () => (await get('/health')).body.outbox || undefined, 'measured')
    const forwarded: Record<string, string>[] = [
      { 'x-forwarded-for': '203.0.113.9' },
      { forwarded: 'for=203.0.113.9' },
      { 'x-real-ip': '203.0.113.9' },
      { 'x-forwarded-for': '203.0.113.9', authorization: 'Bearer wrong' },
    ]
    for (const header of forwarded) {
      const h = await get('/health', header)
      expect(h, JSON.stringify(header)).toEqual({ status: 200, body: { ok: true } })
    }
    const withToken = await get('/health', {
      'x-forwarded-for': '203.0.113.9',
      authorization: `Bearer ${TOKEN}`,
    })
    expect(withToken.body).toMatchObject({ ok: true, outbox: { workers: expect.any(Number) } })
  })

  it('a probe costs no query: 48 at once answer from the last measurement', async () => {
    const before = w.deps.pool.totalCount
    const many = await Promise.all(Array.from({ length: 48 }, () => get('/health')))
    expect(many.map((h) => h.status)).toEqual(many.map(() => 200))
    // The pool did not grow for them (each probe used to run two queries: 48 at once filled it).
    expect(w.deps.pool.totalCount).toBeLessThanOrEqual(before + 1)
  })

  it('a new dead letter is shown, but the process stays ready (an alert, not unreadiness)', async () => {
    const id = await w.deps.jobs.boss.send(DEAD_LETTER_QUEUE, { failed: 'probe' })
    try {
      const h = await eventually(async () => {
        const r = await get('/health')
        return r.body.outbox?.new_dead_letters === 1 ? r : undefined
      }, 'the dead letter seen')
      expect(h).toMatchObject({ status: 200, body: { ok: true } })
      expect(h.body.down).toBeUndefined()
    } finally {
      await sql`delete from pgboss.job where id = ${id}`.execute(w.deps.db)
    }
  })
})
