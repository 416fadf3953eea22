import type { User } from 'grammy/types'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DeskRuntime } from '../../src/config/load'
import { checkInvariants } from '../../src/ledger/ledger.invariants'
import { termsHash } from '../../src/orders/orders.service'
import { type BotApiStandIn, type RecordedFile, startBotApi } from '../support/bot-api'
import {
  ADMIN_ID,
  type DeskWorld,
  eventually,
  inboxDrained,
  STAFF_CHAT_ID,
  startDeskWorld,
  TEST_BOT_ID,
  topicReady,
} from '../support/fixtures'

/**
 * Tenant isolation (issue 18): two desks (two bots, two staff groups) in one deployment - one process, one database
 * - and the same Telegram user a client of both. Payments, topics, ledger accounts, messages, reports, /mydata never
 * mix; an admin of desk A can do nothing on desk B, by command or by button, and desk B's buttons carrying desk A's
 * ids change nothing of desk A.
 */

const BOT_B = 7000002
const TOKEN_B = `${BOT_B}:${'U'.repeat(35)}`
const STAFF_B = -1009000000002
const ADMIN_B = 900011
const EXPERT_B = 900012

/** The real payment path (tariff button, invoice, pre-checkout, successful payment) on one desk's bot. */
async function pay(w: DeskWorld, desk: DeskRuntime, client: User, code: string) {
  const since = w.tg.mark()
  await w.tg.push(desk.botId, w.tg.callback(client, `tf:buy:${code}:${termsHash(desk.terms.version)}`))
  const invoice = await w.tg.waitFor('sendInvoice', { chat_id: client.id }, { since, botId: desk.botId })
  const p = invoice.payload as { payload: string; prices: { amount: number }[] }
  const amount = p.prices[0]!.amount
  const q = w.tg.preCheckout(client, { invoice_payload: p.payload, total_amount: amount })
  await w.tg.push(desk.botId, q)
  await w.tg.waitFor('answerPreCheckoutQuery', { pre_checkout_query_id: q.pre_checkout_query!.id, ok: true })
  await w.tg.push(
    desk.botId,
    w.tg.successfulPayment(client, { invoice_payload: p.payload, total_amount: amount }),
  )
  return eventually(async () => {
    const c = await w.deps.db
      .selectFrom('consultation')
      .select(['id', 'order_id', 'state'])
      .where('bot_id', '=', desk.botId)
      .where('user_id', '=', client.id)
      .orderBy('id', 'desc')
      .executeTakeFirst()
    return c?.state === 'active' ? { consultationId: c.id, orderId: c.order_id } : undefined
  }, `a paid consultation of ${client.id} at bot ${desk.botId}`)
}

/** Every Bot API call one bot made to one chat (any method). */
const callsOf = (tg: BotApiStandIn, botId: number, chatId: number) =>
  tg.callsTo(
    ['sendMessage', 'copyMessage', 'sendDocument', 'createForumTopic', 'editForumTopic', 'editMessageText'],
    (p) => p.chat_id === chatId,
    { botId },
  )

async function myData(w: DeskWorld, botId: number, client: User) {
  const since = w.tg.mark()
  await w.tg.push(botId, w.tg.privateText(client, '/mydata'))
  const doc = await w.tg.waitFor('sendDocument', { chat_id: client.id }, { since, botId })
  return JSON.parse((doc.payload.document as RecordedFile).data!.toString('utf8'))
}

describe('tenant isolation: two desks in one deployment, one client of both', () => {
  let w: DeskWorld
  let tg: BotApiStandIn
  let deskA: DeskRuntime
  let deskB: DeskRuntime
  let client: User
  let a: { consultationId: number; orderId: number }
  let b: { consultationId: number; orderId: number }

  beforeAll(async () => {
    tg = await startBotApi({ defaultWaitTimeoutMs: 15_000 })
    tg.forum({ id: STAFF_B, title: 'Staff B' })
    w = await startDeskWorld({
      tg,
      configure: (c) => {
        const first = c.desks[0]!
        c.desks.push({
          ...first,
          slug: 'second',
          name: { ru: 'Второй стол', en: 'Second desk' },
          tokenEnv: 'BOT_TOKEN_B',
          token: TOKEN_B,
          botId: BOT_B,
          staffChatId: STAFF_B,
          staff: { ...first.staff, admins: [ADMIN_B], experts: [EXPERT_B] },
        })
      },
    })
    deskA = w.t.config.desks[0]!
    deskB = w.t.config.desks[1]!
    tg.user({ id: ADMIN_B, first_name: 'Bea', language_code: 'en' })
    tg.user({ id: EXPERT_B, first_name: 'Ben', language_code: 'en' })
    client = tg.user({ first_name: 'Shared', username: 'shared_client', language_code: 'en' })
    a = await pay(w, deskA, client, 'quick')
    b = await pay(w, deskB, client, 'quick')
  })
  afterAll(async () => {
    await w?.stop()
    await tg?.close()
  })

  it('payments, topics, messages, ledger accounts and /mydata stay with their desk', async () => {
    // Orders, payments, consultations: each row carries its own desk's bot id.
    const rows = await sql<{ t: string; bot_id: string; id: string }>`
      select 'order' as t, bot_id, id from orders where user_id = ${client.id}
      union all select 'payment', bot_id, order_id from payment where user_id = ${client.id}
      union all select 'consultation', bot_id, order_id from consultation where user_id = ${client.id}
      order by 1, 2`.execute(w.deps.db)
    expect(rows.rows.map((r) => [r.t, Number(r.bot_id), Number(r.id)])).toEqual([
      ['consultation', TEST_BOT_ID, a.orderId],
      ['consultation', BOT_B, b.orderId],
      ['order', TEST_BOT_ID, a.orderId],
      ['order', BOT_B, b.orderId],
      ['payment', TEST_BOT_ID, a.orderId],
      ['payment', BOT_B, b.orderId],
    ])

    // One topic each, in its own desk's group, created by its own bot.
    const routeA = await topicReady(w, a.consultationId)
    const routeB = await topicReady(w, b.consultationId)
    expect([Number(routeA.bot_id), Number(routeA.support_chat_id)]).toEqual([TEST_BOT_ID, STAFF_CHAT_ID])
    expect([Number(routeB.bot_id), Number(routeB.support_chat_id)]).toEqual([BOT_B, STAFF_B])

    // The client writes to both bots; each message reaches only its desk's topic; each expert's answer only its bot.
    const toA = tg.privateText(client, 'Question for desk A: alpha')
    await tg.push(TEST_BOT_ID, toA)
    const toB = tg.privateText(client, 'Question for desk B: bravo')
    await tg.push(BOT_B, toB)
    await tg.waitFor('copyMessage', { chat_id: STAFF_CHAT_ID, message_thread_id: routeA.message_thread_id })
    await tg.waitFor(
      'copyMessage',
      { chat_id: STAFF_B, message_thread_id: routeB.message_thread_id },
      { botId: BOT_B },
    )
    await tg.push(
      BOT_B,
      tg.groupTopicMessage(
        STAFF_B,
        routeB.message_thread_id,
        tg.user({ id: EXPERT_B }),
        'Answer from B: charlie',
      ),
    )
    await tg.waitFor('copyMessage', { chat_id: client.id }, { botId: BOT_B })
    await inboxDrained(w.deps.db)
    expect(callsOf(tg, TEST_BOT_ID, STAFF_B)).toHaveLength(0)
    expect(callsOf(tg, BOT_B, STAFF_CHAT_ID)).toHaveLength(0)
    expect(tg.callsTo('copyMessage', { chat_id: client.id }, { botId: TEST_BOT_ID })).toHaveLength(0)
    const msgs = await sql<{ bot_id: string; consultation_id: string; text: string | null }>`
      select bot_id, consultation_id, content->>'text' as text from desk_message
        where consultation_id in (${a.consultationId}, ${b.consultationId}) and kind = 'copy' order by id`.execute(
      w.deps.db,
    )
    for (const m of msgs.rows) {
      const mine = Number(m.bot_id) === TEST_BOT_ID ? a.consultationId : b.consultationId
      expect(Number(m.consultation_id)).toBe(mine)
    }
    expect(msgs.rows.map((m) => m.text).sort()).toEqual([
      'Answer from B: charlie',
      'Question for desk A: alpha',
      'Question for desk B: bravo',
    ])

    // Ledger: each consultation's accounts are its own; each desk's question was reserved on its own account.
    const accounts = await sql<{ subject: string; unit: string; reserved: string; used: string }>`
      select subject, unit, reserved, used from ledger_account
        where scope = 'consultation' and subject in (${String(a.consultationId)}, ${String(b.consultationId)})
        order by subject, unit`.execute(w.deps.db)
    const subjects = new Set(accounts.rows.map((r) => r.subject))
    expect(subjects).toEqual(new Set([String(a.consultationId), String(b.consultationId)]))
    const appeals = await sql<{ consultation_id: string; n: number }>`
      select consultation_id, count(*)::int as n from desk_appeal
        where consultation_id in (${a.consultationId}, ${b.consultationId}) group by 1 order by 1`.execute(
      w.deps.db,
    )
    expect(appeals.rows.map((r) => [Number(r.consultation_id), r.n])).toEqual([
      [a.consultationId, 1],
      [b.consultationId, 1],
    ])
    expect((await checkInvariants(w.deps.db)).ok).toBe(true)

    // /mydata at each bot: that desk's data only.
    const dataA = await myData(w, TEST_BOT_ID, client)
    const dataB = await myData(w, BOT_B, client)
    expect(dataA.orders.map((o: { id: number }) => o.id)).toEqual([a.orderId])
    expect(dataB.orders.map((o: { id: number }) => o.id)).toEqual([b.orderId])
    expect(dataA.consultations.map((c: { id: number }) => c.id)).toEqual([a.consultationId])
    expect(dataB.consultations.map((c: { id: number }) => c.id)).toEqual([b.consultationId])
    expect(JSON.stringify(dataA)).not.toMatch(/bravo|charlie/)
    expect(JSON.stringify(dataB)).not.toMatch(/alpha/)
    expect(dataA.payments).toHaveLength(1)
    expect(dataB.payments).toHaveLength(1)

    // /report: each desk counts its own consultation only (one paid each, not two).
    const since = tg.mark()
    await tg.push(BOT_B, tg.groupTopicMessage(STAFF_B, undefined, tg.user({ id: ADMIN_B }), '/report'))
    const report = await tg.waitFor('sendMessage', { chat_id: STAFF_B }, { since, botId: BOT_B })
    // Fluent wraps placeables in isolation marks; strip them to read the line.
    const text = String(report.payload.text).replace(/[\u2068\u2069]/g, '')
    expect(text).toContain('оплачено 100 ⭐ (1 платёж)')
  })

  it('an admin of desk A can do nothing on desk B, by command or button; B buttons with A ids change nothing of A', async () => {
    const routeB = await topicReady(w, b.consultationId)
    const adminA = tg.user({ id: ADMIN_ID })
    const before = await sql<{ id: string; access_until: Date; state: string }>`
      select id, access_until, state from consultation where id in (${a.consultationId}, ${b.consultationId})
        order by id`.execute(w.deps.db)
    const since = tg.mark()
    // Desk A's admin in desk B's topic: commands and a plain message.
    for (const text of ['/extend 5', '/ban', '/close', 'Admin A writing in desk B'])
      await tg.push(BOT_B, tg.groupTopicMessage(STAFF_B, routeB.message_thread_id, adminA, text))
    await tg.push(BOT_B, tg.groupTopicMessage(STAFF_B, undefined, adminA, '/report'))
    // Desk A's admin pressing desk B's admin buttons (refund), and desk B's admin pressing buttons with desk A's ids.
    const payA = await w.deps.db
      .selectFrom('payment')
      .select('id')
      .where('order_id', '=', a.orderId)
      .executeTakeFirstOrThrow()
    const payB = await w.deps.db
      .selectFrom('payment')
      .select('id')
      .where('order_id', '=', b.orderId)
      .executeTakeFirstOrThrow()
    const adminB = tg.user({ id: ADMIN_B })
    await tg.push(BOT_B, tg.callback(adminA, `rf:yes:${payB.id}`, undefined, { chatId: STAFF_B }))
    await tg.push(BOT_B, tg.callback(adminB, `rf:yes:${payA.id}`, undefined, { chatId: STAFF_B }))
    await tg.push(
      BOT_B,
      tg.callback(adminB, `desk:close:${a.consultationId}:yes`, undefined, { chatId: STAFF_B }),
    )
    await tg.push(BOT_B, tg.callback(adminB, `dr:new:${a.consultationId}`, undefined, { chatId: STAFF_B }))
    // The client pressing at bot B a transcript / refund button of desk A's consultation and order.
    await tg.push(BOT_B, tg.callback(client, `tr:get:${a.consultationId}`))
    await tg.push(BOT_B, tg.callback(client, `ord:refund:${a.orderId}`))
    // Every press was handled (answered), and every update handled, so what follows is what those handlers did.
    await tg.waitForCount('answerCallbackQuery', 6, undefined, { since })
    await tg.push(BOT_B, tg.privateText(client, '/status'))
    await tg.waitForCount('sendMessage', 2, { chat_id: client.id }, { since, botId: BOT_B })
    await inboxDrained(w.deps.db)

    const after = await sql<{ id: string; access_until: Date; state: string }>`
      select id, access_until, state from consultation where id in (${a.consultationId}, ${b.consultationId})
        order by id`.execute(w.deps.db)
    expect(after.rows).toEqual(before.rows)
    const banned = await sql<{ n: number }>`
      select count(*)::int as n from client where user_id = ${client.id} and banned_at is not null`.execute(
      w.deps.db,
    )
    expect(banned.rows[0]!.n).toBe(0)
    const refunds = await sql<{ n: number }>`
      select count(*)::int as n from payment where user_id = ${client.id}
        and (refunded_at is not null or refund_started_at is not null)`.execute(w.deps.db)
    expect(refunds.rows[0]!.n).toBe(0)
    expect(tg.callsTo('refundStarPayment', undefined, { since })).toHaveLength(0)
    const drafts = await sql<{ n: number }>`select count(*)::int as n from draft`.execute(w.deps.db)
    expect(drafts.rows[0]!.n).toBe(0)
    // Nothing reached the client from either bot, no transcript, no report for A's admin.
    // Only the /status answer (desk B's own order), apart from test 1's late "preparing your file" replies.
    const toClient = tg
      .callsTo(['sendMessage', 'copyMessage', 'sendDocument'], { chat_id: client.id }, { since })
      .filter((c) => !/^Preparing a file/.test(String(c.payload.text)))
    // /status answers in two messages (orders, then payments), both from bot B and of desk B alone.
    expect(toClient.map((c) => [c.botId, c.method])).toEqual([
      [BOT_B, 'sendMessage'],
      [BOT_B, 'sendMessage'],
    ])
    expect(String(toClient[0]!.payload.text)).toContain(`Order ${b.orderId} `)
    for (const c of toClient) expect(String(c.payload.text)).not.toContain(`Order ${a.orderId} `)
    const reports = tg.callsTo('sendMessage', (p) => /📊/.test(String(p.text)), { since })
    expect(reports).toHaveLength(0)
    await tg.waitForSent(STAFF_B, /только администраторам/, { since })
    const audits = await sql<{ n: number }>`
      select count(*)::int as n from audit_log where at >= now() - interval '1 minute'
        and actor_id = ${ADMIN_ID}`.execute(w.deps.db)
    expect(audits.rows[0]!.n).toBe(0)
  })
})
