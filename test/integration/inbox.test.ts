import type { Update } from 'grammy/types'
import { sql } from 'kysely'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createI18n } from '../../src/bot/i18n'
import { loadConfig } from '../../src/config/load'
import { pendingCount, storeUpdates, takeUpdates } from '../../src/intake/inbox.repository'
import { InboxProcessor, MAX_ATTEMPTS, type ProcessorOptions } from '../../src/intake/processor'
import { Jobs } from '../../src/jobs/jobs'
import { quietLogger } from '../../src/log'
import { QUEUES } from '../../src/workers'
import { TEST_BOT_ID, TEST_CONFIG, TEST_TOKEN } from '../support/app'
import { createTestDatabase, type TestDatabase } from '../support/db'
import { eventually } from '../support/fixtures'

/**
 * The inbox's processing side against a real database: several processors (as several bot processes) on one
 * inbox keep each chat's updates in order and one at a time, retry transient failures without counting them, park
 * a poison update after MAX_ATTEMPTS and tell the user and the staff once, take payments first, and pick up what a
 * dead processor had taken once its lease runs out.
 */

let t: TestDatabase
let jobs: Jobs
let bookkeeping: pg.Pool
const config = loadConfig({
  CONFIG_FILE: TEST_CONFIG,
  BOT_TOKEN: TEST_TOKEN,
  DATABASE_URL: 'postgres://unused',
})
const desk = config.desks[0]!
let nextUpdateId = 1

beforeAll(async () => {
  t = await createTestDatabase()
  jobs = Jobs.create(t.url, QUEUES, quietLogger(), { schedule: false })
  await jobs.start()
  bookkeeping = new pg.Pool({ connectionString: t.url, max: 4, options: '-c synchronous_commit=off' })
})
afterAll(async () => {
  await bookkeeping?.end()
  await jobs?.stop()
  await t?.drop()
})

const deps = () => ({
  db: t.db,
  jobs,
  log: quietLogger(),
  i18n: createI18n(desk.defaultLanguage),
  desk: () => desk,
})

function message(chatId: number, text: string, extra: Record<string, unknown> = {}): Update {
  return {
    update_id: nextUpdateId++,
    message: {
      message_id: nextUpdateId,
      date: 0,
      chat: { id: chatId, type: 'private', first_name: 'C' },
      from: { id: chatId, is_bot: false, first_name: 'C', language_code: 'en' },
      text,
      ...extra,
    },
  } as Update
}

function processor(handler: (u: Update) => Promise<void>, opts: ProcessorOptions = {}): InboxProcessor {
  return new InboxProcessor(deps(), bookkeeping, new Map([[TEST_BOT_ID, handler]]), {
    pollMs: 20,
    backoffScale: 0.01,
    ...opts,
  })
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function drained(): Promise<void> {
  await eventually(async () => (await pendingCount(t.db, TEST_BOT_ID)) === 0, 'the inbox to drain', 30_000)
}

describe('inbox', () => {
  it('three processors keep every chat in order and one update of a chat at a time (5 rounds)', async () => {
    for (let round = 0; round < 5; round++) {
      const chats = Array.from({ length: 12 }, (_, i) => 5_000_000 + round * 100 + i)
      const handled: { chat: number; n: number }[] = []
      const busy = new Set<number>()
      let overlaps = 0
      const handler = async (u: Update) => {
        const chat = u.message!.chat.id
        if (busy.has(chat)) overlaps++
        busy.add(chat)
        await sleep(Math.random() * 4)
        handled.push({ chat, n: Number(u.message!.text) })
        busy.delete(chat)
      }
      const ps = [processor(handler), processor(handler), processor(handler)]
      for (const p of ps) p.start()
      // Stored in batches while the processors run, as pollers or webhooks store them: the storing process is
      // offered its batch (taken by key), the others find it by scanning.
      for (let n = 0; n < 20; n++) {
        const batch = chats.map((c) => message(c, String(n)))
        await storeUpdates(t.pool, TEST_BOT_ID, batch)
        ps[n % ps.length]!.offer(
          batch.map((u) => ({ botId: TEST_BOT_ID, updateId: u.update_id, priority: 2 })),
        )
      }
      await drained()
      await Promise.all(ps.map((p) => p.stop()))
      expect(overlaps).toBe(0)
      expect(handled).toHaveLength(chats.length * 20)
      for (const c of chats)
        expect(handled.filter((h) => h.chat === c).map((h) => h.n)).toEqual(
          Array.from({ length: 20 }, (_, i) => i),
        )
    }
  })

  it('a transient failure waits and retries without counting; the chat waits behind it', async () => {
    const chat = 5_100_001
    let failures = 0
    const seen: string[] = []
    const p = processor(async (u) => {
      const text = u.message!.text!
      if (text === 'first' && failures < 3) {
        failures++
        throw Object.assign(new Error('terminating connection due to administrator command'), {
          code: '57P01',
        })
      }
      seen.push(text)
    })
    const first = message(chat, 'first')
    await storeUpdates(t.pool, TEST_BOT_ID, [first, message(chat, 'second')])
    p.start()
    await drained()
    await p.stop()
    expect(seen).toEqual(['first', 'second'])
    const row = await t.db
      .selectFrom('inbox_update')
      .select(['state', 'attempts', 'tries'])
      .where('bot_id', '=', TEST_BOT_ID)
      .where('update_id', '=', first.update_id)
      .executeTakeFirstOrThrow()
    expect(row).toEqual({ state: 'done', attempts: 0, tries: 4 })
  })

  it(`a poison update is parked after ${MAX_ATTEMPTS} attempts, the user and the staff told once, the chat goes on`, async () => {
    const chat = 5_200_001
    const seen: string[] = []
    const p = processor(async (u) => {
      if (u.message!.text === 'poison') throw new TypeError('cannot read properties of undefined')
      seen.push(u.message!.text!)
    })
    const poison = message(chat, 'poison')
    await storeUpdates(t.pool, TEST_BOT_ID, [poison, message(chat, 'after')])
    p.start()
    await drained()
    await p.stop()
    expect(seen).toEqual(['after'])
    const row = await t.db
      .selectFrom('inbox_update')
      .select(['state', 'attempts', 'last_error'])
      .where('bot_id', '=', TEST_BOT_ID)
      .where('update_id', '=', poison.update_id)
      .executeTakeFirstOrThrow()
    expect(row.state).toBe('parked')
    expect(row.attempts).toBe(MAX_ATTEMPTS)
    expect(row.last_error).toMatch(/TypeError: cannot read properties of undefined/)
    const told = await sql<{ chat: string; key: string }>`
      select data->>'chatId' as chat, data->>'key' as key from pgboss.job
        where name in ('tg.notify', 'tg.notify.group')
          and data->>'dedupeKey' like ${`intake:parked:${TEST_BOT_ID}:${poison.update_id}:%`}
        order by 2`.execute(t.db)
    expect(told.rows).toEqual([
      { chat: String(chat), key: 'intake-parked' },
      { chat: String(desk.staffChatId), key: 'intake-parked-staff' },
    ])
    // And each admin privately, once (issue 25): one private_alert row, one job per admin.
    const alerts = await sql<{ chat: string }>`
      select data->>'chatId' as chat from pgboss.job
        where name = 'tg.notify' and data->>'key' = 'alert-parked'
          and data->>'dedupeKey' like ${`alert:${TEST_BOT_ID}:parked:${poison.update_id}:%`}
        order by 1`.execute(t.db)
    expect(alerts.rows).toEqual(
      desk.staff.admins.map((a) => ({ chat: String(a) })).sort((a, b) => a.chat.localeCompare(b.chat)),
    )
    expect(desk.staff.admins.length).toBeGreaterThan(0)
  })

  it('takes payments first when several chats wait', async () => {
    const updates = Array.from({ length: 8 }, (_, i) => message(5_300_000 + i, `m${i}`))
    const pay = message(5_300_100, 'paid', {
      text: undefined,
      successful_payment: {
        currency: 'XTR',
        total_amount: 100,
        invoice_payload: 'o:1',
        telegram_payment_charge_id: 'c-1',
        provider_payment_charge_id: '',
      },
    })
    await storeUpdates(t.pool, TEST_BOT_ID, [...updates, pay])
    const order: string[] = []
    const p = processor(
      async (u) => {
        order.push(u.message!.successful_payment ? 'payment' : u.message!.text!)
      },
      { concurrency: 1 },
    )
    p.start()
    await drained()
    await p.stop()
    expect(order[0]).toBe('payment')
    expect(order).toHaveLength(9)
  })

  it("a dead processor's updates are taken by another once its lease runs out, in order", async () => {
    const chat = 5_400_001
    const a = message(chat, 'a')
    const b = message(chat, 'b')
    await storeUpdates(t.pool, TEST_BOT_ID, [a, b])
    // A processor took the head and died (nothing renews its 1 s lease).
    const taken = await takeUpdates(bookkeeping, 'dead-owner', [], [], true, [TEST_BOT_ID], 10, 1)
    expect(taken.map((r) => r.update_id)).toContain(a.update_id)
    const seen: string[] = []
    const p = processor(async (u) => {
      seen.push(u.message!.text!)
    })
    p.start()
    await drained()
    await p.stop()
    expect(seen).toEqual(['a', 'b'])
  })

  it('a redelivered update is stored once, whatever its state', async () => {
    const u = message(5_500_001, 'once')
    await storeUpdates(t.pool, TEST_BOT_ID, [u])
    await storeUpdates(t.pool, TEST_BOT_ID, [u, u])
    const n = await sql<{ n: number }>`
      select count(*)::int as n from inbox_update where bot_id = ${TEST_BOT_ID} and update_id = ${u.update_id}`.execute(
      t.db,
    )
    expect(n.rows[0]!.n).toBe(1)
    const p = processor(async () => {})
    p.start()
    await drained()
    await p.stop()
    await storeUpdates(t.pool, TEST_BOT_ID, [u])
    expect(await pendingCount(t.db, TEST_BOT_ID)).toBe(0)
  })
})
