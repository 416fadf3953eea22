import { describe, expect, it } from 'vitest'
import {
  type AppProcess,
  configFile,
  isRunning,
  killHard,
  type ProcessRole,
  spawnApp,
  stopGracefully,
} from '../support/processes'
import {
  activeClient,
  expectAllDelivered,
  type FaultWorld,
  stream,
  useFaultWorld,
} from '../support/resilience'
import { TcpProxy } from '../support/tcp-proxy'

/**
 * kill -9 under a stream of client messages, from outside: the built app as separate bot and worker processes, the
 * Bot API stand-in as Telegram (a webhook POST without a 200 is delivered again; polling updates stay queued until
 * a getUpdates confirms them), a real PostgreSQL. A killed process is started again at once, as a supervisor
 * would. Nothing accepted may be lost, order holds per consultation, one topic each; a message may be copied twice
 * only when a worker died between Telegram's answer and its record, so duplicates are counted and bounded by the
 * worker kills (each kill interrupts at most the lanes that process was draining: 4 per direction).
 */

const CLIENTS = 6
const PER_CLIENT = 40
const GAP_MS = 300
const KILL_EVERY_MS = 2000
/** Kills per run: enough to hit every process more than once, few enough to keep the run short. */
const MAX_KILLS = 8

let w: FaultWorld
useFaultWorld((x) => {
  w = x
})

interface Layout {
  mode: 'polling' | 'webhook'
  roles: ProcessRole[]
}

async function run(layout: Layout) {
  const clients = []
  for (let i = 0; i < CLIENTS; i++) clients.push(await activeClient(w, i))
  // Webhook processes sit behind a small balancer (Telegram knows one URL); the targets follow restarts.
  const balancer = layout.mode === 'webhook' ? await TcpProxy.start([]) : undefined
  const config = configFile({
    mode: layout.mode,
    ...(balancer ? { publicUrl: `http://127.0.0.1:${balancer.port}` } : {}),
  })
  const procs: AppProcess[] = []
  let spawned = 0
  const start = async (i: number) => {
    const role = layout.roles[i]!
    const p = spawnApp({
      name: `${role}-${i}-${++spawned}`,
      role,
      databaseUrl: w.db.url,
      apiRoot: w.tg.root,
      configFile: config,
    })
    procs[i] = p
    await p.started
    balancer?.setTargets(
      procs
        .filter((x) => x.role !== 'worker' && isRunning(x) && x.port !== undefined)
        .map((x) => ({ host: '127.0.0.1', port: x.port! })),
    )
  }
  await Promise.all(layout.roles.map((_, i) => start(i)))

  let kills = { bot: 0, worker: 0 }
  let streaming = true
  const restarts: Promise<void>[] = []
  const killer = (async () => {
    let k = 0
    // While the stream runs, and until every role was killed twice (a fast stream must not make the test weaker).
    const wanted = () => streaming || kills.bot < 2 || kills.worker < 2
    while (wanted() && k < MAX_KILLS) {
      await new Promise((r) => setTimeout(r, KILL_EVERY_MS))
      if (!wanted()) break
      const i = k++ % layout.roles.length
      // A process that is still starting is left alone: the kill must hit one that works. And a bot is killed only
      // while the other bots are up: behind a balancer processes fail one at a time (when all are down Telegram
      // just retries, which only makes the run longer).
      await procs[i]!.started.catch(() => {})
      if (layout.roles[i] !== 'worker')
        await Promise.all(procs.filter((p) => p.role !== 'worker').map((p) => p.started.catch(() => {})))
      await killHard(procs[i]!)
      if (layout.roles[i] === 'worker') kills.worker++
      else kills.bot++
      restarts.push(start(i))
    }
    await Promise.all(restarts)
  })()
  try {
    const sent = await stream(w, clients, PER_CLIENT, GAP_MS)
    streaming = false
    await killer
    const tail = Date.now()
    const duplicates = await expectAllDelivered(w, sent)
    const workerKills = kills.worker + (layout.roles.includes('all') ? kills.bot : 0)
    console.log(
      `${layout.mode}: ${CLIENTS * PER_CLIENT} messages, kill -9 of ${kills.bot} bot and ${kills.worker} worker ` +
        `processes: nothing lost, ${duplicates} duplicate copies; the last copy ${((Date.now() - tail) / 1000).toFixed(1)} s ` +
        'after the stream and the kills ended',
    )
    expect(kills.bot).toBeGreaterThanOrEqual(2)
    expect(kills.worker).toBeGreaterThanOrEqual(2)
    expect(duplicates).toBeLessThanOrEqual(workerKills * 4)
    // Nobody died but the ones we killed.
    for (const p of procs) expect(isRunning(p), `${p.name} is running`).toBe(true)
  } catch (e) {
    for (const p of procs) console.error(`--- ${p.name}\n${p.output().slice(-2500)}`)
    throw e
  } finally {
    streaming = false
    await killer.catch(() => {})
    await Promise.all(procs.map((p) => stopGracefully(p)))
    await balancer?.close()
    kills = { bot: 0, worker: 0 }
  }
}

describe('kill -9 under a stream of client messages', () => {
  it('webhook: two bot processes behind a balancer, two workers', async () => {
    await run({ mode: 'webhook', roles: ['bot', 'worker', 'bot', 'worker'] })
  }, 600_000)

  it('polling: one bot process, two workers', async () => {
    await run({ mode: 'polling', roles: ['bot', 'worker', 'worker'] })
  }, 600_000)
})
