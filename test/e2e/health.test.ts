import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEAD_LETTER_QUEUE } from '../../src/jobs/queue'
import { type DeskWorld, eventually, startDeskWorld } from '../support/fixtures'

/** /health/live and /health (= /health/ready) of a process running bot and workers. */
describe('/health', () => {
  let w: DeskWorld
  let base: string
  beforeAll(async () => {
    w = await startDeskWorld()
    base = `http://127.0.0.1:${w.t.app.httpPort}`
  })
  afterAll(() => w?.stop())

  const get = async (path: string) => {
    const r = await fetch(base + path)
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

  it('a new dead letter makes it not ready (liveness stays), until it is dealt with', async () => {
    const id = await w.deps.jobs.boss.send(DEAD_LETTER_QUEUE, { failed: 'probe' })
    const h = await eventually(async () => {
      const r = await get('/health')
      return r.status === 503 ? r : undefined
    }, 'not ready')
    expect(h.body).toMatchObject({ ok: false, down: { dead_letters: '1 new in 15 min' } })
    expect((await get('/health/live')).status).toBe(200)
    await sql`delete from pgboss.job where id = ${id}`.execute(w.deps.db)
    await eventually(async () => (await get('/health')).status === 200 || undefined, 'ready again')
  })
})
