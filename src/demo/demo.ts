import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { User } from 'grammy/types'
import { sql } from 'kysely'
import { type BotApiStandIn, media, startBotApi } from '../../test/support/bot-api'
import { fastForward } from '../../test/support/lifecycle-clock'
import { type App, startApp } from '../app'
import { loadConfig } from '../config/load'
import { clockNow } from '../db/clock'
import { type EmbeddedServer, ensureDatabase, startEmbeddedPostgres } from '../db/embedded'
import { BOSS_SCHEMA } from '../jobs/jobs'
import { createLogger, quietLogger } from '../log'
import { termsHash } from '../orders/orders.service'
import { readDesk } from '../settings/settings'
import { settle as settleDesk } from './settle'
import { out, Transcript } from './transcript'

/**
 * `npm run demo`: the whole desk on one machine, no token, no network. An embedded PostgreSQL in a throwaway
 * directory, the real app (src/app.ts: bot in polling mode and every worker) started the way a new expert starts it
 * (a bot token and nothing else: no config file), and the Bot API stand-in of the tests (test/support/bot-api.ts) in
 * Telegram's place. A script plays the owner (Ada), who sets the empty desk up from Telegram (claims it with the
 * printed link, adds the bot to the staff group, invites the expert, sets the hours and creates a tariff in
 * /settings), then a client (Anna) and the expert (Ed) through one consultation. Everything the bot does in
 * Telegram is printed as the party who sees it would see it (./transcript.ts). Time: the tariff's window is 2
 * hours; instead of waiting, the consultation's own clock is moved forward (test/support/lifecycle-clock.ts: its
 * stored instants and its scheduled jobs shift into the past) and the real jobs fire by themselves. Ends by itself
 * and stops everything it started; exit code 0 on success.
 *
 * A little over the house's ~400 lines on purpose: one story, read top to bottom as the scenes play.
 */

const TOKEN = `7000042:${'D'.repeat(35)}`
const BOT_ID = 7000042
const STAFF_CHAT = -1001000000042
const ADMIN_ID = 100000001
const EXPERT_ID = 100000002
const WAIT_MS = 20_000
const started = Date.now()

// ---------------------------------------------------------------------------------------------------------------

interface World {
  app: App
  tg: BotApiStandIn
  pg: EmbeddedServer
}

function settle(w: World): Promise<void> {
  return settleDesk(w.app.deps.db, w.tg, BOT_ID, WAIT_MS)
}

async function main(): Promise<void> {
  out('consult-desk · offline demo: an empty desk set up from Telegram, then one consultation to the report')
  out(
    '(embedded PostgreSQL in a throwaway directory, the real app, a Telegram stand-in; no token, no network)',
  )

  const log = process.env.LOG_LEVEL ? createLogger(process.env.LOG_LEVEL) : quietLogger()
  const pg = await startEmbeddedPostgres()
  const cleanup: (() => Promise<unknown>)[] = [() => pg.stop()]
  const stopAll = async () => {
    while (cleanup.length) await cleanup.pop()!().catch(() => {})
  }
  try {
    const url = await ensureDatabase(pg.url, 'consult_desk_demo')
    const tg = await startBotApi({ defaultWaitTimeoutMs: WAIT_MS })
    cleanup.push(() => tg.close())
    tg.forum({ id: STAFF_CHAT, title: 'Desk staff' })
    // A new expert's first run: a token and nothing else (no config file: an empty directory as the working one).
    const empty = mkdtempSync(path.join(os.tmpdir(), 'consult-desk-demo-'))
    cleanup.push(async () => rmSync(empty, { recursive: true, force: true }))
    const config = loadConfig(
      { BOT_TOKEN: TOKEN, DESK_LANGUAGE: 'en', TZ: 'UTC', DATABASE_URL: url, TELEGRAM_API_ROOT: tg.root },
      empty,
    )
    config.http = { host: '127.0.0.1', port: 0 }
    out()
    out('$ BOT_TOKEN=… npm start')
    // The owner link is printed at start (what a new expert copies from the console); the script opens it.
    let printed = ''
    const write = process.stdout.write.bind(process.stdout)
    process.stdout.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
      printed += String(chunk)
      return write(chunk, ...rest)
    }) as typeof process.stdout.write
    let app: App
    try {
      app = await startApp(config, { role: 'all', log })
    } finally {
      process.stdout.write = write
    }
    cleanup.push(() => app.stop())
    const claim = /\?start=(own_[A-Za-z0-9_-]+)/.exec(printed)?.[1]
    if (!claim) throw new Error('no owner link was printed at start')
    const w: World = { app, tg, pg }
    out(`ready in ${((Date.now() - started) / 1000).toFixed(1)} s: bot (polling) and workers running`)
    await script(w, claim)
  } finally {
    await stopAll()
  }
  out()
  out(`demo finished in ${((Date.now() - started) / 1000).toFixed(1)} s; everything it started is stopped.`)
}

async function script(w: World, claim: string): Promise<void> {
  const { tg, app } = w
  const db = app.deps.db
  const anna = tg.user({ first_name: 'Anna', username: 'anna_dev', language_code: 'en' })
  const ed = tg.user({ id: EXPERT_ID, first_name: 'Ed', language_code: 'en' })
  const ada = tg.user({ id: ADMIN_ID, first_name: 'Ada', language_code: 'en' })
  const t = new Transcript(
    tg,
    anna,
    STAFF_CHAT,
    new Map([
      [EXPERT_ID, 'Ed'],
      [ADMIN_ID, 'Ada'],
    ]),
  )
  const step = async () => {
    await settle(w)
    t.flush()
  }
  let n = 0
  n = await setUp(w, t, step, { ada, ed, claim })
  const termsVersion = app.deps.desk(BOT_ID).terms.version

  t.section(++n, 'Anna opens the bot and looks at the tariffs')
  t.act('Anna', 'bot', '/start')
  await tg.push(BOT_ID, tg.privateText(anna, '/start'))
  await tg.waitForSent(anna.id, /Hello, Anna/)
  await step()
  t.act('Anna', 'bot', '[ 📋 Tariffs and terms ]')
  await tg.push(BOT_ID, tg.callback(anna, 'tf:list'))
  await tg.waitFor('editMessageText', { chat_id: anna.id })
  await step()
  t.act('Anna', 'bot', '[ Review sprint, 2 h — 300 ⭐ ]')
  await tg.push(BOT_ID, tg.callback(anna, 'tf:show:sprint'))
  await tg.waitFor(
    'editMessageText',
    (p) => /Review sprint/.test(String(p.text)) && /Included/.test(String(p.text)),
  )
  await step()

  t.section(++n, 'Anna pays 300 Stars')
  t.act('Anna', 'bot', '[ ✅ Accept the terms and pay 300 ⭐ ]')
  await tg.push(BOT_ID, tg.callback(anna, `tf:buy:sprint:${termsHash(termsVersion)}`))
  const invoice = await tg.waitFor('sendInvoice', { chat_id: anna.id })
  await step()
  const payload = String(invoice.payload.payload)
  t.act('Anna', 'Telegram', 'pays the invoice (Telegram asks the bot first: pre_checkout_query)')
  const q = tg.preCheckout(anna, { invoice_payload: payload, total_amount: 300 })
  await tg.push(BOT_ID, q)
  await tg.waitFor('answerPreCheckoutQuery', { pre_checkout_query_id: q.pre_checkout_query!.id })
  await tg.push(BOT_ID, tg.successfulPayment(anna, { invoice_payload: payload, total_amount: 300 }))
  await tg.waitForSent(anna.id, /is active/)
  await tg.waitFor('pinChatMessage', { chat_id: STAFF_CHAT })
  await step()
  const c = await db
    .selectFrom('consultation')
    .select(['id'])
    .where('user_id', '=', anna.id)
    .executeTakeFirstOrThrow()
  const route = await db
    .selectFrom('desk_route')
    .select('message_thread_id')
    .where('consultation_id', '=', c.id)
    .executeTakeFirstOrThrow()
  const thread = route.message_thread_id
  const topic = `topic #${thread}`

  t.section(++n, 'The first question, with a photo')
  const caption = 'Our webhook handler times out under load; the trace is attached. Where would you start?'
  t.act('Anna', 'bot', `[photo] ${caption}`)
  const q1 = tg.privateMessage(anna, { photo: media.photo(), caption })
  await tg.push(BOT_ID, q1)
  await tg.waitFor('copyMessage', { chat_id: STAFF_CHAT, message_id: q1.message.message_id })
  await tg.waitForSent(anna.id, /Question #1 accepted/)
  // Ed owns the consultation (src/experts): the bot tells him in private, with a button that opens the topic.
  await tg.waitForSent(EXPERT_ID, /Question #1 · consultation/)
  await step()

  t.section(++n, 'Ed, the expert, answers in the topic')
  const a1text =
    'Start with the pool: 10 connections for 200 concurrent requests queue up behind each other. Raise it to 50 and time the handler again.'
  t.act('Ed', topic, a1text)
  const a1 = tg.groupTopicMessage(STAFF_CHAT, thread, ed, a1text)
  await tg.push(BOT_ID, a1)
  await tg.waitFor('copyMessage', { chat_id: anna.id, message_id: a1.message.message_id })
  await step()

  t.section(++n, 'A clarification (a second question round)')
  const q2text = 'Raised it to 50: p99 went from 9 s to 2 s. Is the remaining 2 s the JSON parsing?'
  t.act('Anna', 'bot', q2text)
  const q2 = tg.privateText(anna, q2text)
  await tg.push(BOT_ID, q2)
  await tg.waitForSent(anna.id, /Question #2 accepted/)
  await step()

  const advanceTo = async (queue: string, what: string) => {
    const job = await sql<{ start_after: Date }>`select start_after from ${sql.id(BOSS_SCHEMA, 'job')}
      where name = ${queue} and state = 'created'
        and (data->>'consultationId' = ${String(c.id)}
             or data->>'appealId' in (select id::text from desk_appeal where consultation_id = ${c.id}))
      order by start_after limit 1`.execute(db)
    const at = job.rows[0]?.start_after
    if (!at) throw new Error(`no ${queue} job scheduled`)
    const ms = at.getTime() - (await clockNow(db)).getTime() + 1000
    const min = Math.round(ms / 60_000)
    t.note(`+${min} min for this consultation: ${what}.`)
    t.note(
      `  (its stored instants and jobs move ${min} min into the past; times below read ${min} min earlier)`,
    )
    await fastForward(db, c.id, ms)
  }

  t.section(++n, 'Nobody has answered yet: the reminder before the due time')
  await advanceTo('sla.remind', 'the reminder is due 30 business minutes before the answer (the default)')
  await tg.waitForSent(STAFF_CHAT, /Question #2 is due/, { threadId: thread })
  await step()

  t.section(++n, 'Ed answers the clarification')
  const a2text =
    'Mostly, yes: you parse the whole body twice. Validate the signature on the raw bytes, parse once.'
  t.act('Ed', topic, a2text)
  const a2 = tg.groupTopicMessage(STAFF_CHAT, thread, ed, a2text)
  await tg.push(BOT_ID, a2)
  await tg.waitFor('copyMessage', { chat_id: anna.id, message_id: a2.message.message_id })
  await step()

  t.section(++n, 'Anna checks /status')
  t.act('Anna', 'bot', '/status')
  await tg.push(BOT_ID, tg.privateText(anna, '/status'))
  await tg.waitForSent(anna.id, /Time left/)
  await step()

  t.section(++n, 'The window closes soon')
  await advanceTo('lifecycle.closing-soon', 'the notice is due 60 minutes before the end (the default)')
  await tg.waitForSent(anna.id, /closes soon/)
  await step()

  t.section(++n, 'Anna tops up two more questions from the notice (issue 14)')
  t.act('Anna', 'bot', '[ ➕ 2 more questions — 100 ⭐ ]')
  await tg.push(BOT_ID, tg.callback(anna, `tu:${c.id}:0`))
  const topUp = await tg.waitFor('sendInvoice', (p) => p.chat_id === anna.id && p.payload !== payload)
  await step()
  const topUpPayload = String(topUp.payload.payload)
  t.act('Anna', 'Telegram', 'pays the top-up (pre-checkout first, then the payment)')
  const tq = tg.preCheckout(anna, { invoice_payload: topUpPayload, total_amount: 100 })
  await tg.push(BOT_ID, tq)
  await tg.waitFor('answerPreCheckoutQuery', { pre_checkout_query_id: tq.pre_checkout_query!.id })
  await tg.push(BOT_ID, tg.successfulPayment(anna, { invoice_payload: topUpPayload, total_amount: 100 }))
  await tg.waitForSent(anna.id, /more questions were added/)
  await step()

  t.section(++n, 'The window ends')
  await advanceTo('lifecycle.close', 'the end of the 2-hour window')
  await tg.waitForSent(anna.id, /ended at/)
  await tg.waitFor('closeForumTopic', { chat_id: STAFF_CHAT, message_thread_id: thread })
  await step()

  t.section(++n, 'A late message is refused')
  const lateText = 'One more thing: should we also cache the parsed body?'
  t.act('Anna', 'bot', lateText)
  await tg.push(BOT_ID, tg.privateText(anna, lateText))
  await tg.waitForSent(anna.id, /window closed at/)
  await step()

  t.section(++n, 'Anna rates the consultation (the buttons under "ended") and adds a comment')
  t.act('Anna', 'bot', '[ 😍 5 ]')
  await tg.push(BOT_ID, tg.callback(anna, `rate:${c.id}:5`))
  await tg.waitForSent(anna.id, /You rated the consultation 5 of 5/)
  await step()
  t.act('Anna', 'bot', '[ ✍️ Add a comment ]')
  await tg.push(BOT_ID, tg.callback(anna, `rate:cm:${c.id}`))
  await tg.waitForSent(anna.id, /Write your comment/)
  await step()
  const comment = 'Two concrete fixes in two hours. Thanks, Ed!'
  t.act('Anna', 'bot', comment)
  await tg.push(BOT_ID, tg.privateText(anna, comment))
  await tg.waitForSent(anna.id, /comment is saved/)
  await step()

  t.section(++n, 'Anna gets the transcript')
  t.act('Anna', 'bot', '[ 📄 Get the transcript ]')
  await tg.push(BOT_ID, tg.callback(anna, `tr:get:${c.id}`))
  await tg.waitFor('sendDocument', { chat_id: anna.id }, { ok: true })
  await step()

  t.section(++n, 'Ada, the owner, asks for the report in the staff group')
  t.act('Ada', 'staff General', '/report')
  await tg.push(BOT_ID, tg.groupTopicMessage(STAFF_CHAT, undefined, ada, '/report'))
  await tg.waitForSent(STAFF_CHAT, /Report/)
  await step()
}

/**
 * The owner sets the empty desk up from Telegram: claim, staff group (refused without the rights, then confirmed),
 * the expert by invite, round-the-clock hours (so the demo reads the same whenever it runs) and the tariff, with a
 * top-up, in /settings. Returns the number of the last scene.
 */
async function setUp(
  w: World,
  t: Transcript,
  step: () => Promise<void>,
  p: { ada: User; ed: User; claim: string },
): Promise<number> {
  const { tg, app } = w
  const { ada, ed } = p
  let n = 0
  const version = async () => (await readDesk(app.deps.db, BOT_ID))!.version
  /** Ada types an answer to the bot's question and waits for its reply. */
  const answer = async (text: string, reply: RegExp) => {
    t.act('Ada', 'bot', text)
    await tg.push(BOT_ID, tg.privateText(ada, text))
    await tg.waitForSent(ADMIN_ID, reply, { since: mark })
    mark = tg.mark()
    await step()
  }
  const press = async (label: string, data: string, reply?: RegExp) => {
    t.act('Ada', 'bot', `[ ${label} ]`)
    await tg.push(BOT_ID, tg.callback(ada, data))
    if (reply) await tg.waitForSent(ADMIN_ID, reply, { since: mark })
    else await tg.waitFor(['editMessageText', 'sendMessage'], { chat_id: ADMIN_ID }, { since: mark })
    mark = tg.mark()
    await step()
  }
  let mark = tg.mark()

  t.section(++n, 'Ada opens the owner link printed at start and becomes the owner')
  t.act('Ada', 'bot', `/start ${p.claim}`)
  await tg.push(BOT_ID, tg.command(ada, '/start', p.claim))
  await tg.waitForSent(ADMIN_ID, /you are the owner of this desk now/)
  mark = tg.mark()
  await step()

  t.section(++n, 'Ada adds the bot to the staff group «Desk staff»: first without the rights it needs')
  t.act('Ada', 'Telegram', 'adds the bot to «Desk staff» as a member')
  await tg.push(BOT_ID, tg.setBotMember(BOT_ID, STAFF_CHAT, ada, 'member'))
  await tg.waitForSent(ADMIN_ID, /cannot be the staff group yet/, { since: mark })
  mark = tg.mark()
  await step()
  t.act('Ada', 'Telegram', 'makes the bot an admin: Manage topics, Pin messages, Delete messages')
  await tg.push(
    BOT_ID,
    tg.setBotMember(BOT_ID, STAFF_CHAT, ada, {
      rights: { can_manage_topics: true, can_pin_messages: true, can_delete_messages: true },
    }),
  )
  await tg.waitForSent(ADMIN_ID, /Use «Desk staff» as the staff group\?/, { since: mark })
  mark = tg.mark()
  await step()
  await press('Use «Desk staff»', `sg:use:${STAFF_CHAT}`, /is the staff group now/)

  t.section(++n, 'Ada invites Ed, the expert; Ed opens the link')
  t.act('Ada', 'bot', '/invite expert')
  await tg.push(BOT_ID, tg.command(ada, '/invite', 'expert'))
  const link = await tg.waitForSent(ADMIN_ID, /start=inv_/, { since: mark })
  mark = tg.mark()
  await step()
  const invite = /start=(inv_[A-Za-z0-9_-]+)/.exec(String(link.text))![1]!
  t.act('Ed', 'bot', `/start ${invite}`)
  await tg.push(BOT_ID, tg.command(ed, '/start', invite))
  await tg.waitForSent(EXPERT_ID, /you are an expert now/)
  mark = tg.mark()
  await step()

  t.section(++n, 'Ada sets the hours in /settings: round the clock, every day')
  t.act('Ada', 'bot', '/settings')
  await tg.push(BOT_ID, tg.command(ada, '/settings'))
  await tg.waitForSent(ADMIN_ID, /Desk settings/, { since: mark })
  mark = tg.mark()
  await step()
  await press('🕒 Hours', 'st:h')
  const days = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const
  for (const [i, d] of days.entries()) {
    await press(d[0]!.toUpperCase() + d.slice(1), `st:hw:${d}:${await version()}`, /Send the hours/)
    await answer('00:00-24:00', /Saved/)
    if (i === 0) {
      t.note('the same for Tuesday to Sunday')
      t.quiet = true
    }
  }
  t.quiet = false

  t.section(++n, 'Ada creates the tariff in /settings, step by step, and adds a top-up')
  await press('📋 Tariffs', 'st:tl')
  await press('➕ New tariff', `st:tn:${await version()}`, /short code/)
  await answer('sprint', /title/)
  await answer('Review sprint, 2 h', /price/)
  await answer('300', /hours/)
  await answer('2', /questions/)
  await answer('3', /business hours/)
  await answer('1', /When does the window start/)
  await press('At payment', 'st:sm:immediate', /Created/)
  await press('📋 Tariffs', 'st:tl')
  await press('Review sprint, 2 h — 300 ⭐', 'st:t:sprint')
  await press('Top-ups', `st:te:sprint:topUps:${await version()}`, /top-ups/i)
  await answer('2 questions 100, 1 hour 60', /Saved/)
  return n
}

// A hard stop: whatever hangs, the demo ends (and says so) rather than running forever in CI.
setTimeout(() => {
  process.stderr.write('demo: did not finish within 300 s\n')
  process.exit(1)
}, 300_000).unref()

main().then(
  () => {
    process.exitCode = 0
  },
  (err) => {
    process.stderr.write(`demo failed: ${(err as Error).stack ?? err}\n`)
    process.exitCode = 1
  },
)
