import type { User } from 'grammy/types'
import pg from 'pg'
import { describe, expect, inject, it } from 'vitest'
import { termsHash } from '../../src/orders/orders.service'
import { TEST_BOT_ID } from '../support/app'
import type { UpdateDraft } from '../support/bot-api'
import {
  configFile,
  health,
  isRunning,
  type ProcessRole,
  spawnApp,
  stopAll,
  stopGracefully,
} from '../support/processes'
import {
  activeClient,
  deliver,
  expectAllDelivered,
  type FaultWorld,
  stream,
  useFaultWorld,
} from '../support/resilience'
import { TcpProxy } from '../support/tcp-proxy'

/**
 * PostgreSQL goes away while the app works, from outside: the built app as separate processes, the Bot API
 * stand-in as Telegram, a real PostgreSQL.
 *
 * - webhook, 15 s: the processes reach the database through a TCP proxy that is cut (open connections destroyed,
 *   new ones refused), while clients keep writing and a client pays.
 * - polling, 5 s: the database is closed the way an operator closes it (ALTER DATABASE ... ALLOW_CONNECTIONS false,
 *   backends terminated: SQLSTATEs 55000 and 57P01), while clients keep writing and one starts /paysupport.
 *
 * Every process stays up and reports not-ready on /health during the outage and ready after; nothing is lost (every
 * message accepted and copied in order, the payment recorded and the consultation activated, the /paysupport
 * conversation answered); no client is told to try again for an update that is handled later.
 */

let w: FaultWorld
useFaultWorld((x) => {
  w = x
})

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const TRY_AGAIN = /try again|send it again|temporarily unavailable|nothing was changed/i

interface Outage {
  begin(): Promise<void>
  end(): Promise<void>
}

async function runOutage(opts: {
  mode: 'polling' | 'webhook'
  roles: ProcessRole[]
  outageMs: number
  databaseUrl: string
  outage: Outage
  /** Set up before the outage (the database is there). */
  before?: () => Promise<void>
  /** Something a client does while the database is away; returns the check run after it is back. */
  during?: () => Promise<() => Promise<void>>
}) {
  const clients = []
  for (let i = 0; i < 4; i++) clients.push(await activeClient(w, i))
  const balancer = opts.mode === 'webhook' ? await TcpProxy.start([]) : undefined
  const config = configFile({
    mode: opts.mode,
    ...(balancer ? { publicUrl: `http://127.0.0.1:${balancer.port}` } : {}),
  })
  const procs = opts.roles.map((role, i) =>
    spawnApp({
      name: `${role}-${i}`,
      role,
      databaseUrl: opts.databaseUrl,
      apiRoot: w.tg.root,
      configFile: config,
    }),
  )
  try {
    await Promise.all(procs.map((p) => p.started))
    balancer?.setTargets(
      procs.filter((p) => p.role !== 'worker').map((p) => ({ host: '127.0.0.1', port: p.port! })),
    )
    for (const p of procs) expect((await health(p)).status).toBe(200)
    await opts.before?.()

    // Clients write before, during and after the outage.
    const writing = stream(w, clients, 30, 300)
    await sleep(2000)
    await opts.outage.begin()
    const notReady = new Set<string>()
    const probing = (async () => {
      const until = Date.now() + opts.outageMs
      while (Date.now() < until) {
        for (const p of procs) if ((await health(p)).status === 503) notReady.add(p.name)
        await sleep(300)
      }
    })()
    const check = await opts.during?.()
    await probing
    await opts.outage.end()
    const sent = await writing

    await expectAllDelivered(w, sent)
    await check?.()
    // Every process is up, said it was not ready while the database was away, and is ready again.
    for (const p of procs) expect(isRunning(p), `${p.name} is running`).toBe(true)
    expect([...notReady].sort()).toEqual(procs.map((p) => p.name).sort())
    for (const p of procs) {
      const h = await health(p)
      expect(h.status, `${p.name}: ${JSON.stringify(h.body)}`).toBe(200)
    }
    for (const p of procs) expect(p.logs(/database unreachable/).length, p.name).toBeGreaterThan(0)
    // Nobody was asked to send something again: it was all handled.
    for (const c of clients) expect(w.tg.texts(c.user.id).filter((t) => TRY_AGAIN.test(t ?? ''))).toEqual([])
    // And they still stop cleanly.
    expect(await stopAll(procs)).toEqual(procs.map((p) => `${p.name}: 0`))
  } catch (e) {
    for (const p of procs) console.error(`--- ${p.name}\n${p.output().slice(-3000)}`)
    throw e
  } finally {
    await opts.outage.end().catch(() => {})
    await Promise.all(procs.map((p) => stopGracefully(p)))
    await balancer?.close()
  }
}

/** Chooses the quick tariff and pre-checks out; returns the invoice's payload. */
async function buyAndPreCheckout(u: User): Promise<{ payload: string; amount: number }> {
  const since = w.tg.mark()
  await deliver(w.tg, w.tg.callback(u, `tf:buy:quick:${termsHash(w.desk.terms.version)}`))
  const invoice = await w.tg.waitFor('sendInvoice', { chat_id: u.id }, { since })
  const payload = invoice.payload.payload as string
  const amount = invoice.payload.prices[0].amount as number
  const id = `pcq-${u.id}`
  await w.tg.push(TEST_BOT_ID, w.tg.preCheckout(u, { id, invoice_payload: payload, total_amount: amount }))
  const answer = await w.tg.waitFor('answerPreCheckoutQuery', { pre_checkout_query_id: id })
  expect(answer.payload.ok).toBe(true)
  return { payload, amount }
}

describe('the database goes away while clients write', () => {
  it('webhook, 15 s (proxy cut): a payment made during the outage is recorded after it', async () => {
    const proxy = await TcpProxy.start([
      { host: new URL(w.db.url).hostname, port: Number(new URL(w.db.url).port || 5432) },
    ])
    const payer = w.tg.user({ first_name: 'Payer', language_code: 'en' })
    let invoice: { payload: string; amount: number } | undefined
    try {
      await runOutage({
        mode: 'webhook',
        roles: ['bot', 'bot', 'worker'],
        outageMs: 15_000,
        databaseUrl: TcpProxy.via(w.db.url, proxy.port),
        outage: { begin: async () => proxy.cut(), end: async () => proxy.restore() },
        before: async () => {
          invoice = await buyAndPreCheckout(payer)
        },
        during: async () => {
          const { payload, amount } = invoice!
          // A pre-checkout during the outage is refused at once (nothing held, nothing charged): the client may pay
          // again later. It is the one answer given without the database, and it is true.
          const late = `pcq-late-${payer.id}`
          const since = w.tg.mark()
          await sleep(1000)
          await w.tg.push(
            TEST_BOT_ID,
            w.tg.preCheckout(payer, { id: late, invoice_payload: payload, total_amount: amount }),
          )
          const refused = await w.tg.waitFor(
            'answerPreCheckoutQuery',
            { pre_checkout_query_id: late },
            { since },
          )
          expect(refused.payload.ok).toBe(false)
          // Telegram took the Stars of the first checkout: the successful_payment arrives while the database is away.
          const paid = deliver(
            w.tg,
            w.tg.successfulPayment(payer, {
              invoice_payload: payload,
              total_amount: amount,
              telegram_payment_charge_id: `outage-${payer.id}`,
            }) as UpdateDraft,
          )
          return async () => {
            await paid
            await w.tg.waitForSent(payer.id, /is active/, { timeoutMs: 60_000 })
            const p = await w.db.db
              .selectFrom('payment')
              .select(['telegram_payment_charge_id', 'kind'])
              .where('user_id', '=', payer.id)
              .execute()
            expect(p).toEqual([{ telegram_payment_charge_id: `outage-${payer.id}`, kind: 'payment' }])
          }
        },
      })
    } finally {
      await proxy.close()
    }
  }, 240_000)

  it('polling, 5 s (connections refused, backends terminated): /paysupport started during the outage is answered', async () => {
    const admin = new pg.Client({ connectionString: inject('pgServerUrl') })
    await admin.connect()
    const name = w.db.name
    const client = w.tg.user({ first_name: 'Asker', language_code: 'en' })
    try {
      await runOutage({
        mode: 'polling',
        roles: ['bot', 'worker'],
        outageMs: 5000,
        databaseUrl: w.db.url,
        outage: {
          begin: async () => {
            await admin.query(`alter database ${name} allow_connections false`)
            await admin.query(
              'select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
              [name],
            )
          },
          end: async () => {
            await admin.query(`alter database ${name} allow_connections true`)
          },
        },
        during: async () => {
          await sleep(1000)
          await deliver(w.tg, w.tg.command(client, '/paysupport'))
          return async () => {
            await w.tg.waitForSent(client.id, /We see no payments from you/, { timeoutMs: 60_000 })
          }
        },
      })
    } finally {
      await admin.end()
    }
  }, 240_000)
})
