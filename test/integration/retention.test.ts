import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RULE_DEFAULTS } from '../../src/config/rules.schema'
import { claimUpdate } from '../../src/db/once'
import { Jobs } from '../../src/jobs/jobs'
import { pruneOnce, RETENTION, retentionQueue, startRetention } from '../../src/jobs/retention'
import { quietLogger } from '../../src/log'
import { QUEUES } from '../../src/workers'
import { createTestDatabase, type TestDatabase } from '../support/db'
import { eventually } from '../support/fixtures'

/**
 * Retention: rows past their age go, in bounded batches, newer rows and rows that still matter (pending or parked
 * updates) stay; an update id whose old claim was pruned is processed again; the job runs through pg-boss.
 */

let t: TestDatabase
const BOT = 7000001

beforeAll(async () => {
  t = await createTestDatabase()
})
afterAll(() => t?.drop())

/** `old` rows 49 h / 31 days old and `fresh` rows 1 h old in every pruned table, plus pending and parked updates. */
async function seed(old: number, fresh: number, base: number) {
  const ids = (n: number, from: number) => Array.from({ length: n }, (_, i) => from + i)
  for (const [n, age, from] of [
    [old, '49 hours', base],
    [fresh, '1 hour', base + 100_000],
  ] as const) {
    const list = ids(n, from)
    await sql`insert into processed_update (bot_id, update_id, processed_at)
      select ${BOT}, u, now() - ${age}::interval from unnest(${list}::bigint[]) u`.execute(t.db)
    await sql`insert into inbox_update (bot_id, update_id, chat_key, priority, kind, payload, state, done_at)
      select ${BOT}, u, 'c' || u, 2, 'message', '{}'::json, 'done', now() - ${age}::interval
        from unnest(${list}::bigint[]) u`.execute(t.db)
    const month = age === '1 hour' ? '1 hour' : '31 days'
    await sql`insert into outbound_message (key, bot_id, chat_id, outcome, sent_at)
      select 'k:' || u, ${BOT}, u, 'sent', now() - ${month}::interval from unnest(${list}::bigint[]) u`.execute(
      t.db,
    )
    await sql`insert into conversation_state (bot_id, chat_id, data, updated_at)
      select ${BOT}, u, '{}'::jsonb, now() - ${month}::interval from unnest(${list}::bigint[]) u`.execute(
      t.db,
    )
    await sql`insert into private_alert (bot_id, alert_key, created_at)
      select ${BOT}, 'k:' || u, now() - ${month}::interval from unnest(${list}::bigint[]) u`.execute(t.db)
    await sql`insert into refusal_told (bot_id, chat_id, topic, told_at)
      select ${BOT}, u, 'no_consultation:-', now() - ${age}::interval
        from unnest(${list}::bigint[]) u`.execute(t.db)
  }
  // Old but not handled: a pending update (waiting) and a parked one (waiting for a person) are never pruned.
  await sql`insert into inbox_update (bot_id, update_id, chat_key, priority, kind, payload, state, received_at, done_at)
    values (${BOT}, ${base + 500_000}, 'p', 2, 'message', '{}', 'pending', now() - interval '10 days', null),
           (${BOT}, ${base + 500_001}, 'q', 2, 'message', '{}', 'parked', now() - interval '10 days',
            now() - interval '10 days')`.execute(t.db)
}

async function counts(base: number) {
  const out: Record<string, number> = {}
  for (const r of RETENTION) {
    const key =
      r.table === 'private_alert'
        ? sql`substr(alert_key, 3)::bigint`
        : sql.ref(
            ['outbound_message', 'conversation_state', 'refusal_told'].includes(r.table)
              ? 'chat_id'
              : 'update_id',
          )
    const x = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(r.table)}
      where ${key} between ${base} and ${base + 600_000}`.execute(t.db)
    out[r.table] = x.rows[0]!.n
  }
  return out
}

describe('retention', () => {
  it('prunes past-age rows in bounded batches, keeps fresh, pending and parked rows', async () => {
    const base = 1_000_000
    await seed(25, 4, base)
    // Batches of 10, at most 2 per table per run: a run removes 20, the next the remaining 5.
    expect(await pruneOnce(t.db, RETENTION, { batch: 10, maxBatches: 2 })).toEqual({
      processed_update: 20,
      inbox_update: 20,
      outbound_message: 20,
      conversation_state: 20,
      refusal_told: 20,
      private_alert: 20,
    })
    expect(await counts(base)).toEqual({
      processed_update: 9,
      inbox_update: 11,
      outbound_message: 9,
      conversation_state: 9,
      refusal_told: 9,
      private_alert: 9,
    })
    await pruneOnce(t.db, RETENTION, { batch: 10, maxBatches: 2 })
    expect(await counts(base)).toEqual({
      processed_update: 4,
      inbox_update: 6,
      outbound_message: 4,
      conversation_state: 4,
      refusal_told: 4,
      private_alert: 4,
    })
    const states = await sql<{ state: string }>`select state from inbox_update
      where update_id >= ${base + 500_000} order by update_id`.execute(t.db)
    expect(states.rows.map((r) => r.state)).toEqual(['pending', 'parked'])
  })

  it('an update id whose claim was pruned is claimed (processed) again, a fresh claim still holds', async () => {
    const base = 2_000_000
    await seed(1, 1, base)
    await pruneOnce(t.db)
    expect(await t.db.transaction().execute((trx) => claimUpdate(trx, BOT, base))).toBe(true)
    expect(await t.db.transaction().execute((trx) => claimUpdate(trx, BOT, base + 100_000))).toBe(false)
  })

  it("follows each desk's rules.retention by bot_id; other bots keep the defaults", async () => {
    const base = 5_000_000
    await seed(3, 0, base)
    // This desk keeps claims 72 h and send keys 60 days: the 49-hour and 31-day-old rows stay.
    const desks = [
      {
        botId: BOT,
        rules: {
          retention: { ...RULE_DEFAULTS.retention, processedUpdateHours: 72, outboundMessageDays: 60 },
        },
      },
    ]
    await pruneOnce(t.db, RETENTION, { desks })
    expect(await counts(base)).toEqual({
      processed_update: 3,
      inbox_update: 2,
      outbound_message: 3,
      conversation_state: 0,
      refusal_told: 0,
      private_alert: 0,
    })
    // The same rows under another bot's settings (the defaults) go.
    await pruneOnce(t.db, RETENTION, { desks: [{ ...desks[0]!, botId: BOT + 1 }] })
    expect(await counts(base)).toMatchObject({ processed_update: 0, outbound_message: 0, inbox_update: 2 })
  })

  it('runs as the pg-boss job ops.retention, scheduled every ten minutes', async () => {
    const base = 3_000_000
    await seed(3, 1, base)
    const jobs = Jobs.create(t.url, QUEUES, quietLogger(), { schedule: false })
    await jobs.start()
    try {
      await startRetention(jobs, t.db, quietLogger())
      const schedules = await jobs.boss.getSchedules()
      expect(schedules.find((s) => s.name === retentionQueue.name)?.cron).toBe('*/10 * * * *')
      await jobs.boss.send(retentionQueue.name, {})
      await eventually(
        async () => (await counts(base)).processed_update === 1 || undefined,
        'the retention job',
      )
      expect(await counts(base)).toEqual({
        processed_update: 1,
        inbox_update: 3,
        outbound_message: 1,
        conversation_state: 1,
        refusal_told: 1,
        private_alert: 1,
      })
    } finally {
      await jobs.stop()
    }
  })
})
