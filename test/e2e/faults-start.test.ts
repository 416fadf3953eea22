import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { afterAll, describe, expect, inject, it } from 'vitest'
import { STAFF_CHAT_ID, TEST_BOT_ID, TEST_TOKEN } from '../support/app'
import { TgErrors } from '../support/bot-api'
import { eventually } from '../support/fixtures'
import {
  type AppProcess,
  configFile,
  health,
  isRunning,
  killHard,
  type ProcessRole,
  spawnApp,
  stopAll,
  stopGracefully,
} from '../support/processes'
import { activeClient, type FaultWorld, useFaultWorld } from '../support/resilience'

/**
 * Starting and restarting, from outside (the built app as separate processes, a real PostgreSQL):
 * - four processes started at once on a fresh database (migrations, pg-boss's schema and queues created by
 *   whichever comes first; pg-boss's create_queue deadlocked when two ran it at once) and on a current one: all
 *   come up, report ready and stop cleanly;
 * - a worker killed between posting a consultation's card and pinning it: the next worker pins it (the pin is its
 *   own recorded step), and the time from the kill to the pin is the recovery time of a dead worker's job.
 */

let w: FaultWorld
useFaultWorld((x) => {
  w = x
})

function withDatabase(url: string, name: string): string {
  const u = new URL(url)
  u.pathname = `/${name}`
  return u.toString()
}

async function startTogether(databaseUrl: string, roles: ProcessRole[]): Promise<void> {
  // Webhook mode: several bot processes at once is a normal deployment there (polling allows one per token).
  const config = configFile({ mode: 'webhook', publicUrl: 'http://127.0.0.1:9/unused' })
  const procs = roles.map((role, i) =>
    spawnApp({ name: `${role}-${i}`, role, databaseUrl, apiRoot: w.tg.root, configFile: config }),
  )
  try {
    const started = await Promise.allSettled(procs.map((p) => p.started))
    expect(started.map((s) => s.status)).toEqual(procs.map(() => 'fulfilled'))
    for (const p of procs) expect((await health(p)).status, p.name).toBe(200)
    for (const p of procs) expect(p.output()).not.toMatch(/start failed|deadlock/)
    expect(await stopAll(procs)).toEqual(procs.map((p) => `${p.name}: 0`))
  } catch (e) {
    for (const p of procs) console.error(`--- ${p.name}\n${p.output().slice(-3000)}`)
    throw e
  } finally {
    await Promise.all(procs.map((p) => killHard(p)))
  }
}

describe('four processes started at once', () => {
  const ROLES: ProcessRole[] = ['all', 'bot', 'worker', 'worker']

  it('on a fresh database (twice) and on the current one: all come up', async () => {
    const server = inject('pgServerUrl')
    const admin = new pg.Client({ connectionString: server })
    await admin.connect()
    const name = `cd_t_${process.ppid}_fresh_${randomBytes(3).toString('hex')}`
    try {
      for (let round = 0; round < 2; round++) {
        await admin.query(`drop database if exists ${name} with (force)`)
        await admin.query(`create database ${name}`)
        await startTogether(withDatabase(server, name), ROLES)
      }
      // The same database, now current: nothing to create, everything to check.
      await startTogether(withDatabase(server, name), ROLES)
    } finally {
      await admin.query(`drop database if exists ${name} with (force)`)
      await admin.end()
    }
  }, 180_000)
})

describe('a worker killed between posting the card and pinning it', () => {
  const workers: AppProcess[] = []
  afterAll(async () => {
    await Promise.all(workers.map((p) => killHard(p)))
  })

  it('the next worker pins the card; the time from the kill to the pin is printed', async () => {
    const config = configFile()
    const spawnWorker = (n: number) =>
      spawnApp({
        name: `worker-${n}`,
        role: 'worker',
        databaseUrl: w.db.url,
        apiRoot: w.tg.root,
        configFile: config,
      })
    const first = spawnWorker(1)
    workers.push(first)
    await first.started
    // The first pin is answered only after the worker is gone (and then refused): the card is posted and recorded,
    // the pin never happened.
    w.tg.fail('pinChatMessage', TgErrors.internal, { delayMs: 30_000 })
    const since = w.tg.mark()
    const { consultationId } = await activeClient(w, 100)
    const pin = await w.tg.waitFor('pinChatMessage', { chat_id: STAFF_CHAT_ID }, { since, timeoutMs: 30_000 })
    const card = pin.payload.message_id as number
    const killedAt = Date.now()
    await killHard(first)
    const second = spawnWorker(2)
    workers.push(second)
    await second.started
    try {
      const pinned = await w.tg.waitFor(
        'pinChatMessage',
        { chat_id: STAFF_CHAT_ID, message_id: card },
        { since: pin.seq, ok: true, timeoutMs: 120_000 },
      )
      console.log(
        `card pinned ${((pinned.at - killedAt) / 1000).toFixed(1)} s after its worker was killed with kill -9 ` +
          '(a replacement started at once)',
      )
      const route = await eventually(
        () =>
          w.db.db
            .selectFrom('desk_route')
            .select(['card_message_id', 'card_pinned_message_id'])
            .where('consultation_id', '=', consultationId)
            .where('state', '=', 'active')
            .executeTakeFirst()
            .then((r) => (r?.card_pinned_message_id ? r : undefined)),
        'the pin recorded',
      )
      expect(route).toEqual({ card_message_id: card, card_pinned_message_id: card })
      // Posted once: the retry pinned the recorded card instead of posting another.
      expect(w.tg.sentTo(STAFF_CHAT_ID).filter((m) => m.text?.includes(`#${consultationId}`))).toHaveLength(1)
      expect(isRunning(second)).toBe(true)
    } catch (e) {
      console.error(second.output().slice(-3000))
      throw e
    } finally {
      w.tg.clearRules()
      await stopGracefully(second)
    }
  }, 180_000)
})

describe('a polling bot where a webhook was set', () => {
  it('says it started only once the webhook is gone: no update goes to the old address after that', async () => {
    // An earlier run in webhook mode left its address at Telegram; this start is in polling mode. Telegram answers
    // deleteWebhook slowly here, so a "started" said before the answer would be seen while the webhook is still set.
    const set = await fetch(`${w.tg.root}/bot${TEST_TOKEN}/setWebhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: 'http://127.0.0.1:9/old-address' }),
    })
    expect(set.status).toBe(200)
    const slow = w.tg.delay('deleteWebhook', 1500)
    const p = spawnApp({
      name: 'bot-after-webhook',
      role: 'bot',
      databaseUrl: w.db.url,
      apiRoot: w.tg.root,
      configFile: configFile({ mode: 'polling' }),
    })
    try {
      await p.started
      expect(w.tg.webhook(TEST_BOT_ID)).toBeUndefined()
      expect(slow.hits).toBe(1)
    } catch (e) {
      console.error(p.output().slice(-3000))
      throw e
    } finally {
      slow.cancel()
      await stopGracefully(p)
    }
  }, 60_000)
})
