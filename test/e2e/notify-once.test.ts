import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { scheduleStart } from '../../src/orders/orders.service'
import { notifyNow } from '../../src/telegram/notify'
import { type DeskWorld, eventually, startDeskWorld, TEST_BOT_ID } from '../support/fixtures'

/**
 * One message per dedupe key (src/telegram/notify.ts), however often and however concurrently the state change that
 * writes it runs: a retried job, a replayed transaction. Two notify workers per process take jobs side by side, so a
 * key written twice must not become two jobs that each find it unsent. The same holds for the other jobs whose id is
 * made from what they are for (a scheduled start, its reminder).
 */
describe('one job per key', () => {
  let w: DeskWorld
  beforeAll(async () => {
    w = await startDeskWorld()
  })
  afterAll(() => w?.stop())

  it('is sent once when its state change commits several times at once (20 rounds)', async () => {
    const client = w.tg.user({ language_code: 'en' })
    const keys = Array.from({ length: 20 }, (_, i) => `test:once:${client.id}:${i}`)
    for (const dedupeKey of keys)
      await Promise.all(
        [1, 2, 3].map(() =>
          notifyNow(w.deps, {
            botId: TEST_BOT_ID,
            chatId: client.id,
            lang: 'en',
            key: 'privacy-forget-cancelled',
            dedupeKey,
          }),
        ),
      )
    await eventually(async () => {
      const r = await sql<{ open: number }>`select count(*) filter (where state <> 'completed')::int as open
        from pgboss.job where name = 'tg.notify' and data->>'dedupeKey' like ${`test:once:${client.id}:%`}`.execute(
        w.deps.db,
      )
      return r.rows[0]!.open === 0
    }, 'every notification handled')
    const sent = w.tg.texts(client.id).filter((t) => t === 'Nothing was erased.')
    expect(sent).toHaveLength(keys.length)
  })

  it('a scheduled start written twice at once is one activation job and one reminder (pg-boss ignores singletonKey)', async () => {
    const consultationId = 900_000 + (Date.now() % 100_000)
    const at = new Date(Date.now() + 3 * 86_400_000)
    await Promise.all(
      [1, 2, 3].map(() =>
        w.deps.jobs.transaction(w.deps.db, (_trx, outbox) => scheduleStart(outbox, consultationId, at)),
      ),
    )
    const r = await sql<{ name: string; n: number }>`select name, count(*)::int as n from pgboss.job
      where data->>'consultationId' = ${String(consultationId)} group by name order by name`.execute(
      w.deps.db,
    )
    expect(r.rows).toEqual([
      { name: 'orders.scheduled-start', n: 1 },
      { name: 'orders.start-reminder', n: 1 },
    ])
  })
})
