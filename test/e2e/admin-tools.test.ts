import type { User } from 'grammy/types'
import { sql } from 'kysely'
import { DateTime } from 'luxon'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DeskConfig } from '../../src/config/schema'
import { grantQuestions } from '../../src/consultations/admin-tools'
import { closeEarly, setClientBan } from '../../src/consultations/desk.service'
import { agreeStart } from '../../src/consultations/start.service'
import { openDispute } from '../../src/disputes/disputes.service'
import { handBackParked } from '../../src/jobs/handback'
import { findTariff } from '../../src/orders/tariffs'
import { runReconciliation } from '../../src/payments/reconciliation'
import { changeDesk } from '../../src/settings/settings'
import { runDeadLetterWatch } from '../../src/telegram/private-alerts'
import {
  ADMIN_ID,
  consultationWithTopic,
  type DeskWorld,
  EXPERT_ID,
  eventually,
  inboxDrained,
  newClient,
  notificationsSent,
  paidConsultation,
  pendingNotifications,
  STAFF_CHAT_ID,
  startDeskWorld,
  TEST_BOT_ID,
  waitingConsultation,
} from '../support/fixtures'

/**
 * Issue 25, the admin's tools from Telegram (src/bot/features/admin-tools.ts): each action through the bot, sent or
 * pressed twice and done once, audited, and refused to an expert with the reason; and the private alerts to the
 * admins, once per event.
 */

const REFUSED_RU = /Это могут делать только администраторы: здесь вы эксперт/
const BEA_ID = 900005
const NO_LONGER = /You are no longer an admin of this desk, so nothing was changed/
/** The same in a topic, in the desk's language. */
const NO_LONGER_RU = /Вы больше не администратор, поэтому ничего не изменилось/

describe('admin tools from Telegram', () => {
  let w: DeskWorld
  beforeAll(async () => {
    w = await startDeskWorld({
      // One start a day on the quick tariff: the second start an admin gives on a day is over capacity.
      configure: (c) => {
        findTariff(c.desks[0]!, 'quick')!.dailyCapacity = 1
        // A second admin, demoted and restored by the tests of the re-check in the write.
        c.desks[0]!.staff.admins.push(BEA_ID)
      },
    })
  })
  afterAll(() => w?.stop())

  /** An update parked in the inbox (its own chat), as one that failed its tries; /stuck offers it back. */
  const parkUpdate = (update: number) =>
    w.deps.db
      .insertInto('inbox_update')
      .values({
        bot_id: TEST_BOT_ID,
        update_id: update,
        chat_key: `parked${update}`,
        priority: 0,
        kind: 'edited_message',
        payload: JSON.stringify({ update_id: update }),
        state: 'parked',
        done_at: new Date(),
      })
      .execute()
  const updateState = async (update: number) =>
    (
      await w.deps.db
        .selectFrom('inbox_update')
        .select('state')
        .where('bot_id', '=', TEST_BOT_ID)
        .where('update_id', '=', update)
        .executeTakeFirstOrThrow()
    ).state

  /** A notify job that failed all its retries (a dead letter; handed back it sends its message): its id. */
  const deadLetter = async (dedupeKey: string) =>
    (
      await sql<{
        id: string
      }>`insert into pgboss.job (name, data, state, dead_letter, retry_limit, retry_count,
          completed_on) values ('tg.notify', ${JSON.stringify({
            botId: TEST_BOT_ID,
            chatId: ADMIN_ID,
            lang: 'en',
            key: 'adm-stuck-none',
            dedupeKey,
          })}::jsonb, 'failed', 'dead-letter', 5, 5, now()) returning id`.execute(w.deps.db)
    ).rows[0]!.id

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
  const pendingJobs = () => pendingNotifications(w.deps.db)

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
    const waiting = async () => {
      const client = await newClient(w)
      return { client, ...(await waitingConsultation(w, client, { needsStartDate: true })) }
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
    for (let round = 0; round < 20; round++) {
      const { orderId } = await waitingConsultation(w, await newClient(w), { needsStartDate: true })
      const at = new Date(Date.now() + (3 + round) * 86_400_000)
      const update = 991_000_000 + round
      await parkUpdate(update)
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
      expect(backs.filter((b) => b === 'handed-back').length, `round ${round}`).toBe(1)
      expect(await audits('intake.handed_back', update)).toBe(1)
    }
  })

  /** Bea moved from the admins to the experts (or back), as the owner's /staff would do it. */
  const demoteBea = (doc: DeskConfig) => {
    doc.staff.admins = doc.staff.admins.filter((id) => id !== BEA_ID)
    doc.staff.experts = [...doc.staff.experts.filter((id) => id !== BEA_ID), BEA_ID]
  }
  const promoteBea = (doc: DeskConfig) => {
    doc.staff.experts = doc.staff.experts.filter((id) => id !== BEA_ID)
    doc.staff.admins = [...doc.staff.admins.filter((id) => id !== BEA_ID), BEA_ID]
  }
  /** What the audit holds as done by Bea. */
  const auditedByBea = () =>
    w.deps.db.selectFrom('audit_log').select('action').where('actor_id', '=', BEA_ID).execute()

  /**
   * The desk's row changed without a new version or a notification: this process's desk object (what the press-time
   * check reads) still shows the old staff, as it does for the moment between another process's commit and its
   * notification. Only the write's own check can see it.
   */
  async function editRowQuietly(edit: (doc: DeskConfig) => void) {
    const row = await w.deps.db
      .selectFrom('desk_settings')
      .select('doc')
      .where('bot_id', '=', TEST_BOT_ID)
      .executeTakeFirstOrThrow()
    const doc = row.doc as DeskConfig
    edit(doc)
    await w.deps.db
      .updateTable('desk_settings')
      .set({ doc: JSON.stringify(doc) })
      .where('bot_id', '=', TEST_BOT_ID)
      .execute()
  }

  it('an admin demoted after the command or button was shown changes nothing and is told so, for every tool', async () => {
    const bea = w.tg.user({ id: BEA_ID, first_name: 'Bea', language_code: 'en' })
    const desk = w.t.desk
    // What Bea was shown while still an admin: a start to confirm, the banned list, the stuck work.
    const open = await paidConsultation(w)
    const closed = await paidConsultation(w)
    await closeEarly(w.deps, desk, { consultationId: closed.consultationId, actorId: ADMIN_ID })
    const client = await newClient(w)
    const banned = await newClient(w)
    await setClientBan(w.deps, desk, { userId: banned.id, actorId: ADMIN_ID, banned: true })
    const { orderId } = await waitingConsultation(w, client, { needsStartDate: true })
    const day = DateTime.now().setZone(desk.schedule.timezone).plus({ days: 4 }).toFormat('yyyy-MM-dd')
    const s0 = w.tg.mark()
    await w.tg.push(TEST_BOT_ID, w.tg.command(bea, '/startdate', `${orderId} ${day} 10:00`))
    const confirm = await w.tg.waitForSent(BEA_ID, new RegExp(`Start order ${orderId} `), { since: s0 })
    const startData = (confirm.message.reply_markup!.inline_keyboard[0]![0]! as { callback_data: string })
      .callback_data
    const update = 992_000_001
    await parkUpdate(update)
    const job = await deadLetter('test:dead:demoted')

    await editRowQuietly(demoteBea)
    try {
      // Typed commands: each passes the press-time check (the desk object still says admin) and is refused in the write.
      for (const [cmd, args] of [
        ['/grant', `${open.consultationId} 2`],
        ['/reopen', `${closed.consultationId}`],
        ['/write', `${client.id} Hello from a former admin`],
        ['/tz', `${client.id} Asia/Tbilisi`],
        ['/ban', `${client.id}`],
      ] as const) {
        const since = await twice(bea, cmd, args)
        const m = await w.tg.waitForSent(BEA_ID, NO_LONGER, { since })
        expect(m.text, cmd).toMatch(NO_LONGER)
      }
      // Old buttons.
      for (const data of [startData, `adm:ub:${banned.id}`, `adm:pk:${update}`, `adm:dl:${job}`]) {
        const since = w.tg.mark()
        const a = await press(bea, data, confirm.message_id)
        await inboxDrained(w.deps.db)
        const edited = w.tg
          .callsTo('editMessageText', { chat_id: BEA_ID })
          .filter((c) => c.at >= since)
          .map((c) => String(c.payload.text))
        expect(
          [a.text ?? '', ...edited].some((t) => NO_LONGER.test(t)),
          data,
        ).toBe(true)
      }

      // Nothing changed, nothing audited, nothing told.
      expect(await appealsGranted(open.consultationId)).toBe(3)
      const c = await w.deps.db
        .selectFrom('consultation')
        .select('state')
        .where('id', '=', closed.consultationId)
        .executeTakeFirstOrThrow()
      expect(c.state).toBe('closed')
      const cl = await w.deps.db
        .selectFrom('client')
        .select(['user_id', 'time_zone', 'banned_at'])
        .where('user_id', 'in', [client.id, banned.id])
        .orderBy('user_id')
        .execute()
      expect(cl.find((x) => x.user_id === client.id)).toMatchObject({ time_zone: null, banned_at: null })
      expect(cl.find((x) => x.user_id === banned.id)!.banned_at).not.toBeNull()
      const order = await w.deps.db
        .selectFrom('orders')
        .select('needs_start_date')
        .where('id', '=', orderId)
        .executeTakeFirstOrThrow()
      expect(order.needs_start_date).toBe(true)
      expect(await updateState(update)).toBe('parked')
      const jobState = await sql<{
        state: string
      }>`select state from pgboss.job where id = ${job}::uuid`.execute(w.deps.db)
      expect(jobState.rows[0]!.state).toBe('failed')
      expect(await auditedByBea()).toEqual([])
      await eventually(async () => (await pendingJobs()) === 0, 'the outbox to settle')
      expect(w.tg.sentTo(client.id, { since: s0 })).toEqual([])
    } finally {
      await editRowQuietly(promoteBea)
    }
  })

  it('an admin demoted after the command arrived: /extend, /ban and /unban in a topic change nothing and say so', async () => {
    const bea = w.tg.user({ id: BEA_ID, first_name: 'Bea', language_code: 'en' })
    const desk = w.t.desk
    const free = await consultationWithTopic(w, { language_code: 'en' })
    const held = await consultationWithTopic(w, { language_code: 'en' })
    await setClientBan(w.deps, desk, { userId: held.client.id, actorId: ADMIN_ID, banned: true })
    const state = () =>
      w.deps.db
        .selectFrom('consultation')
        .innerJoin('client', (j) =>
          j
            .onRef('client.user_id', '=', 'consultation.user_id')
            .onRef('client.bot_id', '=', 'consultation.bot_id'),
        )
        .select(['consultation.id', 'consultation.access_until', 'client.banned_at', 'client.banned_by'])
        .where('consultation.id', 'in', [free.consultationId, held.consultationId])
        .orderBy('consultation.id')
        .execute()
    const before = await state()
    // What the set-up told the clients (the activation notices, sent by jobs of their own after the topic) is out
    // before the mark: what comes after it is what the refused commands said.
    await notificationsSent(w.deps.db)
    const s0 = w.tg.mark()

    await editRowQuietly(demoteBea)
    try {
      // Each passes the check on arrival (this process's desk still says admin) and is refused in the write.
      for (const [route, cmd] of [
        [free.route, '/extend 2'],
        [free.route, '/ban'],
        [held.route, '/unban'],
      ] as const) {
        const since = w.tg.mark()
        const sent = await w.tg.push(
          TEST_BOT_ID,
          w.tg.groupTopicMessage(STAFF_CHAT_ID, route.message_thread_id, bea, cmd),
        )
        const m = await w.tg.waitForSent(STAFF_CHAT_ID, NO_LONGER_RU, {
          since,
          threadId: route.message_thread_id,
        })
        expect(m.text, cmd).toMatch(NO_LONGER_RU)
        await w.tg.redeliver(TEST_BOT_ID, sent)
        await inboxDrained(w.deps.db)
      }
      await eventually(async () => (await pendingJobs()) === 0, 'the outbox to settle')

      // Nothing changed, nothing audited, the clients told nothing, the topics only the refusal.
      expect(await state()).toEqual(before)
      expect(await auditedByBea()).toEqual([])
      expect(w.tg.sentTo(free.client.id, { since: s0 })).toEqual([])
      expect(w.tg.sentTo(held.client.id, { since: s0 })).toEqual([])
      for (const route of [free.route, held.route]) {
        const said = w.tg
          .sentTo(STAFF_CHAT_ID, { since: s0, threadId: route.message_thread_id })
          .map((m) => m.text ?? '')
        expect(said.filter((t) => !NO_LONGER_RU.test(t))).toEqual([])
      }
    } finally {
      await editRowQuietly(promoteBea)
    }
  })

  it('20 rounds: a demotion committed at the same moment as a press and a grant: each write either came first or was refused', async () => {
    const bea = w.tg.user({ id: BEA_ID, first_name: 'Bea', language_code: 'en' })
    const { consultationId } = await paidConsultation(w)
    const writes = { pressed: 0, pressRefused: 0, granted: 0, grantRefused: 0 }
    for (let round = 0; round < 20; round++) {
      const update = 993_000_000 + round
      await parkUpdate(update)
      const u = w.tg.callback(bea, `adm:pk:${update}`, undefined, { chatId: BEA_ID })
      const granted = await appealsGranted(consultationId)
      const [demoted, , grant] = await Promise.all([
        changeDesk(w.deps.db, TEST_BOT_ID, { userId: ADMIN_ID, source: 'telegram' }, 'any', demoteBea),
        w.tg.push(TEST_BOT_ID, u),
        grantQuestions(w.deps, w.t.desk, {
          consultationId,
          count: 1,
          actorId: BEA_ID,
          actorLabel: 'Bea',
          updateId: 994_000_000 + round,
        }),
      ])
      const answer = (await w.tg.waitFor('answerCallbackQuery', { callback_query_id: u.callback_query!.id }))
        .payload
      // The demotion's audit row is written under the desk row's update lock, after every write that held the
      // row's share lock had committed: a write that went ahead has the smaller id.
      const demotion = await w.deps.db
        .selectFrom('audit_log')
        .select('id')
        .where('action', '=', 'settings.changed')
        .where(sql`details->>'to'`, '=', String(demoted.version))
        .executeTakeFirstOrThrow()
      const auditOf = (action: string, subject: number) =>
        w.deps.db
          .selectFrom('audit_log')
          .select('id')
          .where('action', '=', action)
          .where('subject_id', '=', String(subject))
          .where('actor_id', '=', BEA_ID)
          .execute()

      const back = await auditOf('intake.handed_back', update)
      if (/is handed back/.test(answer.text ?? '')) {
        writes.pressed++
        expect(back, `round ${round}`).toHaveLength(1)
        expect(Number(back[0]!.id), `round ${round}`).toBeLessThan(Number(demotion.id))
        expect(await updateState(update)).not.toBe('parked')
      } else {
        writes.pressRefused++
        expect(answer.text, `round ${round}`).toMatch(/no longer an admin|Only the desk's admins/)
        expect(back, `round ${round}`).toEqual([])
        expect(await updateState(update), `round ${round}`).toBe('parked')
      }

      const grants = await auditOf('consultation.questions_granted', consultationId)
      const last = grants.at(-1)
      if (grant.status === 'granted') {
        writes.granted++
        expect(Number(last!.id), `round ${round}`).toBeLessThan(Number(demotion.id))
        expect(await appealsGranted(consultationId)).toBe(granted + 1)
      } else {
        writes.grantRefused++
        expect(grant.status, `round ${round}`).toBe('forbidden')
        expect(last === undefined || Number(last.id) < Number(demotion.id), `round ${round}`).toBe(true)
        expect(await appealsGranted(consultationId)).toBe(granted)
      }
      await changeDesk(w.deps.db, TEST_BOT_ID, { userId: ADMIN_ID, source: 'telegram' }, 'any', promoteBea)
    }
    console.log('demotion vs press and grant, 20 rounds:', writes)
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
    const job = await deadLetter('test:dead:1')

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
    await eventually(async () => (await updateState(update)) === 'done', 'the handed-back update handled')

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
