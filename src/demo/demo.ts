import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { User } from 'grammy/types'
import { sql } from 'kysely'
import {
  type BotApiStandIn,
  media,
  type RecordedCall,
  type RecordedFile,
  startBotApi,
} from '../../test/support/bot-api'
import { fastForward } from '../../test/support/lifecycle-clock'
import { type App, startApp } from '../app'
import { loadConfig } from '../config/load'
import { clockNow } from '../db/clock'
import { type EmbeddedServer, ensureDatabase, startEmbeddedPostgres } from '../db/embedded'
import { BOSS_SCHEMA } from '../jobs/jobs'
import { createLogger, quietLogger } from '../log'
import { termsHash } from '../orders/orders.service'
import { settle as settleDesk } from './settle'

/**
 * `npm run demo`: the whole desk on one machine, no token, no network. An embedded PostgreSQL in a throwaway
 * directory, the real app (src/app.ts: bot in polling mode and every worker), and the Bot API stand-in of the tests
 * (test/support/bot-api.ts) in Telegram's place, with a script playing a client (Anna), an expert (Ed) and an admin
 * (Ada) through one consultation. Everything the bot does in Telegram is printed as the party who sees it would see
 * it. Time: the demo tariff's window is 2 hours; instead of waiting, the consultation's own clock is moved forward
 * (test/support/lifecycle-clock.ts: its stored instants and its scheduled jobs shift into the past) and the real
 * jobs fire by themselves. Ends by itself and stops everything it started; exit code 0 on success.
 *
 * A little over the house's ~400 lines on purpose: one story, read top to bottom as the scenes play.
 */

const HERE = path.dirname(fileURLToPath(import.meta.url))
const TOKEN = `7000042:${'D'.repeat(35)}`
const BOT_ID = 7000042
const STAFF_CHAT = -1001000000042
const ADMIN_ID = 100000001
const EXPERT_ID = 100000002
const WAIT_MS = 20_000
const started = Date.now()

const out = (line = '') => process.stdout.write(`${line}\n`)

// ---------------------------------------------------------------------------------------------------------------
// What each party saw: the stand-in records every call the bot made; they are printed in order, by audience.

class Transcript {
  private since = 0
  /** Who pressed the last button (pop-ups go to them). */
  lastActor = ''

  constructor(
    private readonly tg: BotApiStandIn,
    private readonly client: User,
  ) {}

  section(n: number, title: string): void {
    out()
    out(`── ${n} · ${title} ${'─'.repeat(Math.max(3, 96 - title.length))}`)
  }

  note(text: string): void {
    out(`   ⏩ ${text}`)
  }

  /** A party's own action. */
  act(who: string, where: string, text: string): void {
    this.lastActor = who
    this.print(`${who} ▸ ${where}`, text)
  }

  private where(chatId: number, thread: number | undefined): string {
    if (chatId === this.client.id) return `bot ▸ ${this.client.first_name}`
    if (chatId === STAFF_CHAT) return thread ? `bot ▸ topic #${thread}` : 'bot ▸ staff General'
    if (chatId === EXPERT_ID) return 'bot ▸ Ed (private)'
    if (chatId === ADMIN_ID) return 'bot ▸ Ada (private)'
    return `bot ▸ ${chatId}`
  }

  private print(label: string, text: string): void {
    const lines = text.split('\n')
    out(`   ${label.padEnd(24)} ${lines[0]}`)
    for (const l of lines.slice(1)) out(`   ${''.padEnd(24)} ${l}`)
  }

  private describe(chatId: number, messageId: number): string {
    const m = this.tg.message(chatId, messageId) as Record<string, any> | undefined
    if (!m) return '(message)'
    const text = m.text ?? m.caption ?? ''
    const kind = ['photo', 'document', 'voice', 'video', 'sticker', 'location'].find(
      (k) => m[k] !== undefined,
    )
    return kind ? `[${kind}]${text ? ` ${text}` : ''}` : text
  }

  private buttons(markup: any): string {
    const rows: any[][] = markup?.inline_keyboard ?? []
    const all = rows.flat().map((b) => `[ ${b.text} ]`)
    return all.length ? `\n${all.join('  ')}` : ''
  }

  /** Prints every call of the bot since the last flush, in the order Telegram received them. */
  flush(): void {
    const calls = this.tg.calls.filter((c) => c.seq > this.since && c.ok)
    for (const c of calls) this.render(c)
    this.since = this.tg.mark()
  }

  private render(c: RecordedCall): void {
    const shown = this.shown(c)
    if (shown) this.print(shown[0], shown[1])
  }

  /** Who sees the call's effect and how it reads to them; undefined for calls nobody sees. */
  private shown(c: RecordedCall): [string, string] | undefined {
    const p = c.payload
    const chat = Number(p.chat_id)
    let thread = p.message_thread_id !== undefined ? Number(p.message_thread_id) : undefined
    switch (c.method) {
      case 'sendMessage':
        return [this.where(chat, thread), `${p.text}${this.buttons(p.reply_markup)}`]
      case 'copyMessage':
        return [this.where(chat, thread), `${this.describe(chat, c.result.message_id)}   (copy)`]
      case 'copyMessages':
        return [
          this.where(chat, thread),
          (c.result as { message_id: number }[]).map((r) => this.describe(chat, r.message_id)).join('\n'),
        ]
      case 'editMessageText':
        // An edit names no thread: the edited message says where it is.
        thread ??= this.tg.message(chat, Number(p.message_id))?.message_thread_id
        return [this.where(chat, thread), `✎ ${p.text}${this.buttons(p.reply_markup)}`]
      case 'sendInvoice':
        return [this.where(chat, thread), `🧾 invoice “${p.title}”: ${p.prices?.[0]?.amount} ⭐`]
      case 'answerPreCheckoutQuery':
        return [`bot ▸ ${this.client.first_name}`, '✔ pre-checkout approved (Telegram takes the Stars)']
      case 'answerCallbackQuery':
        return p.text ? [`bot ▸ ${this.lastActor}`, `💬 pop-up: ${p.text}`] : undefined
      case 'setMessageReaction':
        return [this.where(chat, undefined), `${p.reaction?.[0]?.emoji ?? ''} on the message (received)`]
      case 'createForumTopic':
        return ['bot ▸ staff group', `🗂 new topic #${c.result.message_thread_id} “${p.name}”`]
      case 'editForumTopic':
        return [this.where(chat, thread), `🗂 topic renamed “${p.name}”`]
      case 'closeForumTopic':
        return [this.where(chat, thread), '🗂 topic closed']
      case 'pinChatMessage':
        return ['bot ▸ staff group', '📌 the client card is pinned in the topic']
      case 'sendDocument': {
        const f = p.document as RecordedFile
        const body = f.data?.toString('utf8').trimEnd() ?? ''
        const lines = body.split('\n').map((l) => `│ ${l}`)
        return [
          this.where(chat, thread),
          `📎 ${f.filename} (${f.size} bytes) — ${p.caption ?? ''}\n${lines.join('\n')}`,
        ]
      }
      default:
        return undefined
    }
  }
}

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
  out('consult-desk · offline demo: one consultation from the tariffs to the report')
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
    const config = loadConfig({
      CONFIG_FILE: path.join(HERE, 'demo.yaml'),
      DEMO_BOT_TOKEN: TOKEN,
      DATABASE_URL: url,
      TELEGRAM_API_ROOT: tg.root,
    })
    const app = await startApp(config, { role: 'all', log })
    cleanup.push(() => app.stop())
    const w: World = { app, tg, pg }
    out(`ready in ${((Date.now() - started) / 1000).toFixed(1)} s: bot (polling) and workers running`)
    await script(w, config.desks[0]!.terms.version)
  } finally {
    await stopAll()
  }
  out()
  out(`demo finished in ${((Date.now() - started) / 1000).toFixed(1)} s; everything it started is stopped.`)
}

async function script(w: World, termsVersion: string): Promise<void> {
  const { tg, app } = w
  const db = app.deps.db
  const anna = tg.user({ first_name: 'Anna', username: 'anna_dev', language_code: 'en' })
  const ed = tg.user({ id: EXPERT_ID, first_name: 'Ed', language_code: 'en' })
  const ada = tg.user({ id: ADMIN_ID, first_name: 'Ada', language_code: 'en' })
  const t = new Transcript(tg, anna)
  const step = async () => {
    await settle(w)
    t.flush()
  }
  let n = 0

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
  await advanceTo('sla.remind', 'the reminder is due 15 business minutes before the answer')
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
  await advanceTo('lifecycle.closing-soon', 'the notice is due 30 minutes before the end')
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

  t.section(++n, 'Ada, an admin, asks for the report in the staff group')
  t.act('Ada', 'staff General', '/report')
  await tg.push(BOT_ID, tg.groupTopicMessage(STAFF_CHAT, undefined, ada, '/report'))
  await tg.waitForSent(STAFF_CHAT, /Report/)
  await step()
}

// A hard stop: whatever hangs, the demo ends (and says so) rather than running forever in CI.
setTimeout(() => {
  process.stderr.write('demo: did not finish within 120 s\n')
  process.exit(1)
}, 120_000).unref()

main().then(
  () => {
    process.exitCode = 0
  },
  (err) => {
    process.stderr.write(`demo failed: ${(err as Error).stack ?? err}\n`)
    process.exitCode = 1
  },
)
