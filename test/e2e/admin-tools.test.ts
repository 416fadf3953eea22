import type { User } from 'grammy/types'
import { sql } from 'kysely'
import { DateTime } from 'luxon'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { closeEarly } from '../../src/consultations/desk.service'
import { agreeStart } from '../../src/consultations/start.service'
import { openDispute } from '../../src/disputes/disputes.service'
import { handBackParked } from '../../src/jobs/handback'
import { findTariff, snapshotTariff } from '../../src/orders/tariffs'
import { runReconciliation } from '../../src/payments/reconciliation'
import { runDeadLetterWatch } from '../../src/telegram/private-alerts'
import {
  ADMIN_ID,
  type DeskWorld,
  EXPERT_ID,
  eventually,
  inboxDrained,
  newClient,
  paidConsultation,
  startDeskWorld,
  TEST_BOT_ID,
} from '../support/fixtures'

/**
 * Issue 25, the admin's tools from Telegram (src/bot/features/admin-tools.ts): each action through the bot, sent or
 * pressed twice and done once, audited, and refused to an expert with the reason; and the private alerts to the
 * admins, once per event.
 */

const REFUSED_RU = /Это могут делать только администраторы: здесь вы эксперт/

describe('admin tools from Telegram', () => {
  let w: DeskWorld
  beforeAll(async () => {
    w = await startDeskWorld({
      // One start a day on the quick tariff: the second start an admin gives on a day is over capacity.
      configure: (c) => {
        findTariff(c.desks[0]!, 'quick')!.dailyCapacity = 1
      },
    })
  })
  afterAll(() => w?.stop())

  /** The command sent, then the same update delivered again (Telegram's at-least-once), then handled. */
  async function twice(user: User, command: string, args: string) {
    const since = w.tg.mark()
    const r = await w.tg.push(TEST_BOT_ID, w.tg.command(user, command, args))
    await w.tg.redeliver(TEST_BOT_ID, r)
    await inboxDrained(w.deps.db)
    return since
  }

  /** A button pressed on a message (twice when asked): the answers it got. */
  async function press(user: User, data: string, message?: number, chatId = user.id) {
    const u = w.tg.callback(user, data, message, { chatId })
    await w.tg.push(TEST_BOT_ID, u)
    return (await w.tg.waitFor('answerCallbackQuery', { callback_query_id: u.callback_query!.id })).payload
  }

  const audits = async (action: string, subject: string | number) =>
    (
      await w.deps.db
        .selectFrom('audit_log')
        .select(sql<number>`count(*)::int`.as('n'))
        .where('action', '=', action)
        .where('subject_id', '=', String(subject))
        .executeTakeFirstOrThrow()
    ).n

  /** Waits for `re` in the chat, then gives the bot a moment's chance to send a copy, and counts. */
  async function sentOnce(chatId: number, re: RegExp, since: number) {
    await w.tg.waitForSent(chatId, re, { since })
    await eventually(async () => (await pendingJobs()) === 0, 'the outbox to settle')
    return w.tg.sentTo(chatId, { since }).filter((m) => re.test(m.text ?? '')).length
  }
  const pendingJobs = async () =>
    (
      await sql<{ n: number }>`select count(*)::int as n from pgboss.job
        where name like 'tg.notify%' and state in ('created', 'retry', 'active')`.execute(w.deps.db)
    ).rows[0]!.n

  const appealsGranted = async (consultationId: number) =>
    (
      await w.deps.db
        .selectFrom('ledger_account')
        .select(['granted', 'active'])
        .where('scope', '=', 'consultation')
        .where('subject', '=', String(consultationId))
        .where('unit', '=', 'appeals')
        .executeTakeFirstOrThrow()
    ).granted

  it('/grant: exact on the ledger once, audited, the client told once; an expert is refused', async () => {
    const c = await paidConsultation(w)
    expect(await appealsGranted(c.consultationId)).toBe(3)
    const since = await twice(w.admin, '/grant', `${c.consultationId} 2`)
    await w.tg.waitForSent(ADMIN_ID, /2 more questions granted; the client can now ask 5/, { since })
    expect(await appealsGranted(c.consultationId)).toBe(5)
    expect(await audits('consultation.questions_granted', c.consultationId)).toBe(1)
    expect(await sentOnce(c.client.id, /granted you 2 more questions/, since)).toBe(1)

    const s2 = await twice(w.expert, '/grant', `${c.consultationId} 2`)
    await w.tg.waitForSent(EXPERT_ID, REFUSED_RU, { since: s2 })
    expect(await appealsGranted(c.consultationId)).toBe(5)
    expect(await audits('consultation.questions_granted', c.consultationId)).toBe(1)
  })

  it('/reopen: a closed consultation is active again once, its window restored; an expert is refused', async () => {
    const c = await paidConsultation(w)
    const before = await w.deps.db
      .selectFrom('consultation')
      .select('access_until')
      .where('id', '=', c.consultationId)
      .executeTakeFirstOrThrow()
    expect(
      (await closeEarly(w.deps, w.t.desk, { consultationId: c.consultationId, actorId: ADMIN_ID })).status,
    ).toBe('closed')

    const s0 = await twice(w.expert, '/reopen', `${c.consultationId}`)
    await w.tg.waitForSent(EXPERT_ID, REFUSED_RU, { since: s0 })
    expect(await audits('consultation.reopened', c.consultationId)).toBe(0)

    const since = await twice(w.admin, '/reopen', `${c.consultationId} 2`)
    await w.tg.waitForSent(ADMIN_ID, new RegExp(`Consultation #${c.consultationId} is open again`), { since })
    const after = await w.deps.db
      .selectFrom('consultation')
      .innerJoin('orders', 'orders.id', 'consultation.order_id')
      .select(['consultation.state', 'consultation.access_until', 'orders.state as order_state'])
      .where('consultation.id', '=', c.consultationId)
      .executeTakeFirstOrThrow()
    expect(after).toMatchObject({ state: 'active', order_state: 'active' })
    // Closed early with ~24 h left: its own window's end is later than now + 2 h, so it comes back whole.
    expect(after.access_until!.getTime()).toBe(before.access_until!.getTime())
    expect(await audits('consultation.reopened', c.consultationId)).toBe(1)
    expect(await sentOnce(c.client.id, /is open again until/, since)).toBe(1)

    // Reopening an active one is refused with its state.
    const s3 = await twice(w.admin, '/reopen', `${c.consultationId}`)
    await w.tg.waitForSent(ADMIN_ID, /cannot be reopened: it is active/, { since: s3 })
  })

  it('/ban and /unban by id for a client without a topic, /bans with Unban buttons; an expert is refused', async () => {
    const client = await newClient(w)
    const banned = async () =>
      (
        await w.deps.db
          .selectFrom('client')
          .select('banned_at')
          .where('user_id', '=', client.id)
          .executeTakeFirstOrThrow()
      ).banned_at

    const s0 = await twice(w.expert, '/ban', `${client.id}`)
    await w.tg.waitForSent(EXPERT_ID, REFUSED_RU, { since: s0 })
    expect(await banned()).toBeNull()

    const since = await twice(w.admin, '/ban', `${client.id}`)
    await w.tg.waitForSent(ADMIN_ID, new RegExp(`User ${client.id} is banned`), { since })
    // A second /ban (a new message, not a redelivery) changes nothing and says so.
    await w.tg.push(TEST_BOT_ID, w.tg.command(w.admin, '/ban', `${client.id}`))
    await w.tg.waitForSent(ADMIN_ID, new RegExp(`User ${client.id} was already banned`), { since })
    expect(await banned()).not.toBeNull()
    expect(await audits('client.banned', client.id)).toBe(1)

    const s1 = w.tg.mark()
    await w.tg.push(TEST_BOT_ID, w.tg.command(w.admin, '/bans'))
    const list = await w.tg.waitForSent(ADMIN_ID, new RegExp(`• ${client.id} `), { since: s1 })

    expect(await press(w.expert, `adm:ub:${client.id}`, list.message_id)).toMatchObject({ show_alert: true })
    expect(await banned()).not.toBeNull()
    const a = await press(w.admin, `adm:ub:${client.id}`, list.message_id)
    const b = await press(w.admin, `adm:ub:${client.id}`, list.message_id)
    expect(a.text).toMatch(/is no longer banned/)
    expect(b.text).toMatch(/is not banned: nothing changed/)
    expect(await banned()).toBeNull()
    expect(await audits('client.unbanned', client.id)).toBe(1)
  })

  it("/tz sets a client's zone once and tells them; a bad zone is refused; an expert is refused", async () => {
    const client = await newClient(w)
    const zone = async () =>
      (
        await w.deps.db
          .selectFrom('client')
          .select('time_zone')
          .where('user_id', '=', client.id)
          .executeTakeFirstOrThrow()
      ).time_zone

    const s0 = await twice(w.expert, '/tz', `${client.id} Asia/Tbilisi`)
    await w.tg.waitForSent(EXPERT_ID, REFUSED_RU, { since: s0 })
    const s1 = await twice(w.admin, '/tz', `${client.id} Mars/Olympus`)
    await w.tg.waitForSent(ADMIN_ID, /“Mars\/Olympus” is not a time zone/, { since: s1 })
    expect(await zone()).toBeNull()

    const since = await twice(w.admin, '/tz', `${client.id} Asia/Tbilisi`)
    await w.tg.waitForSent(ADMIN_ID, /now sees times in Asia\/Tbilisi/, { since })
    expect(await zone()).toBe('Asia/Tbilisi')
    expect(await audits('client.zone_set', client.id)).toBe(1)
    expect(await sentOnce(client.id, /set your time zone to Asia\/Tbilisi/, since)).toBe(1)
  })

  it('/write sends one message from the desk through the outbox, audited; an expert is refused', async () => {
    const client = await newClient(w)
    const s0 = await twice(w.expert, '/write', `${client.id} Hi from Ed`)
    await w.tg.waitForSent(EXPERT_ID, REFUSED_RU, { since: s0 })
    const since = await twice(w.admin, '/write', `${client.id} Your documents arrived 📄`)
    await w.tg.waitForSent(ADMIN_ID, /Your message to \d+ is on its way/, { since })
    expect(await sentOnce(client.id, /A message from the desk:\n\nYour documents arrived 📄$/, since)).toBe(1)
    expect(w.tg.sentTo(client.id, { since }).some((m) => /Hi from Ed/.test(m.text ?? ''))).toBe(false)
    expect(await audits('client.written', client.id)).toBe(1)
  })

  it('/startdate keeps "an administrator will offer you a start date": once per press, over a full day too', async () => {
    const desk = w.t.desk
    const tariff = findTariff(desk, 'quick')!
    const waiting = async () => {
      const client = await newClient(w)
      return w.deps.db.transaction().execute(async (trx) => {
        const o = await trx
          .insertInto('orders')
          .values({
            bot_id: desk.botId,
            user_id: client.id,
            ...snapshotTariff(desk, tariff, 'en'),
            state: 'paid_waiting',
            needs_start_date: true,
          })
          .returning('id')
          .executeTakeFirstOrThrow()
        await trx
          .insertInto('consultation')
          .values({ bot_id: desk.botId, order_id: o.id, user_id: client.id })
          .execute()
        return { client, orderId: o.id }
      })
    }
    const first = await waiting()
    const second = await waiting()
    // A day ahead at 10:00 desk time: both orders on the same day, which has one place.
    const day = DateTime.now().setZone(desk.schedule.timezone).plus({ days: 2 }).toFormat('yyyy-MM-dd')

    const s0 = w.tg.mark()
    await w.tg.push(TEST_BOT_ID, w.tg.command(w.admin, '/startdate'))
    await w.tg.waitForSent(ADMIN_ID, new RegExp(`order ${second.orderId}, “Quick review”`), { since: s0 })

    for (const o of [first, second]) {
      const since = w.tg.mark()
      await w.tg.push(TEST_BOT_ID, w.tg.command(w.admin, '/startdate', `${o.orderId} ${day} 10:00`))
      const confirm = await w.tg.waitForSent(ADMIN_ID, new RegExp(`Start order ${o.orderId} `), { since })
      const data = confirm.message.reply_markup!.inline_keyboard[0]![0]! as { callback_data: string }
      expect(await press(w.expert, data.callback_data, confirm.message_id)).toMatchObject({
        show_alert: true,
      })
      await press(w.admin, data.callback_data, confirm.message_id)
      await press(w.admin, data.callback_data, confirm.message_id)
      await inboxDrained(w.deps.db)
      const order = await w.deps.db
        .selectFrom('orders')
        .select(['needs_start_date', 'slot_start'])
        .where('id', '=', o.orderId)
        .executeTakeFirstOrThrow()
      expect(order.needs_start_date).toBe(false)
      expect(await audits('order.start_agreed', o.orderId)).toBe(1)
      expect(await sentOnce(o.client.id, /your window starts/, since)).toBe(1)
    }
    const extra = await w.deps.db
      .selectFrom('audit_log')
      .select('details')
      .where('action', '=', 'order.start_agreed')
      .where('subject_id', 'in', [String(first.orderId), String(second.orderId)])
      .orderBy('id')
      .execute()
    expect(extra.map((e) => (e.details as { extraPlace?: boolean }).extraPlace)).toEqual([false, true])
    // The day's account: one place configured, one added by the admin, both taken.
    const acc = await w.deps.db
      .selectFrom('ledger_account')
      .select(['granted', 'used'])
      .where('scope', '=', 'desk-capacity')
      .where('subject', '=', `${desk.botId}:day:quick:${day}`)
      .executeTakeFirstOrThrow()
    expect(acc).toEqual({ granted: 2, used: 2 })
  })

  it('20 rounds: two admins agreeing a start and handing back one parked update at once act once each', async () => {
    const desk = w.t.desk
    const tariff = findTariff(desk, 'quick')!
    for (let round = 0; round < 20; round++) {
      const client = await newClient(w)
      const orderId = await w.deps.db.transaction().execute(async (trx) => {
        const o = await trx
          .insertInto('orders')
          .values({
            bot_id: desk.botId,
            user_id: client.id,
            ...snapshotTariff(desk, tariff, 'en'),
            state: 'paid_waiting',
            needs_start_date: true,
          })
          .returning('id')
          .executeTakeFirstOrThrow()
        await trx
          .insertInto('consultation')
          .values({ bot_id: desk.botId, order_id: o.id, user_id: client.id })
          .execute()
        return o.id
      })
      const at = new Date(Date.now() + (3 + round) * 86_400_000)
      const update = 991_000_000 + round
      await w.deps.db
        .insertInto('inbox_update')
        .values({
          bot_id: TEST_BOT_ID,
          update_id: update,
          chat_key: `race${round}`,
          priority: 0,
          kind: 'edited_message',
          payload: JSON.stringify({ update_id: update }),
          state: 'parked',
          done_at: new Date(),
        })
        .execute()
      const starts = await Promise.all(
        [1, 2].map((i) =>
          agreeStart(w.deps, desk, { orderId, actorId: ADMIN_ID, asAdmin: true, at, attempt: `race${i}` }),
        ),
      )
      expect(starts.filter((r) => r.ok).length, `round ${round}`).toBe(1)
      expect(await audits('order.start_agreed', orderId)).toBe(1)
      const backs = await Promise.all(
        [1, 2].map(() =>
          handBackParked(w.deps.db, { botId: TEST_BOT_ID, updateId: update, actorId: ADMIN_ID }),
        ),
      )
      expect(backs.filter(Boolean).length, `round ${round}`).toBe(1)
      expect(await audits('intake.handed_back', update)).toBe(1)
    }
  })

  it('/stuck hands a parked update and a dead letter back once each; the admins are told of the dead letter once', async () => {
    const stranger = w.tg.user({ first_name: 'Pat', language_code: 'en' })
    const update = 990_000_001
    await w.deps.db
      .insertInto('inbox_update')
      .values({
        bot_id: TEST_BOT_ID,
        update_id: update,
        chat_key: String(stranger.id),
        priority: 0,
        kind: 'message',
        payload: JSON.stringify({
          update_id: update,
          ...w.tg.privateMessage(stranger, { text: 'parked hello' }),
        }),
        state: 'parked',
        last_error: 'boom',
        done_at: new Date(),
      })
      .execute()
    // A notify job that failed all its retries; handed back it sends its message.
    const job = (
      await sql<{
        id: string
      }>`insert into pgboss.job (name, data, state, dead_letter, retry_limit, retry_count,
          completed_on) values ('tg.notify', ${JSON.stringify({
            botId: TEST_BOT_ID,
            chatId: ADMIN_ID,
            lang: 'en',
            key: 'adm-stuck-none',
            dedupeKey: 'test:dead:1',
          })}::jsonb, 'failed', 'dead-letter', 5, 5, now()) returning id`.execute(w.deps.db)
    ).rows[0]!.id

    const s0 = w.tg.mark()
    expect(await runDeadLetterWatch(w.deps)).toBeGreaterThanOrEqual(1)
    await runDeadLetterWatch(w.deps)
    // In the desk's language (the test desk's is Russian).
    expect(
      await sentOnce(
        ADMIN_ID,
        new RegExp(`Задание tg.notify исчерпало все попытки \\(задание ${job}\\)`),
        s0,
      ),
    ).toBe(1)

    const s1 = w.tg.mark()
    await w.tg.push(TEST_BOT_ID, w.tg.command(w.expert, '/stuck'))
    await w.tg.waitForSent(EXPERT_ID, REFUSED_RU, { since: s1 })
    await w.tg.push(TEST_BOT_ID, w.tg.command(w.admin, '/stuck'))
    const list = await w.tg.waitForSent(ADMIN_ID, /parked:/, { since: s1 })
    expect(list.text).toContain(`update ${update} (message): boom`)
    expect(list.text).toContain(`tg.notify, job ${job}`)

    expect(await press(w.expert, `adm:pk:${update}`, list.message_id)).toMatchObject({ show_alert: true })
    expect((await press(w.admin, `adm:pk:${update}`, list.message_id)).text).toMatch(/is handed back/)
    expect((await press(w.admin, `adm:pk:${update}`, list.message_id)).text).toMatch(/not parked any more/)
    expect(await audits('intake.handed_back', update)).toBe(1)
    await eventually(
      async () =>
        (
          await w.deps.db
            .selectFrom('inbox_update')
            .select('state')
            .where('update_id', '=', update)
            .executeTakeFirstOrThrow()
        ).state === 'done',
      'the handed-back update handled',
    )

    const s2 = w.tg.mark()
    expect((await press(w.admin, `adm:dl:${job}`, list.message_id)).text).toMatch(
      /handed back for one more try/,
    )
    expect((await press(w.admin, `adm:dl:${job}`, list.message_id)).text).toMatch(/not waiting any more/)
    expect(await audits('job.handed_back', job)).toBe(1)
    expect(await sentOnce(ADMIN_ID, /Nothing is waiting for a person/, s2)).toBe(1)
  })

  it('a /paysupport ticket and a reconciliation mismatch are told to the admins privately, once each', async () => {
    const client = await newClient(w)
    const since = w.tg.mark()
    for (let i = 0; i < 2; i++)
      await openDispute(w.deps, w.t.desk, {
        userId: client.id,
        lang: 'en',
        paymentId: null,
        reason: 'Please refund 🙏',
        updateId: 990_100_000,
      })
    // The same client writing again adds to the open ticket: no new alert.
    await openDispute(w.deps, w.t.desk, { userId: client.id, lang: 'en', paymentId: null, reason: 'More' })
    const ticket = /Новое обращение \/paysupport №\d+ от клиента \d+: «Please refund 🙏»/
    expect(await sentOnce(ADMIN_ID, ticket, since)).toBe(1)
    expect(w.tg.sentTo(ADMIN_ID, { since }).filter((m) => /paysupport/.test(m.text ?? '')).length).toBe(1)

    // Paid an hour ago at Telegram, unknown here (the reconciliation leaves the last minutes alone).
    const hourAgo = Math.floor(Date.now() / 1000) - 3600
    w.tg.addStarTransaction(
      TEST_BOT_ID,
      w.tg.starTransaction(client, { amount: 77, id: 'charge-not-ours', date: hourAgo }),
    )
    await runReconciliation(w.deps, { botId: TEST_BOT_ID })
    await runReconciliation(w.deps, { botId: TEST_BOT_ID })
    expect(await sentOnce(ADMIN_ID, /Сверка с Telegram: .*charge-not-ours/, since)).toBe(1)
  })

  it('/stars shows the balance, the withdrawable estimate and recent transactions; an expert is refused', async () => {
    const client = await newClient(w)
    const old = Math.floor(Date.now() / 1000) - 30 * 86_400
    w.tg.setStarTransactions(TEST_BOT_ID, [
      w.tg.starTransaction(client, { amount: 500, date: old }),
      w.tg.starTransaction(client, { amount: 120 }),
    ])
    const since = w.tg.mark()
    await w.tg.push(TEST_BOT_ID, w.tg.command(w.expert, '/stars'))
    await w.tg.waitForSent(EXPERT_ID, REFUSED_RU, { since })
    await w.tg.push(TEST_BOT_ID, w.tg.command(w.admin, '/stars'))
    const m = await w.tg.waitForSent(ADMIN_ID, /The bot's balance: 620 ⭐/, { since })
    expect(m.text).toContain('Withdrawable (estimate): 500 ⭐; 120 ⭐ came in within the last 21 days')
    expect(m.text).toMatch(/\+120 ⭐, user \d+, invoice_payment\n.*\+500 ⭐/)
    await w.tg.waitFor('getMyStarBalance')
  })
})
