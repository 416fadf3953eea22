import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkInvariants } from '../../src/ledger/ledger.invariants'
import { runWindowClose } from '../../src/lifecycle/window.service'
import { runLapse } from '../../src/subscriptions/lifecycle'
import { formatDate } from '../../src/time/format'
import { media } from '../support/bot-api'
import {
  appeals,
  clientSends,
  type DeskWorld,
  eventually,
  newClient,
  payThroughTelegram,
  STAFF_CHAT_ID,
  staffSends,
  startDeskWorld,
  TEST_BOT_ID,
  topicReady,
} from '../support/fixtures'
import {
  appealsAccount,
  handled,
  NOFILES,
  periods,
  renewThroughTelegram,
  STRICT,
  shiftSubscription,
  subscribe,
  withPlans,
} from './subscriptions-support'

/**
 * Subscriptions after the purchase: cancel/resume, lapse, features, refunds. A change of plan (upgrade or downgrade, a
 * new subscription) is in subscriptions-change.test.ts.
 */

const DAY = 86_400_000

/** The lifecycle's window-close job for the consultation's current access_until, run now (after a lapse). */
async function closeWindowNow(w: DeskWorld, consultationId: number) {
  const c = await w.deps.db
    .selectFrom('consultation')
    .select('access_until')
    .where('id', '=', consultationId)
    .executeTakeFirstOrThrow()
  return runWindowClose(w.deps, { consultationId, accessUntil: c.access_until!.toISOString() })
}
const _updateIds = 8_000_000

describe('subscriptions: lifecycle', () => {
  let w: DeskWorld
  beforeAll(async () => {
    w = await startDeskWorld({ configure: withPlans() })
  })
  afterAll(() => w?.stop())

  async function press(client: Parameters<typeof subscribe>[1], data: string) {
    const pushed = await w.tg.push(TEST_BOT_ID, w.tg.callback(client, data))
    await handled(w, pushed.update.update_id)
  }

  it('/plan shows the period in the client zone and the numbers; Cancel renewal / Resume go to Telegram through the outbox', async () => {
    const client = await newClient(w, { language_code: 'en' })
    const { sub, charge } = await subscribe(w, client)
    const [p1] = await periods(w, sub.id)
    let since = w.tg.mark()
    await w.tg.push(TEST_BOT_ID, w.tg.command(client, 'plan'))
    const view = await w.tg.waitForSent(client.id, /Your plan: Plan basic/, { since })
    const end = formatDate(p1!.period_end, 'Europe/Moscow', 'en')
    expect(view.text).toContain(`Period 1: ${formatDate(p1!.period_start, 'Europe/Moscow', 'en')} – ${end}`)
    expect(view.text).toContain('Questions: 0 used, 0 awaiting an answer, 3 of 3 left.')
    expect(view.text).toContain(`Next renewal: ${end}, 500 ⭐.`)

    since = w.tg.mark()
    await press(client, 'sub:cancel')
    const call = await w.tg.waitFor('editUserStarSubscription', { user_id: client.id }, { since, ok: true })
    expect(call.payload).toMatchObject({ telegram_payment_charge_id: charge, is_canceled: true })
    await w.tg.waitForSent(client.id, new RegExp(`Renewal is cancelled. Your plan stays active until ${end}`))
    expect(w.tg.starSubscription(TEST_BOT_ID, charge)).toEqual({ userId: client.id, canceled: true })
    // Cancel again: nothing changes, nothing more is sent to Telegram.
    await press(client, 'sub:cancel')
    since = w.tg.mark()
    await w.tg.push(TEST_BOT_ID, w.tg.command(client, 'plan'))
    const v2 = await w.tg.waitForSent(client.id, /Your plan: Plan basic/, { since })
    expect(v2.text).toContain(`Renewal is cancelled; access until ${end}.`)

    since = w.tg.mark()
    await press(client, 'sub:resume')
    const again = await w.tg.waitFor('editUserStarSubscription', { user_id: client.id }, { since, ok: true })
    expect(again.payload).toMatchObject({ is_canceled: false })
    await eventually(async () => w.tg.starSubscription(TEST_BOT_ID, charge)?.canceled === false, 'resumed')
    expect(w.tg.callsTo('editUserStarSubscription', { user_id: client.id })).toHaveLength(2)
  })

  it('no renewal by the period end + grace: the plan lapses (a pg-boss job), the client is told, new questions refused, the open one answered', async () => {
    const client = await newClient(w, { language_code: 'ru' })
    const { sub } = await subscribe(w, client)
    const route = await topicReady(w, sub.consultation_id)
    const [p1] = await periods(w, sub.id)
    const job = await sql<{ start_after: Date }>`select start_after from pgboss.job
      where name = 'subscriptions.lapse' and (data->>'subscriptionId')::bigint = ${sub.id}`.execute(w.deps.db)
    expect(job.rows.map((r) => r.start_after.getTime())).toEqual([p1!.period_end.getTime() + DAY])

    await clientSends(w, client, 'Открытый вопрос')
    await w.tg.waitForSent(client.id, /Вопрос №1 принят/)
    // Period end + 24 h grace is an hour ago.
    await shiftSubscription(w, sub.id, p1!.period_end.getTime() - Date.now() + DAY + 3600_000)
    const [shifted] = await periods(w, sub.id)
    const periodEnd = shifted!.period_end.toISOString()
    expect(await runLapse(w.deps, { subscriptionId: sub.id, periodEnd: p1!.period_end.toISOString() })).toBe(
      'moved',
    )
    expect(await runLapse(w.deps, { subscriptionId: sub.id, periodEnd })).toBe('lapsed')
    expect(await runLapse(w.deps, { subscriptionId: sub.id, periodEnd })).toBe('not-active')
    expect(await closeWindowNow(w, sub.consultation_id)).toBe('closed')
    const endText = formatDate(shifted!.period_end, 'Europe/Moscow', 'ru')
    await w.tg.waitForSent(client.id, new RegExp(`закончился ${endText}: продление не поступило`))

    const since = w.tg.mark()
    await clientSends(w, client, 'Новый вопрос после окончания')
    await w.tg.waitForSent(client.id, new RegExp(`Ваш план закончился ${endText}; продлите его`), { since })

    await staffSends(w, route.message_thread_id, w.expert, 'Ответ на открытый вопрос')
    await w.tg.waitFor('copyMessage', { chat_id: client.id, from_chat_id: STAFF_CHAT_ID }, { ok: true })
    await eventually(async () => (await appeals(w, sub.consultation_id))[0]?.state === 'answered', 'answered')
    const [after] = await periods(w, sub.id)
    expect(after).toMatchObject({ reserved: 0, used: 1 })
  })

  it('a renewal after the lapse closed the window opens the consultation and its order again; questions are accepted', async () => {
    const client = await newClient(w, { language_code: 'ru' })
    const { sub, payload, amount } = await subscribe(w, client)
    const [p1] = await periods(w, sub.id)
    await shiftSubscription(w, sub.id, p1!.period_end.getTime() - Date.now() + DAY + 3600_000)
    const [shifted] = await periods(w, sub.id)
    expect(
      await runLapse(w.deps, { subscriptionId: sub.id, periodEnd: shifted!.period_end.toISOString() }),
    ).toBe('lapsed')
    expect(await closeWindowNow(w, sub.consultation_id)).toBe('closed')
    const states = async () =>
      (
        await sql<{ order: string; consultation: string; subscription: string }>`
          select o.state as "order", c.state as consultation, s.state as subscription
            from subscription s join orders o on o.id = s.order_id join consultation c on c.id = s.consultation_id
            where s.id = ${sub.id}`.execute(w.deps.db)
      ).rows[0]!
    expect(await states()).toEqual({ order: 'closed', consultation: 'closed', subscription: 'lapsed' })

    await renewThroughTelegram(w, client, {
      payload,
      amount,
      charge: `late-renew-${sub.id}`,
      expires: new Date(Date.now() + 30 * DAY),
    })
    await eventually(async () => (await states()).subscription === 'active', 'the renewal')
    expect(await states()).toEqual({ order: 'active', consultation: 'active', subscription: 'active' })
    const since = w.tg.mark()
    await clientSends(w, client, 'Вопрос после позднего продления')
    await w.tg.waitForSent(client.id, /Вопрос №\d+ принят/, { since })
  })

  it('a plan without attachments refuses a photo with the reason; text is accepted', async () => {
    const client = await newClient(w, { language_code: 'en' })
    const { sub } = await subscribe(w, client, NOFILES)
    let since = w.tg.mark()
    await clientSends(w, client, { photo: media.photo(), caption: 'see' })
    await w.tg.waitForSent(client.id, /Attachments are not included in your plan/, { since })
    since = w.tg.mark()
    await clientSends(w, client, 'as text')
    await w.tg.waitForSent(client.id, /Question #1 accepted/, { since })
    expect((await periods(w, sub.id))[0]).toMatchObject({ reserved: 1, granted: 2 })
  })

  it('a subscriber also buys a one-off consultation: both live side by side on their own accounts', async () => {
    const client = await newClient(w, { language_code: 'en' })
    const { sub } = await subscribe(w, client)
    await payThroughTelegram(w, client, 'quick')
    const consultationId = await eventually(async () => {
      const c = await w.deps.db
        .selectFrom('consultation as c')
        .innerJoin('orders as o', 'o.id', 'c.order_id')
        .select(['c.id', 'c.state'])
        .where('c.user_id', '=', client.id)
        .where('o.kind', '=', 'consultation')
        .executeTakeFirst()
      return c?.state === 'active' ? c.id : undefined
    }, 'the one-off consultation')
    expect(consultationId).not.toBe(sub.consultation_id)
    const one = await appealsAccount(w, consultationId)
    const plan = await appealsAccount(w, sub.consultation_id)
    expect(one).toMatchObject({ granted: 3 })
    expect(plan).toMatchObject({ granted: 3 })
    expect(one.accountId).not.toBe(plan.accountId)
    const s = await w.deps.db
      .selectFrom('subscription')
      .selectAll()
      .where('id', '=', sub.id)
      .executeTakeFirstOrThrow()
    expect(s.state).toBe('active')
  })

  async function refundThroughTelegram(
    client: Parameters<typeof subscribe>[1],
    s: Awaited<ReturnType<typeof subscribe>>,
  ) {
    const pushed = await w.tg.push(
      TEST_BOT_ID,
      w.tg.refundedPayment(client, {
        invoice_payload: s.payload,
        total_amount: s.amount,
        telegram_payment_charge_id: s.charge,
      }),
    )
    await handled(w, pushed.update.update_id)
  }

  it('refund under keep_used: used stays, the unused is void, the accepted question is still answered, new ones refused', async () => {
    const client = await newClient(w, { language_code: 'en' })
    const s = await subscribe(w, client)
    const route = await topicReady(w, s.sub.consultation_id)
    await clientSends(w, client, 'Asked before the refund')
    await w.tg.waitForSent(client.id, /Question #1 accepted/)
    const since = w.tg.mark()
    await refundThroughTelegram(client, s)
    await w.tg.waitForSent(client.id, /refunded to you. The plan has ended: what was used stays used/, {
      since,
    })
    const [p1] = await periods(w, s.sub.id)
    expect(p1).toMatchObject({ granted: 1, reserved: 1, used: 0 }) // 2 unused voided, the hold kept
    const sub = await w.deps.db
      .selectFrom('subscription')
      .selectAll()
      .where('id', '=', s.sub.id)
      .executeTakeFirstOrThrow()
    expect(sub).toMatchObject({ state: 'refunded', renewal_cancelled: true })
    const edit = await w.tg.waitFor('editUserStarSubscription', { user_id: client.id }, { since, ok: true })
    expect(edit.payload).toMatchObject({ telegram_payment_charge_id: s.charge, is_canceled: true })
    const since2 = w.tg.mark()
    await clientSends(w, client, 'After the refund')
    await w.tg.waitForSent(client.id, /Your plan was refunded, so new questions are not accepted/, {
      since: since2,
    })
    await staffSends(w, route.message_thread_id, w.expert, 'Still answered')
    await w.tg.waitFor('copyMessage', { chat_id: client.id, from_chat_id: STAFF_CHAT_ID }, { ok: true })
    await eventually(async () => (await periods(w, s.sub.id))[0]?.used === 1, 'the hold committed')
    // Redelivered: nothing more.
    await refundThroughTelegram(client, s)
    expect((await periods(w, s.sub.id))[0]).toMatchObject({ granted: 1, used: 1, reserved: 0 })
    // A renewal charge arriving after the refund grants nothing; the staff are told to refund it.
    await renewThroughTelegram(w, client, {
      payload: s.payload,
      amount: s.amount,
      charge: `after-refund-${s.sub.id}`,
    })
    expect(await periods(w, s.sub.id)).toHaveLength(1)
    await w.tg.waitForSent(STAFF_CHAT_ID, new RegExp(`after-refund-${s.sub.id}`))
    expect((await checkInvariants(w.deps.db)).ok).toBe(true)
  })

  it('refund under revoke_now: the plan ends now, open holds released, accounts inactive', async () => {
    const client = await newClient(w, { language_code: 'ru' })
    const s = await subscribe(w, client, STRICT)
    await topicReady(w, s.sub.consultation_id)
    await clientSends(w, client, 'Вопрос до возврата')
    await w.tg.waitForSent(client.id, /Вопрос №1 принят/)
    const since = w.tg.mark()
    await refundThroughTelegram(client, s)
    await w.tg.waitForSent(client.id, /возвращены вам. План завершён сейчас/, { since })
    const [p1] = await periods(w, s.sub.id)
    expect(p1).toMatchObject({ granted: 3, reserved: 0, used: 0 })
    const acc = await w.deps.db
      .selectFrom('ledger_account')
      .select('active')
      .where('id', '=', p1!.account_id)
      .executeTakeFirstOrThrow()
    expect(acc.active).toBe(false)
    const since2 = w.tg.mark()
    await clientSends(w, client, 'После возврата')
    await w.tg.waitForSent(client.id, /Оплата плана возвращена/, { since: since2 })
    expect((await checkInvariants(w.deps.db)).ok).toBe(true)
  })

  it("/plan shows the period's dates in the client's own zone", async () => {
    const client = await newClient(w, { language_code: 'en' })
    const { sub } = await subscribe(w, client)
    await w.deps.db
      .updateTable('client')
      .set({ time_zone: 'Pacific/Kiritimati' })
      .where('bot_id', '=', TEST_BOT_ID)
      .where('user_id', '=', client.id)
      .execute()
    // The period starts at 12:00 UTC: 15:00 in Moscow (the desk), 02:00 of the next day on Kiritimati (UTC+14).
    const [p0] = await periods(w, sub.id)
    const noon = new Date(
      Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate(), 12),
    )
    if (noon.getTime() > Date.now()) noon.setUTCDate(noon.getUTCDate() - 1)
    await shiftSubscription(w, sub.id, p0!.period_start.getTime() - noon.getTime())
    const [p1] = await periods(w, sub.id)
    expect(p1!.period_start.getTime()).toBe(noon.getTime())
    const since = w.tg.mark()
    await w.tg.push(TEST_BOT_ID, w.tg.command(client, 'plan'))
    const view = await w.tg.waitForSent(client.id, /Your plan: Plan basic/, { since })
    const start = formatDate(p1!.period_start, 'Pacific/Kiritimati', 'en')
    const end = formatDate(p1!.period_end, 'Pacific/Kiritimati', 'en')
    expect(start).not.toBe(formatDate(p1!.period_start, 'Europe/Moscow', 'en'))
    expect(view.text).toContain(`Period 1: ${start} – ${end}`)
  })
})
