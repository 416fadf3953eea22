import { afterEach, describe, expect, it } from 'vitest'
import { STAFF_CHAT_ID } from '../support/app'
import { type AppProcess, configFile, spawnApp, stopGracefully } from '../support/processes'
import {
  activeClient,
  expectAllDelivered,
  type FaultWorld,
  stream,
  useFaultWorld,
} from '../support/resilience'

/**
 * Telegram's limits as one budget shared by every process (src/telegram/budget.ts), from outside: the built app as a
 * bot process and two worker processes on one database, the Bot API stand-in enforcing Telegram's limits (429 +
 * retry_after past 20 messages per window into the staff group, 3 per window into a private chat, 30 overall),
 * with Telegram's windows scaled down by one factor for the stand-in and the app alike (20 per 3 s instead of per
 * minute), so the burst crosses the group's limit several times over.
 *
 * A burst of client messages: not one 429, every message copied once, in order, one topic per consultation. Each
 * process with its own budget (TELEGRAM_BUDGET=per-process) or none (off) makes the stand-in refuse calls: this
 * test then fails on the 429 count (checked when this test was written: see docs in the issue report).
 */

const SCALE = 0.05
const CLIENTS = 6
const PER_CLIENT = 8

let w: FaultWorld
useFaultWorld(
  (x) => {
    w = x
  },
  { limits: { scale: SCALE } },
)

const procs: AppProcess[] = []
afterEach(async () => {
  await Promise.all(procs.splice(0).map((p) => stopGracefully(p)))
})

describe('one Telegram budget for every process', () => {
  it('two workers and a bot under a burst: no 429, every message once, in order, one topic each', async () => {
    const clients = []
    for (let i = 0; i < CLIENTS; i++) clients.push(await activeClient(w, i))
    const config = configFile({ mode: 'polling' })
    const budget = process.env.TEST_TELEGRAM_BUDGET ?? 'shared'
    for (const [i, role] of (['bot', 'worker', 'worker'] as const).entries())
      procs.push(
        spawnApp({
          name: `${role}-${i}`,
          role,
          databaseUrl: w.db.url,
          apiRoot: w.tg.root,
          configFile: config,
          unthrottled: false,
          env: { TELEGRAM_WINDOW_SCALE: String(SCALE), TELEGRAM_BUDGET: budget },
        }),
      )
    await Promise.all(procs.map((p) => p.started))

    const sent = await stream(w, clients, PER_CLIENT, 10)
    const duplicates = await expectAllDelivered(w, sent).catch((e) => {
      for (const p of procs) console.error(p.name, p.output().slice(-4000))
      throw e
    })
    expect(duplicates).toBe(0)

    // The group's budget was really the bottleneck: far more went into the staff group than one window takes.
    const intoGroup = w.tg.callsTo('*', (p) => p.chat_id === STAFF_CHAT_ID, { ok: true }).length
    expect(intoGroup).toBeGreaterThan(3 * 20)
    expect(w.tg.limiter!.refused, JSON.stringify([...w.tg.limiter!.refusedBy])).toBe(0)
  }, 300_000)
})
