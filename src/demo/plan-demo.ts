import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { sql } from 'kysely'
import { type BotApiStandIn, type RecordedCall, startBotApi } from '../../test/support/bot-api'
import { type App, startApp } from '../app'
import type { PlanConfig } from '../config/schema'
import { type EmbeddedServer, ensureDatabase, startEmbeddedPostgres } from '../db/embedded'
import { createLogger, quietLogger } from '../log'
import { planTermsHash } from '../subscriptions/plans'
import { settle as settleDesk } from './settle'

/**
 * `npm run demo:plan`: a support plan paid by a Stars subscription (src/subscriptions), offline like `npm run demo`
 * (embedded PostgreSQL, the real app, the Telegram stand-in): Anna subscribes, asks, the period renews with
 * carry-over, she changes to a bigger plan (a new subscription starting when her paid time ends; the old one is
 * cancelled with Telegram) and cancels its renewal. The period's clock is moved instead of waiting 30
 * days (the period's stored instants shift into the past). Prints what each party saw; exit code 0 on success.
 */

const HERE = path.dirname(fileURLToPath(import.meta.url))
const TOKEN = `7000042:${'D'.repeat(35)}`
const BOT_ID = 7000042
const STAFF_CHAT = -1001000000042
const EXPERT_ID = 100000002
const WAIT_MS = 20_000
const DAY = 86_400_000
const started = Date.now()
const out = (line = '') => process.stdout.write(`${line}\n`)

const plan = (p: Partial<PlanConfig> & Pick<PlanConfig, 'code' | 'title'>): PlanConfig => ({
  kind: 'subscription',
  description: { en: 'Questions on your integration, answered by the expert.' },
  priceStars: 500,
  questions: 3,
  drafts: 3,
  slaBusinessHours: 4,
  features: { attachments: true, prioritySla: false, transcriptExport: true },
  carryOver: { capped: 2 },
  refundPolicy: 'keep_used',
  terms: { version: 'plan-demo-1', text: { en: 'Renews every 30 days until cancelled with /plan.' } },
  ...p,
})
const BASIC = plan({ code: 'basic', title: { en: 'Support, basic' } })
const PRO = plan({ code: 'pro', title: { en: 'Support, pro' }, priceStars: 900, questions: 6 })

interface World {
  app: App
  tg: BotApiStandIn
  pg: EmbeddedServer
}

let since = 0
function who(chat: number, thread?: number): string {
  if (chat === STAFF_CHAT) return thread ? `bot ▸ topic #${thread}` : 'bot ▸ staff group'
  return 'bot ▸ Anna'
}
function buttons(markup: unknown): string {
  const rows = (markup as { inline_keyboard?: { text: string; url?: string }[][] } | undefined)
    ?.inline_keyboard
  if (!rows) return ''
  return `\n${' '.repeat(22)}${rows.map((r) => r.map((b) => `[ ${b.text}${b.url ? ` → ${b.url}` : ''} ]`).join(' ')).join(' ')}`
}
function shown(c: RecordedCall): string | undefined {
  const p = c.payload
  const chat = Number(p.chat_id)
  const thread = p.message_thread_id !== undefined ? Number(p.message_thread_id) : undefined
  switch (c.method) {
    case 'sendMessage':
      return `${who(chat, thread).padEnd(20)}  ${p.text}${buttons(p.reply_markup)}`
    case 'editMessageText':
      return `${who(chat, thread).padEnd(20)}  ✎ ${p.text}`
    case 'copyMessage':
      return `${who(chat, thread).padEnd(20)}  (a copy of message ${p.message_id})`
    case 'createInvoiceLink':
      return `${'bot ▸ Telegram'.padEnd(20)}  createInvoiceLink “${p.title}” ${p.prices?.[0]?.amount} ⭐${p.subscription_period ? `, subscription_period ${p.subscription_period}` : ' (one-off)'}`
    case 'editUserStarSubscription':
      return `${'bot ▸ Telegram'.padEnd(20)}  editUserStarSubscription(is_canceled: ${p.is_canceled})`
    case 'createForumTopic':
      return `${'bot ▸ staff group'.padEnd(20)}  🗂 new topic “${p.name}”`
    default:
      return undefined
  }
}
function flush(tg: BotApiStandIn): void {
  for (const c of tg.calls.filter((x) => x.seq > since && x.ok)) {
    const s = shown(c)
    if (s) out(s)
  }
  since = tg.mark()
}

function settle(w: World): Promise<void> {
  return settleDesk(w.app.deps.db, w.tg, BOT_ID, WAIT_MS)
}

async function script(w: World): Promise<void> {
  const { tg, app } = w
  const db = app.deps.db
  const anna = tg.user({ first_name: 'Anna', username: 'anna_dev', language_code: 'en' })
  const ed = tg.user({ id: EXPERT_ID, first_name: 'Ed', language_code: 'en' })
  let n = 0
  const section = (title: string) => {
    out()
    out(`── ${++n} · ${title} ${'─'.repeat(Math.max(3, 90 - title.length))}`)
  }
  const act = (text: string) => out(`${'Anna ▸ bot'.padEnd(20)}  ${text}`)
  const step = async () => {
    await settle(w)
    flush(tg)
  }

  section('Anna looks at the plan and its terms (/plan)')
  await tg.push(BOT_ID, tg.command(anna, 'start'))
  await tg.waitForSent(anna.id, /Anna/)
  since = tg.mark()
  act('/plan')
  await tg.push(BOT_ID, tg.command(anna, 'plan'))
  await tg.waitForSent(anna.id, /Support, basic/)
  await step()

  section('Anna subscribes: a subscription link (Telegram sells subscriptions only through links)')
  act('[ ✅ Accept the terms and subscribe ]')
  await tg.push(BOT_ID, tg.callback(anna, `sub:buy:basic:${planTermsHash(BASIC)}`))
  const link = await tg.waitFor('createInvoiceLink', {})
  await tg.waitForSent(anna.id, /open the link below to subscribe/)
  await step()
  const payload = String(link.payload.payload)
  const q = tg.preCheckout(anna, { invoice_payload: payload, total_amount: 500 })
  await tg.push(BOT_ID, q)
  await tg.waitFor('answerPreCheckoutQuery', { pre_checkout_query_id: q.pre_checkout_query!.id, ok: true })
  out(`${'Telegram ▸ bot'.padEnd(20)}  successful_payment 500 ⭐, is_first_recurring, charge “demo-1”`)
  await tg.push(
    BOT_ID,
    tg.successfulPayment(anna, {
      invoice_payload: payload,
      total_amount: 500,
      telegram_payment_charge_id: 'demo-1',
      subscription_expiration_date: Math.floor((Date.now() + 30 * DAY) / 1000),
      is_recurring: true,
      is_first_recurring: true,
    }),
  )
  await tg.waitForSent(anna.id, /is active/)
  await step()

  section('Anna asks; Ed answers in the topic (the same desk as a consultation)')
  act('How do I verify the webhook signature?')
  await tg.push(BOT_ID, tg.privateText(anna, 'How do I verify the webhook signature?'))
  const copy = await tg.waitFor('copyMessage', { chat_id: STAFF_CHAT })
  await step()
  const thread = Number(copy.payload.message_thread_id)
  out(`${'Ed ▸ topic'.padEnd(20)}  HMAC-SHA256 over the raw body, compared in constant time.`)
  await tg.push(
    BOT_ID,
    tg.groupTopicMessage(STAFF_CHAT, thread, ed, 'HMAC-SHA256 over the raw body, compared in constant time.'),
  )
  await tg.waitFor('copyMessage', { chat_id: anna.id })
  await step()

  section('30 days later: the renewal (a new charge id), period 2 with the unused questions carried over')
  const sub = await db.selectFrom('subscription').selectAll().executeTakeFirstOrThrow()
  const p1 = await db
    .selectFrom('subscription_period')
    .selectAll()
    .where('subscription_id', '=', sub.id)
    .executeTakeFirstOrThrow()
  const shift = sql.raw(`interval '${p1.period_end.getTime() - Date.now() + 60_000} milliseconds'`)
  await sql`update subscription_period set period_start = period_start - ${shift}, period_end = period_end - ${shift}
    where subscription_id = ${sub.id}`.execute(db)
  await sql`update ledger_account set period_start = period_start - ${shift}, period_end = period_end - ${shift}
    where scope = 'consultation' and subject = ${String(sub.consultation_id)}`.execute(db)
  await sql`update consultation set starts_at = starts_at - ${shift}, access_until = access_until - ${shift}
    where id = ${sub.consultation_id}`.execute(db)
  out('(the period’s clock moved: period 1 ended a minute ago)')
  out(`${'Telegram ▸ bot'.padEnd(20)}  successful_payment 500 ⭐, is_recurring, charge “demo-2”`)
  await tg.push(
    BOT_ID,
    tg.successfulPayment(anna, {
      invoice_payload: payload,
      total_amount: 500,
      telegram_payment_charge_id: 'demo-2',
      subscription_expiration_date: Math.floor((Date.now() - 60_000 + 30 * DAY) / 1000),
      is_recurring: true,
    }),
  )
  await tg.waitForSent(anna.id, /renewed/)
  await step()

  section('Anna changes to the pro plan: a new subscription at its price, from the end of her paid time')
  act('/plan')
  await tg.push(BOT_ID, tg.command(anna, 'plan'))
  await tg.waitForSent(anna.id, /Your plan/)
  await step()
  act('[ 🔁 Change plan ]')
  await tg.push(BOT_ID, tg.callback(anna, 'sub:change'))
  await tg.waitForSent(anna.id, /Choose the plan to change to/)
  await step()
  act('[ Support, pro — 900 ⭐ / 30 days ]')
  const mark = tg.mark()
  await tg.push(BOT_ID, tg.callback(anna, `sub:chg:pro:${planTermsHash(PRO)}`))
  const up = await tg.waitFor('createInvoiceLink', {}, { since: mark })
  await tg.waitForSent(anna.id, /Change to “Support, pro”/)
  await step()
  const upPayload = String(up.payload.payload)
  const uq = tg.preCheckout(anna, { invoice_payload: upPayload, total_amount: 900 })
  await tg.push(BOT_ID, uq)
  await tg.waitFor('answerPreCheckoutQuery', { pre_checkout_query_id: uq.pre_checkout_query!.id, ok: true })
  out(`${'Telegram ▸ bot'.padEnd(20)}  successful_payment 900 ⭐, is_first_recurring, charge “demo-pro-1”`)
  await tg.push(
    BOT_ID,
    tg.successfulPayment(anna, {
      invoice_payload: upPayload,
      total_amount: 900,
      telegram_payment_charge_id: 'demo-pro-1',
      subscription_expiration_date: Math.floor((Date.now() + 30 * DAY) / 1000),
      is_recurring: true,
      is_first_recurring: true,
    }),
  )
  await tg.waitForSent(anna.id, /Change of plan paid/)
  await tg.waitFor('editUserStarSubscription', {})
  await step()

  section('Anna checks /plan and cancels the renewal (access runs to the period end)')
  act('/plan')
  await tg.push(BOT_ID, tg.command(anna, 'plan'))
  await tg.waitForSent(anna.id, /Your plan/)
  await step()
  act('[ ✖️ Cancel renewal ]')
  const before = tg.mark()
  await tg.push(BOT_ID, tg.callback(anna, 'sub:cancel'))
  await tg.waitFor('editUserStarSubscription', {}, { since: before })
  await tg.waitForSent(anna.id, /Renewal is cancelled/)
  await step()
}

async function main(): Promise<void> {
  out('consult-desk · offline demo: a support plan paid by a Stars subscription')
  const log = process.env.LOG_LEVEL ? createLogger(process.env.LOG_LEVEL) : quietLogger()
  const pg = await startEmbeddedPostgres()
  const cleanup: (() => Promise<unknown>)[] = [() => pg.stop()]
  try {
    const url = await ensureDatabase(pg.url, 'consult_desk_plan_demo')
    const tg = await startBotApi({ defaultWaitTimeoutMs: WAIT_MS })
    cleanup.push(() => tg.close())
    tg.forum({ id: STAFF_CHAT, title: 'Desk staff' })
    const { loadConfig } = await import('../config/load')
    const config = loadConfig({
      CONFIG_FILE: path.join(HERE, 'demo.yaml'),
      DEMO_BOT_TOKEN: TOKEN,
      DATABASE_URL: url,
      TELEGRAM_API_ROOT: tg.root,
    })
    config.desks[0]!.plans = [BASIC, PRO]
    const app = await startApp(config, { role: 'all', log })
    cleanup.push(() => app.stop())
    await script({ app, tg, pg })
  } finally {
    while (cleanup.length) await cleanup.pop()!().catch(() => {})
  }
  out()
  out(`demo finished in ${((Date.now() - started) / 1000).toFixed(1)} s; everything it started is stopped.`)
}

main().catch((err) => {
  process.stderr.write(`demo failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`)
  process.exitCode = 1
})
