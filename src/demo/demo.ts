import { sql } from 'kysely'
import { media } from '../../test/support/bot-api'
import { fastForward } from '../../test/support/lifecycle-clock'
import { clockNow } from '../db/clock'
import { BOSS_SCHEMA } from '../jobs/jobs'
import { termsHash } from '../orders/orders.service'
import {
  BOT_ID,
  EXPERT_ID,
  type OwnerChat,
  playOnEmptyDesk,
  runDemo,
  STAFF_CHAT,
  type Stage,
} from './empty-desk'
import type { Transcript } from './transcript'

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

const started = Date.now()

async function main(): Promise<void> {
  await playOnEmptyDesk(
    'consult-desk · offline demo: an empty desk set up from Telegram, then one consultation to the report',
    'consult_desk_demo',
    started,
    script,
  )
}

async function script(stage: Stage): Promise<void> {
  const { w, anna, ed, owner, t, step } = stage
  const { tg, app } = w
  const db = app.deps.db
  const ada = owner.ada
  let n = await createTariff(t, owner, stage.n)
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

/** Ada creates the tariff in /settings, step by step, with its top-ups. Returns the number of the last scene. */
async function createTariff(t: Transcript, ada: OwnerChat, n: number): Promise<number> {
  t.section(++n, 'Ada creates the tariff in /settings, step by step, and adds a top-up')
  await ada.press('📋 Tariffs', 'st:tl')
  await ada.press('➕ New tariff', `st:tn:${await ada.version()}`, /short code/)
  await ada.say('sprint', /title/)
  await ada.say('Review sprint, 2 h', /price/)
  await ada.say('300', /hours/)
  await ada.say('2', /questions/)
  await ada.say('3', /business hours/)
  await ada.say('1', /When does the window start/)
  await ada.press('At payment', 'st:sm:immediate', /Created/)
  await ada.press('📋 Tariffs', 'st:tl')
  await ada.press('Review sprint, 2 h — 300 ⭐', 'st:t:sprint')
  await ada.press('Top-ups', `st:te:sprint:topUps:${await ada.version()}`, /top-ups/i)
  await ada.say('2 questions 100, 1 hour 60', /Saved/)
  return n
}

runDemo(main)
