import { sql } from 'kysely'
import { findPlan, planTermsHash } from '../subscriptions/plans'
import { BOT_ID, type OwnerChat, playOnEmptyDesk, runDemo, STAFF_CHAT, type Stage } from './empty-desk'

/**
 * `npm run demo:plan`: a support plan paid by a Stars subscription (src/subscriptions), offline like `npm run demo`
 * and from the same empty desk (./empty-desk.ts: the owner claims it, binds the staff group, invites the expert,
 * sets the hours). The owner (Ada) creates two plans in /settings step by step (with a carry-over of unused
 * questions on the first); then Anna subscribes, asks, the period renews with carry-over, she changes to the bigger
 * plan (a new subscription starting when her paid time ends; the old one is cancelled with Telegram) and cancels its
 * renewal. The period's clock is moved instead of waiting 30 days (the period's stored instants shift into the
 * past). Prints what each party saw; exit code 0 on success.
 */

const DAY = 86_400_000
const started = Date.now()

async function main(): Promise<void> {
  await playOnEmptyDesk(
    'consult-desk · offline demo: a support plan paid by a Stars subscription, on a desk set up from Telegram',
    'consult_desk_plan_demo',
    started,
    script,
  )
}

/** Ada creates a plan in /settings step by step. */
async function createPlan(
  ada: OwnerChat,
  p: { code: string; title: string; price: number; questions: number; sla: number },
): Promise<void> {
  await ada.press('🔁 Plans', 'st:pl')
  await ada.press('➕ New plan', `st:pn:${await ada.version()}`, /short code/)
  await ada.say(p.code, /title/)
  await ada.say(p.title, /price per 30 days/)
  await ada.say(String(p.price), /questions a period/)
  await ada.say(String(p.questions), /business hours/)
  await ada.say(String(p.sla), /Created/)
}

async function script(stage: Stage): Promise<void> {
  const { w, anna, ed, owner, t, step } = stage
  const { tg, app } = w
  const db = app.deps.db
  /** Anna does something (a command or a button) and waits for the bot's answer to it. */
  const annaDoes = async (label: string, update: Parameters<typeof tg.push>[1], reply: RegExp) => {
    t.act('Anna', 'bot', label)
    const since = tg.mark()
    await tg.push(BOT_ID, update)
    await tg.waitForSent(anna.id, reply, { since })
    await step()
  }
  let n = stage.n

  t.section(
    ++n,
    'Ada creates two plans in /settings, step by step; the first carries 2 unused questions over',
  )
  await createPlan(owner, { code: 'basic', title: 'Support, basic', price: 500, questions: 3, sla: 4 })
  await owner.press('🔁 Plans', 'st:pl')
  await owner.press('Support, basic — 500 ⭐ / 30 days', 'st:p:basic')
  await owner.press('Carry-over', `st:pe:basic:carry:${await owner.version()}`, /unused questions/)
  await owner.say('2', /Saved/)
  t.note('the same for “Support, pro”: 900 ⭐ per 30 days, 6 questions, answers within 4 business hours')
  t.quiet = true
  await createPlan(owner, { code: 'pro', title: 'Support, pro', price: 900, questions: 6, sla: 4 })
  t.quiet = false
  const desk = app.deps.desk(BOT_ID)
  const basic = findPlan(desk, 'basic')!
  const pro = findPlan(desk, 'pro')!

  t.section(++n, 'Anna looks at the plan and its terms (/plan)')
  await annaDoes('/start', tg.command(anna, 'start'), /Anna/)
  await annaDoes('/plan', tg.command(anna, 'plan'), /Support, pro/)

  t.section(++n, 'Anna subscribes: a subscription link (Telegram sells subscriptions only through links)')
  t.act('Anna', 'bot', '[ ✅ Accept the terms and subscribe ]')
  let mark = tg.mark()
  await tg.push(BOT_ID, tg.callback(anna, `sub:buy:basic:${planTermsHash(basic)}`))
  const link = await tg.waitFor('createInvoiceLink', {}, { since: mark })
  await tg.waitForSent(anna.id, /open the link below to subscribe/)
  await step()
  const payload = String(link.payload.payload)
  t.act('Anna', 'Telegram', 'opens the link and pays (Telegram asks the bot first: pre_checkout_query)')
  const q = tg.preCheckout(anna, { invoice_payload: payload, total_amount: 500 })
  await tg.push(BOT_ID, q)
  await tg.waitFor('answerPreCheckoutQuery', { pre_checkout_query_id: q.pre_checkout_query!.id, ok: true })
  await step()
  t.act('Telegram', 'bot', 'successful_payment 500 ⭐, is_first_recurring, charge “demo-1”')
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

  t.section(++n, 'Anna asks; Ed answers in the topic (the same desk as a consultation)')
  t.act('Anna', 'bot', 'How do I verify the webhook signature?')
  await tg.push(BOT_ID, tg.privateText(anna, 'How do I verify the webhook signature?'))
  const copy = await tg.waitFor('copyMessage', { chat_id: STAFF_CHAT })
  await step()
  const thread = Number(copy.payload.message_thread_id)
  const answer = 'HMAC-SHA256 over the raw body, compared in constant time.'
  t.act('Ed', `topic #${thread}`, answer)
  await tg.push(BOT_ID, tg.groupTopicMessage(STAFF_CHAT, thread, ed, answer))
  await tg.waitFor('copyMessage', { chat_id: anna.id })
  await step()

  t.section(
    ++n,
    '30 days later: the renewal (a new charge id), period 2 with the unused questions carried over',
  )
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
  t.note('the period’s clock moved: period 1 ended a minute ago')
  t.act('Telegram', 'bot', 'successful_payment 500 ⭐, is_recurring, charge “demo-2”')
  mark = tg.mark()
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
  await tg.waitForSent(anna.id, /renewed/, { since: mark })
  await step()

  t.section(
    ++n,
    'Anna changes to the pro plan: a new subscription at its price, from the end of her paid time',
  )
  await annaDoes('/plan', tg.command(anna, 'plan'), /Your plan/)
  await annaDoes('[ 🔁 Change plan ]', tg.callback(anna, 'sub:change'), /Choose the plan to change to/)
  t.act('Anna', 'bot', '[ Support, pro — 900 ⭐ / 30 days ]')
  mark = tg.mark()
  await tg.push(BOT_ID, tg.callback(anna, `sub:chg:pro:${planTermsHash(pro)}`))
  const up = await tg.waitFor('createInvoiceLink', {}, { since: mark })
  await tg.waitForSent(anna.id, /Change to “Support, pro”/)
  await step()
  const upPayload = String(up.payload.payload)
  t.act('Anna', 'Telegram', 'opens the link and pays')
  const uq = tg.preCheckout(anna, { invoice_payload: upPayload, total_amount: 900 })
  await tg.push(BOT_ID, uq)
  await tg.waitFor('answerPreCheckoutQuery', { pre_checkout_query_id: uq.pre_checkout_query!.id, ok: true })
  await step()
  t.act('Telegram', 'bot', 'successful_payment 900 ⭐, is_first_recurring, charge “demo-pro-1”')
  mark = tg.mark()
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
  await tg.waitFor('editUserStarSubscription', {}, { since: mark })
  await step()

  t.section(++n, 'Anna checks /plan and cancels the renewal (access runs to the period end)')
  await annaDoes('/plan', tg.command(anna, 'plan'), /Your plan/)
  t.act('Anna', 'bot', '[ ✖️ Cancel renewal ]')
  mark = tg.mark()
  await tg.push(BOT_ID, tg.callback(anna, 'sub:cancel'))
  await tg.waitFor('editUserStarSubscription', {}, { since: mark })
  await tg.waitForSent(anna.id, /Renewal is cancelled/)
  await step()
}

runDemo(main)
