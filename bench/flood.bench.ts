/**
 * npm run bench:flood — a paying client's confirmation while a stranger floods the bot (issue 23).
 *
 * The built app as a bot process and a worker process (test/support/processes.ts, as `npm run bot` / `npm run worker`
 * start them) on one database (embedded unless DATABASE_URL is set), against the Bot API stand-in enforcing
 * Telegram's limits at their real size (test/support/telegram-limits.ts: 3 per 3 s into a private chat, 30 per second
 * overall; 429 + retry_after past them; BENCH_SCALE scales the windows, default 1) with a BENCH_RTT_MS (50) round trip
 * on every call, the shared budget on.
 *
 * Each of BENCH_SAMPLES (20) clients has its invoice and pre-checkout done beforehand; a sample is one
 * successful_payment delivered, measured to the moment the stand-in receives "✅ Your consultation … is active".
 * - quiet: the payments one after another, nothing else going on;
 * - flood: before each payment a stranger (a new one each time: no consultation, no payment) sends BENCH_FLOOD (100)
 *   messages at once, and the payment is delivered right behind them; the next sample waits until the desk has
 *   refused the whole flood.
 * Printed: p50/p99 per phase, `ratio p50 flood/quiet: X` and `ratio p99 flood/quiet: X` (target <= 1.5), and what
 * the strangers were told (refusals sent per flood: one per stranger, not one per message).
 * Before issue 23 the same flood of 90 made a payment's confirmation wait 84.9 s: every refusal was a notification
 * job, and both notification workers waited in the budget on the stranger's chat window.
 */
import { execFileSync } from 'node:child_process'
import type { User } from 'grammy/types'
import { sql } from 'kysely'
import { loadConfig } from '../src/config/load'
import type { Db } from '../src/db/database'
import { termsHash } from '../src/orders/orders.service'
import { TEST_BOT_ID, TEST_TOKEN } from '../test/support/app'
import { type BotApiStandIn, startBotApi } from '../test/support/bot-api'
import {
  type AppProcess,
  configFile,
  removeConfigs,
  spawnApp,
  stopGracefully,
} from '../test/support/processes'
import { BenchRun, migratedDatabase, percentile, ROOT } from './support'

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 20)
const FLOOD = Number(process.env.BENCH_FLOOD ?? 100)
const SCALE = Number(process.env.BENCH_SCALE ?? 1)
const RTT_MS = Number(process.env.BENCH_RTT_MS ?? 50)
const TARGET = 1.5

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function until(what: string, probe: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(20)
  }
}

interface Invoice {
  user: User
  payload: string
  amount: number
}

/** The tariff's buy button, the invoice and the pre-checkout: what comes before a payment. */
async function invoiceFor(tg: BotApiStandIn, terms: string, n: number): Promise<Invoice> {
  const user = tg.user({ first_name: `Payer${n}`, language_code: 'en' })
  const since = tg.mark()
  await tg.push(TEST_BOT_ID, tg.callback(user, `tf:buy:quick:${terms}`))
  const invoice = await tg.waitFor('sendInvoice', { chat_id: user.id }, { since })
  const p = invoice.payload as { payload: string; prices: { amount: number }[] }
  const amount = p.prices[0]!.amount
  const q = tg.preCheckout(user, { invoice_payload: p.payload, total_amount: amount })
  await tg.push(TEST_BOT_ID, q)
  await tg.waitFor('answerPreCheckoutQuery', { pre_checkout_query_id: q.pre_checkout_query!.id, ok: true })
  return { user, payload: p.payload, amount }
}

/** Where a confirmation's time went, ms from the payment's delivery: stored, handled, its job taken, sent. */
type Steps = [number, number, number, number]

/** Delivers the payment; resolves with the ms from its delivery to the confirmation's arrival at "Telegram". */
async function payAndWait(tg: BotApiStandIn, db: Db, inv: Invoice, steps?: Steps[]): Promise<number> {
  const since = tg.mark()
  const t0 = Date.now()
  const pushed = await tg.push(
    TEST_BOT_ID,
    tg.successfulPayment(inv.user, { invoice_payload: inv.payload, total_amount: inv.amount }),
  )
  const call = await tg.waitFor(
    'sendMessage',
    (p) => p.chat_id === inv.user.id && /is active/.test(String(p.text)),
    { since, timeoutMs: 300_000 },
  )
  if (steps) {
    const r = await sql<{ received: Date; done: Date; started: Date }>`
      select u.received_at as received, u.done_at as done, j.started_on as started
        from inbox_update u, pgboss.job j
        where u.bot_id = ${TEST_BOT_ID} and u.update_id = ${pushed.update.update_id}
          and j.name = 'tg.notify.payment' and (j.data->>'chatId')::bigint = ${inv.user.id}
          and j.data->>'key' = 'consultation-activated'
        order by j.created_on desc limit 1`.execute(db)
    const x = r.rows[0]
    if (x)
      steps.push([x.received.getTime() - t0, x.done.getTime() - t0, x.started.getTime() - t0, call.at - t0])
  }
  return call.at - t0
}

function stepsLine(name: string, steps: Steps[]) {
  const med = (i: number) =>
    percentile(
      [...steps.map((s) => s[i]!)].sort((a, b) => a - b),
      50,
    ).toFixed(0)
  console.log(
    `info: ${name}, median ms after the payment's delivery: stored ${med(0)}, handled ${med(1)}, confirmation job taken ${med(2)}, sent ${med(3)}`,
  )
}

function summary(name: string, ms: number[]) {
  const s = [...ms].sort((a, b) => a - b)
  const p50 = percentile(s, 50)
  const p99 = percentile(s, 99)
  console.log(`${name}: p50 ${p50.toFixed(0)} ms, p99 ${p99.toFixed(0)} ms (n=${s.length})`)
  return { p50, p99 }
}

async function main() {
  const run = new BenchRun()
  run.hold(null, () => removeConfigs())
  try {
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' })
    const { url, handle } = await migratedDatabase(run, 'flood_bench', 4)
    const db = handle.db
    const tg = run.hold(await startBotApi({ defaultWaitTimeoutMs: 60_000, limits: { scale: SCALE } }), (t) =>
      t.close(),
    )
    tg.delay('*', RTT_MS, { times: Number.POSITIVE_INFINITY, when: (_p, c) => c.method !== 'getUpdates' })
    const config = configFile({ mode: 'polling' })
    const desk = loadConfig({
      CONFIG_FILE: config,
      BOT_TOKEN: TEST_TOKEN,
      DATABASE_URL: url,
      TELEGRAM_API_ROOT: tg.root,
    }).desks[0]!
    tg.forum({ id: desk.staffChatId, title: 'Staff' })
    const terms = termsHash(desk.terms.version)

    const procs: AppProcess[] = []
    for (const [i, role] of (['bot', 'worker'] as const).entries())
      procs.push(
        spawnApp({
          name: `${role}-${i}`,
          role,
          databaseUrl: url,
          apiRoot: tg.root,
          configFile: config,
          unthrottled: false,
          env: { TELEGRAM_WINDOW_SCALE: String(SCALE) },
        }),
      )
    run.hold(null, () => Promise.all(procs.map((p) => stopGracefully(p))))
    await Promise.all(procs.map((p) => p.started))

    process.stdout.write(`${2 * SAMPLES + 2} invoices and pre-checkouts... `)
    const invoices: Invoice[] = []
    for (let i = 0; i < 2 * SAMPLES + 2; i++) invoices.push(await invoiceFor(tg, terms, i))
    console.log('ok')
    // Warm-up: the first payments pay for cold plans and connections.
    await payAndWait(tg, db, invoices.pop()!)
    await payAndWait(tg, db, invoices.pop()!)

    const quiet: number[] = []
    const quietSteps: Steps[] = []
    for (let i = 0; i < SAMPLES; i++) {
      quiet.push(await payAndWait(tg, db, invoices.pop()!, quietSteps))
      await sleep(200)
    }

    const flood: number[] = []
    const floodSteps: Steps[] = []
    const told: number[] = []
    for (let i = 0; i < SAMPLES; i++) {
      const stranger = tg.user({ first_name: `Stranger${i}`, language_code: 'en' })
      for (let k = 0; k < FLOOD; k++) await tg.push(TEST_BOT_ID, tg.privateText(stranger, `hello ${k}`))
      flood.push(await payAndWait(tg, db, invoices.pop()!, floodSteps))
      await until(
        'the flood refused',
        async () => {
          const r = await sql<{ n: number }>`select count(*)::int as n from desk_message
            where chat_id = ${stranger.id} and state = 'refused'`.execute(db)
          return r.rows[0]!.n === FLOOD
        },
        300_000,
      )
      await sleep(200)
      told.push(tg.callsTo('sendMessage', { chat_id: stranger.id }, { ok: true }).length)
    }

    console.log(
      `\nbench:flood — ${SAMPLES} payments each, a stranger's flood of ${FLOOD} messages (windows x${SCALE}, round trip ${RTT_MS} ms)`,
    )
    const q = summary('quiet', quiet)
    const f = summary('under flood', flood)
    stepsLine('quiet', quietSteps)
    stepsLine('under flood', floodSteps)
    console.log(`refusals sent per flood (one stranger each): ${[...new Set(told)].join(', ')}`)
    console.log(`429s: ${tg.limiter!.refused}`)
    const r50 = f.p50 / q.p50
    const r99 = f.p99 / q.p99
    console.log(`ratio p50 flood/quiet: ${r50.toFixed(2)}`)
    console.log(
      `ratio p99 flood/quiet: ${r99.toFixed(2)} (target <= ${TARGET}: ${r99 <= TARGET ? 'met' : 'NOT met'})`,
    )
  } finally {
    await run.close()
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
