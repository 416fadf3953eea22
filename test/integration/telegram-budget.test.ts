import { Api } from 'grammy'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { configSchema } from '../../src/config/schema'
import { BudgetWait, jobSendContext, TelegramBudget, withSendContext } from '../../src/telegram/budget'
import { TEST_TOKEN } from '../support/app'
import { type BotApiStandIn, startBotApi } from '../support/bot-api'
import { createTestDatabase, type TestDatabase } from '../support/db'

/**
 * The shared budget's rules against a real PostgreSQL, two TelegramBudget instances standing for two processes
 * (they share nothing but the database): the window holds, all keys or none, a 429 from one blocks the other, the
 * waiting room gives the turn by priority then round robin. Windows are scaled down (20 per 0.6 s); the checks are
 * on what is granted, not on times.
 */

let db: TestDatabase
let tg: BotApiStandIn
const BOT = 7000001
const GROUP = -1009000000001

const limits = (over: Record<string, unknown> = {}) =>
  configSchema.shape.telegramLimits.parse({ windowScale: 0.01, marginMs: 0, ...over })

beforeAll(async () => {
  db = await createTestDatabase(4)
  tg = await startBotApi({ limits: { scale: 0.01 } })
})
afterAll(async () => {
  await tg.close()
  await db.drop()
})

async function take(
  b: TelegramBudget,
  method: string,
  payload: Record<string, unknown>,
  lane = 'l',
  priority = 1,
  bot = BOT,
) {
  const keys = b.keysFor(bot, method, payload)
  const r = await db.pool.query<{ w: number }>('select tg_budget_take($1, $2, $3, $4, $5, $6, $7, $8) as w', [
    keys.map((k) => k.key),
    keys.map((k) => k.limit),
    keys.map((k) => k.seconds),
    keys.map((k) => k.weight),
    keys.find((k) => k.fair)?.key ?? null,
    lane,
    priority,
    3,
  ])
  return Number(r.rows[0]!.w)
}

describe('the shared Telegram budget', () => {
  it('a call heavier than a whole window (an album of 10 into a private chat) is granted on an empty window', async () => {
    const b = new TelegramBudget(db.pool, limits({ windowScale: 1 }))
    const user = 424242
    const keys = b.keysFor(BOT, 'sendMediaGroup', {
      chat_id: user,
      media: Array.from({ length: 10 }, () => ({})),
    })
    expect(keys.map((k) => [k.limit, k.weight])).toEqual([
      [30, 10],
      [3, 3],
    ])
    // Weighed at 10 against a window of 3 it would wait forever; capped, it goes at once.
    expect(
      await take(
        b,
        'sendMediaGroup',
        { chat_id: user, media: Array.from({ length: 10 }, () => ({})) },
        'album',
        1,
        BOT + 99,
      ),
    ).toBe(0)
  })

  it('two processes share one window per group: the 21st send in a window waits, whoever asks', async () => {
    const chat = GROUP - 1
    const a = new TelegramBudget(db.pool, limits({ windowScale: 1 }))
    const b = new TelegramBudget(db.pool, limits({ windowScale: 1 }))
    const grants: number[] = []
    for (let i = 0; i < 20; i++)
      grants.push(await take(i % 2 ? a : b, 'sendMessage', { chat_id: chat }, `l${i}`, 1, BOT + 1))
    expect(grants.every((w) => w === 0)).toBe(true)
    const w = await take(a, 'copyMessage', { chat_id: chat }, 'l', 1, BOT + 1)
    expect(w).toBeGreaterThan(50)
    // Another staff group of the same desk (several groups per desk) has a window of its own: it goes at once.
    expect(await take(b, 'copyMessage', { chat_id: chat - 100 }, 'l', 1, BOT + 1)).toBe(0)
    // Not counted by the group: a reaction (only by the bot, see "receipts" below); counted n times: a copyMessages
    // of n ids.
    expect(b.keysFor(BOT + 1, 'setMessageReaction', { chat_id: chat }).map((k) => k.key)).toEqual([
      `bot:${BOT + 1}`,
    ])
    expect(b.keysFor(BOT + 1, 'copyMessages', { chat_id: chat, message_ids: [1, 2, 3] })[1]!.weight).toBe(3)
    expect(b.keysFor(BOT + 1, 'getChat', { chat_id: chat })).toEqual([])
  })

  it('all keys or none: a full private chat takes nothing from the bot budget', async () => {
    const l = limits({ windowScale: 1, bot: { count: 5, seconds: 60 } })
    const a = new TelegramBudget(db.pool, l)
    for (let i = 0; i < 3; i++) expect(await take(a, 'sendMessage', { chat_id: 42 }, 'l', 1, BOT + 2)).toBe(0)
    for (let i = 0; i < 5; i++)
      expect(await take(a, 'sendMessage', { chat_id: 42 }, 'l', 1, BOT + 2)).toBeGreaterThan(0)
    // The bot's 5 had only 3 taken: two more go to another chat.
    expect(await take(a, 'sendMessage', { chat_id: 43 }, 'l', 1, BOT + 2)).toBe(0)
    expect(await take(a, 'sendMessage', { chat_id: 43 }, 'l', 1, BOT + 2)).toBe(0)
    expect(await take(a, 'sendMessage', { chat_id: 44 }, 'l', 1, BOT + 2)).toBeGreaterThan(0)
  })

  it('a 429 in one process makes the other wait out retry_after for that chat', async () => {
    const chat = GROUP - 2
    const l = limits()
    const a = new TelegramBudget(db.pool, l)
    const b = new TelegramBudget(db.pool, l)
    const rule = tg.fail429('sendMessage', 30)
    const api = new Api(TEST_TOKEN, { apiRoot: tg.root })
    api.config.use(a.transformer(BOT))
    await expect(api.sendMessage(chat, 'x')).rejects.toThrow(/Too Many Requests/)
    expect(rule.hits).toBe(1)
    const w = await take(b, 'sendMessage', { chat_id: chat })
    expect(w).toBeGreaterThan(25)
    expect(w).toBeLessThanOrEqual(30)
    // Another chat is not blocked.
    expect(await take(b, 'sendMessage', { chat_id: chat - 1 })).toBe(0)
  })

  it('the waiting room: priority first, then the lane served longest ago', async () => {
    const chat = GROUP - 3
    const a = new TelegramBudget(db.pool, limits({ windowScale: 1, group: { count: 1, seconds: 3600 } }))
    // Fill the window, then three lanes wait: x (served just now), y, z (never served), z urgent.
    expect(await take(a, 'sendMessage', { chat_id: chat }, 'x', 1, BOT + 4)).toBe(0)
    expect(await take(a, 'sendMessage', { chat_id: chat }, 'x', 1, BOT + 4)).toBeGreaterThan(0)
    expect(await take(a, 'sendMessage', { chat_id: chat }, 'y', 1, BOT + 4)).toBeGreaterThan(0)
    expect(await take(a, 'sendMessage', { chat_id: chat }, 'z', 0, BOT + 4)).toBeGreaterThan(0)
    // Room again (the window cleared by hand): only z may take it, then y, then x.
    await db.pool.query('delete from tg_budget_send where key = $1', [`chat:${BOT + 4}:${chat}`])
    expect(await take(a, 'sendMessage', { chat_id: chat }, 'x', 1, BOT + 4)).toBe(-1)
    expect(await take(a, 'sendMessage', { chat_id: chat }, 'y', 1, BOT + 4)).toBe(-1)
    expect(await take(a, 'sendMessage', { chat_id: chat }, 'z', 0, BOT + 4)).toBe(0)
    await db.pool.query('delete from tg_budget_send where key = $1', [`chat:${BOT + 4}:${chat}`])
    expect(await take(a, 'sendMessage', { chat_id: chat }, 'x', 1, BOT + 4)).toBe(-1)
    expect(await take(a, 'sendMessage', { chat_id: chat }, 'y', 1, BOT + 4)).toBe(0)
    await db.pool.query('delete from tg_budget_send where key = $1', [`chat:${BOT + 4}:${chat}`])
    expect(await take(a, 'sendMessage', { chat_id: chat }, 'x', 1, BOT + 4)).toBe(0)
    expect(await a.othersWaiting(BOT + 4, chat, 'x')).toBe(false)
  })

  it('a send settled when Telegram answers holds the window from the answer, not for the margin after the grant', async () => {
    // A private chat's window of 3 per 30 ms, and a margin of 5 s for the round trip between grant and arrival.
    const b = new TelegramBudget(db.pool, limits({ windowScale: 0.01, marginMs: 5000 }))
    const chat = 515151
    const keys = b.keysFor(BOT + 5, 'sendMessage', { chat_id: chat })
    const tokens = ['00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002']
    const other = '00000000-0000-4000-8000-000000000003'
    await b.take(keys, undefined, tokens[0])
    await b.take(keys, undefined, tokens[1])
    await b.take(keys, undefined, other)
    // Full until the grant plus the margin: more than 4 s away.
    expect(await take(b, 'sendMessage', { chat_id: chat }, 'l', 1, BOT + 5)).toBeGreaterThan(4)
    // Two of the three answered: their room comes back with the window's own length (30 ms), the third's not.
    for (const t of tokens) await b.settle(keys, t)
    const rows = await db.pool.query<{ token: string; left: number }>(
      `select token, extract(epoch from at + make_interval(secs => $2) - clock_timestamp())::float8 as left
         from tg_budget_send where key = $1 order by token`,
      [keys[1]!.key, keys[1]!.seconds],
    )
    expect(rows.rows.map((r) => r.token)).toEqual([...tokens, other])
    expect(rows.rows[0]!.left).toBeLessThan(1)
    expect(rows.rows[1]!.left).toBeLessThan(1)
    expect(rows.rows[2]!.left).toBeGreaterThan(4)
    // One unit is still taken by the unanswered call: two more fit, the third does not.
    await new Promise((r) => setTimeout(r, 50))
    expect(await take(b, 'sendMessage', { chat_id: chat }, 'l', 1, BOT + 5)).toBe(0)
    expect(await take(b, 'sendMessage', { chat_id: chat }, 'l', 1, BOT + 5)).toBe(0)
    expect(await take(b, 'sendMessage', { chat_id: chat }, 'l', 1, BOT + 5)).toBeGreaterThan(0)
  })

  it('receipts (reactions) take the bot budget only while half of it is free', async () => {
    const b = new TelegramBudget(db.pool, limits({ windowScale: 1, bot: { count: 4, seconds: 60 } }))
    const bot = BOT + 6
    expect(b.keysFor(bot, 'setMessageReaction', { chat_id: 1 }).map((k) => k.limit)).toEqual([2])
    expect(await take(b, 'setMessageReaction', { chat_id: 1 }, 'l', 1, bot)).toBe(0)
    expect(await take(b, 'sendMessage', { chat_id: 2 }, 'l', 1, bot)).toBe(0)
    // Half the window is taken: no more receipts, but messages still go up to the whole window.
    expect(await take(b, 'setMessageReaction', { chat_id: 3 }, 'l', 1, bot)).toBeGreaterThan(0)
    expect(await take(b, 'sendMessage', { chat_id: 3 }, 'l', 1, bot)).toBe(0)
    expect(await take(b, 'sendMessage', { chat_id: 4 }, 'l', 1, bot)).toBe(0)
    expect(await take(b, 'sendMessage', { chat_id: 5 }, 'l', 1, bot)).toBeGreaterThan(0)
  })

  it('a lane that may not wait long gets BudgetWait instead of waiting, and nothing is sent', async () => {
    const user = 616161
    tg.user({ id: user, first_name: 'W' })
    const a = new TelegramBudget(db.pool, limits({ windowScale: 1 }))
    const api = new Api(TEST_TOKEN, { apiRoot: tg.root })
    api.config.use(a.transformer(BOT + 7))
    const mark = tg.mark()
    for (let i = 0; i < 3; i++) await api.sendMessage(user, `m${i}`)
    const err = await withSendContext({ lane: 'c:1:out', priority: 1, maxWaitSeconds: 0.5 }, () =>
      api.sendMessage(user, 'm3'),
    ).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(BudgetWait)
    expect((err as BudgetWait).seconds).toBeGreaterThan(0.5)
    expect(tg.callsTo('sendMessage', { chat_id: user }, { since: mark })).toHaveLength(3)
  })

  it("a job's first call gets BudgetWait on a full chat; after a call went out, the job's next calls wait", async () => {
    const user = 626262
    tg.user({ id: user, first_name: 'J' })
    const a = new TelegramBudget(db.pool, limits({ windowScale: 1 }))
    const api = new Api(TEST_TOKEN, { apiRoot: tg.root })
    api.config.use(a.transformer(BOT + 8))
    const mark = tg.mark()
    for (let i = 0; i < 3; i++) await api.sendMessage(user, `m${i}`)
    // A job (a notification) whose only call finds the chat's window full: it gives its worker up, nothing sent.
    const err = await withSendContext(jobSendContext('tg.notify', { chatId: user, n: 1 }), () =>
      api.sendMessage(user, 'job'),
    ).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(BudgetWait)
    expect(tg.callsTo('sendMessage', { chat_id: user }, { since: mark })).toHaveLength(3)
    // A job that has sent something (here into another chat) must not run again from its start: it waits.
    const other = 636363
    tg.user({ id: other, first_name: 'K' })
    await withSendContext(jobSendContext('tg.notify', { chatId: user, n: 2 }), async () => {
      await api.sendMessage(other, 'first call of the job')
      await api.sendMessage(user, 'second call, after the window opens')
    })
    expect(tg.callsTo('sendMessage', { chat_id: user }, { since: mark, ok: true })).toHaveLength(4)
    expect(tg.limiter!.refused).toBe(0)
  })

  it('a job keeps one lane across its deferrals (same queue and payload), whatever its trace', () => {
    const a = jobSendContext('tg.notify.group', { chatId: GROUP, key: 'k', trace_id: 'u1:1' })
    const b = jobSendContext('tg.notify.group', { chatId: GROUP, key: 'k', trace_id: 'u1:2' })
    const c = jobSendContext('tg.notify.group', { chatId: GROUP, key: 'other' })
    expect(a.lane).toBe(b.lane)
    expect(a.lane).not.toBe(c.lane)
    expect(jobSendContext('q', {}, 0.1).maxWaitSeconds).toBeCloseTo(0.04)
  })

  it('the transformer waits its turn through the Api and sends once', async () => {
    const chat = GROUP - 4
    const a = new TelegramBudget(db.pool, limits({ marginMs: 50 }))
    const api = new Api(TEST_TOKEN, { apiRoot: tg.root })
    api.config.use(a.transformer(BOT))
    tg.forum({ id: chat, title: 'g' })
    const mark = tg.mark()
    await withSendContext({ lane: 'c:1:in', priority: 1 }, async () => {
      for (let i = 0; i < 45; i++) await api.sendMessage(chat, `m${i}`)
    })
    expect(tg.callsTo('sendMessage', undefined, { since: mark, ok: true })).toHaveLength(45)
    expect(tg.limiter!.refused).toBe(0)
  })
})
