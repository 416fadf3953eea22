import { Writable } from 'node:stream'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLogger } from '../../src/log'
import { type DeskWorld, eventually, newClient, startDeskWorld, TEST_BOT_ID } from '../support/fixtures'

/**
 * Logs you can follow: the update id travels into the jobs an update starts (`trace_id` in the job payload), and
 * the handler's and the job's log lines carry the same `trace_id`.
 */
describe('trace ids', () => {
  let w: DeskWorld
  const lines: Record<string, any>[] = []
  beforeAll(async () => {
    const sink = new Writable({
      write(chunk, _enc, done) {
        for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l))
        done()
      },
    })
    w = await startDeskWorld({ log: createLogger('info', sink) })
  })
  afterAll(() => w?.stop())

  it('a refused client message: the handler log, the refusal job and its failure log share the update trace', async () => {
    const client = await newClient(w, { language_code: 'en' })
    // The refusal's first send fails (a 400), so its job logs a failure, then succeeds on pg-boss's retry.
    w.tg.fail(
      'sendMessage',
      { error_code: 400, description: 'Bad Request: try later' },
      {
        when: (p) => Number(p.chat_id) === client.id,
      },
    )
    const pushed = await w.tg.push(TEST_BOT_ID, w.tg.privateText(client, 'How much is it?'))
    const trace = `u${TEST_BOT_ID}:${pushed.update.update_id}`
    await w.tg.waitForSent(client.id, /no paid consultation|нет оплаченной/i)

    const handlerLine = lines.find((l) => l.msg === 'client message refused')
    expect(handlerLine).toMatchObject({ trace_id: trace, update_id: pushed.update.update_id })
    const failure = await eventually(
      async () => lines.find((l) => l.msg === 'job failed; will retry' && l.trace_id === trace),
      'the job failure line',
    )
    expect(failure).toMatchObject({ queue: 'tg.notify', trace_id: trace })
    const jobs = await sql<{ name: string }>`
      select name from pgboss.job where data->>'trace_id' = ${trace}
      union all select name from pgboss.archive where data->>'trace_id' = ${trace}`.execute(w.deps.db)
    expect(jobs.rows.map((r) => r.name)).toContain('tg.notify')
    // Lines without a trace (start-up, sweeps) stay without one: the trace is the update's, not the process's.
    expect(lines.find((l) => l.msg === 'consult-desk started')?.trace_id).toBeUndefined()
  })
})
