import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkInvariants } from '../../src/ledger/ledger.invariants'
import { LedgerTx } from '../../src/ledger/ledger.service'
import { APPEALS_UNIT, CONSULTATION_SCOPE } from '../../src/orders/allowances'
import { formatDate } from '../../src/time/format'
import {
  appeals,
  clientSends,
  type DeskWorld,
  eventually,
  newClient,
  STAFF_CHAT_ID,
  staffSends,
  startDeskWorld,
  TEST_BOT_ID,
  topicReady,
} from '../support/fixtures'
import {
  appealsAccount,
  periods,
  renewThroughTelegram,
  shiftSubscription,
  subscribe,
  withPlans,
} from './subscriptions-support'

/**
 * Seed 000's four tests on the subscription path: parallel reserves on the last unit, a crash between reserve and
 * enqueue, a duplicate renewal (subscriptions.test.ts: 100 concurrent deliveries), a request at the period's end
 * executed after the renewal. Plus the refusals' texts from the same numbers, in en and ru.
 */

const DAY = 86_400_000

describe('subscriptions: seed 000', () => {
  let w: DeskWorld
  beforeAll(async () => {
    w = await startDeskWorld({ configure: withPlans() })
  })
  afterAll(() => w?.stop())

  const key = (cid: number) => ({ scope: CONSULTATION_SCOPE, subject: cid, unit: APPEALS_UNIT })

  it('parallel reserves on the last unit of a period: exactly one admitted, 100 rounds', async () => {
    const client = await newClient(w, { language_code: 'en' })
    const { sub } = await subscribe(w, client)
    const [p1] = await periods(w, sub.id)
    const cid = sub.consultation_id
    let admittedTotal = 0
    for (let round = 0; round < 100; round++) {
      // Top the period up to exactly one unit left (an adjust, journaled).
      const acc = await appealsAccount(w, cid)
      const top = 1 - acc.available
      if (top !== 0)
        await w.deps.db.transaction().execute((trx) =>
          new LedgerTx(trx, 'allow', 0).adjust({
            accountId: p1!.account_id,
            dGranted: top,
            note: `round ${round}`,
          }),
        )
      const [a, b] = await Promise.all(
        ['a', 'b'].map((s) =>
          w.deps.ledger.reserve({
            requestId: `race:${sub.id}:${round}:${s}`,
            lines: [{ account: key(cid), amount: 1 }],
            ttlSeconds: 600,
          }),
        ),
      )
      const winners = [a!, b!].filter((r) => r.admitted)
      expect(winners, `round ${round}`).toHaveLength(1)
      const loser = [a!, b!].find((r) => !r.admitted)!
      expect(loser.admitted).toBe(false)
      if (!loser.admitted) {
        expect(loser.reason).toBe('held_by_active')
        expect(loser.account).toMatchObject({ accountId: p1!.account_id, available: 0 })
      }
      admittedTotal++
      await w.deps.ledger.commit(winners[0]!.requestId)
    }
    expect(admittedTotal).toBe(100)
    const acc = await appealsAccount(w, cid)
    expect(acc).toMatchObject({ used: 100, reserved: 0, available: 0 })
    expect((await checkInvariants(w.deps.db)).ok).toBe(true)

    // The client at 0 left: the refusal says so with the same numbers and the next period's start.
    const since = w.tg.mark()
    await clientSends(w, client, 'One more?')
    const refused = await w.tg.waitForSent(client.id, /questions left in this period/, { since })
    expect(refused.text).toContain(
      `0 of 100 questions left in this period (0 awaiting an answer); the next period starts on ${formatDate(p1!.period_end, 'Europe/Moscow', 'en')}`,
    )
  })

  it('a crash between reserve and enqueue: the sweeper returns the unit after its TTL; /plan shows the original balance', async () => {
    const client = await newClient(w, { language_code: 'ru' })
    const { sub } = await subscribe(w, client)
    const cid = sub.consultation_id
    const before = await appealsAccount(w, cid)
    const r = await w.deps.ledger.reserve({
      requestId: `crash:${sub.id}`,
      lines: [{ account: key(cid), amount: 1 }],
      ttlSeconds: 60,
    })
    expect(r.admitted).toBe(true)
    // ...the process dies here: nothing was enqueued. /plan shows the hold.
    let since = w.tg.mark()
    await w.tg.push(TEST_BOT_ID, w.tg.command(client, 'plan'))
    await w.tg.waitForSent(client.id, /использовано 0, ждут ответа 1, осталось 2 из 3/, { since })
    // The TTL passes (its deadline moved into the past instead of waiting), the sweeper runs.
    await sql`update ledger_reservation set expires_at = now() - interval '1 second'
      where request_id = ${`crash:${sub.id}`}`.execute(w.deps.db)
    await eventually(async () => {
      if ((await w.deps.ledger.reservation(`crash:${sub.id}`))?.state === 'expired') return true
      await w.deps.ledger.sweep() // the app's own sweeper (every minute) may get there first
      return false
    }, 'the sweeper to expire the hold')
    const after = await appealsAccount(w, cid)
    expect(after).toMatchObject({
      granted: before.granted,
      reserved: 0,
      used: 0,
      available: before.available,
    })
    since = w.tg.mark()
    await w.tg.push(TEST_BOT_ID, w.tg.command(client, 'plan'))
    await w.tg.waitForSent(client.id, /использовано 0, ждут ответа 0, осталось 3 из 3/, { since })
    expect((await checkInvariants(w.deps.db)).ok).toBe(true)
  })

  it('a question accepted in the last second of period N and answered after the renewal is committed to period N', async () => {
    const client = await newClient(w, { language_code: 'en' })
    const { sub, payload, amount } = await subscribe(w, client)
    const route = await topicReady(w, sub.consultation_id)
    await clientSends(w, client, 'Late question')
    await w.tg.waitForSent(client.id, /Question #1 accepted/)
    // Period 1 ends one second after the question was accepted: its instants move into the past.
    const [a1] = await appeals(w, sub.consultation_id)
    const [p1] = await periods(w, sub.id)
    await shiftSubscription(w, sub.id, p1!.period_end.getTime() - a1!.accepted_at.getTime() - 500)
    const [shifted] = await periods(w, sub.id)
    expect(shifted!.period_end.getTime() - a1!.accepted_at.getTime()).toBe(500)
    // The renewal and the answer come after that end (a wait for the wall clock, at most half a second).
    await eventually(async () => Date.now() > shifted!.period_end.getTime() + 50, 'period 1 to be over')

    // The renewal arrives after the period's end: period 2 from period 1's end, carry-over of the unused 2.
    await renewThroughTelegram(w, client, {
      payload,
      amount,
      charge: `late-renew-${sub.id}`,
      expires: new Date(shifted!.period_end.getTime() + 30 * DAY),
    })
    let ps = await periods(w, sub.id)
    expect(ps).toHaveLength(2)
    expect(ps[0]).toMatchObject({ reserved: 1, used: 0, granted: 1 })
    expect(ps[1]).toMatchObject({ reserved: 0, used: 0, granted: 5, carried: 2 })

    // Answered now, in period 2: the hold commits where it was taken.
    await staffSends(w, route.message_thread_id, w.expert, 'The answer, after the renewal')
    await eventually(
      async () => (await appeals(w, sub.consultation_id))[0]?.state === 'answered',
      'the answer',
    )
    ps = await periods(w, sub.id)
    expect(ps[0]).toMatchObject({ reserved: 0, used: 1 })
    expect(ps[1]).toMatchObject({ reserved: 0, used: 0, granted: 5 })
    await w.tg.waitFor('copyMessage', { chat_id: client.id, from_chat_id: STAFF_CHAT_ID }, { ok: true })
    expect((await checkInvariants(w.deps.db)).ok).toBe(true)
  })

  it('between the period end and a late renewal new questions are refused with the reason; the renewal lets them in', async () => {
    const client = await newClient(w, { language_code: 'ru' })
    const { sub, payload, amount } = await subscribe(w, client)
    const [p1] = await periods(w, sub.id)
    await shiftSubscription(w, sub.id, p1!.period_end.getTime() - Date.now() + 3600_000)
    const [shifted] = await periods(w, sub.id)
    let since = w.tg.mark()
    await clientSends(w, client, 'В паузе')
    const r = await w.tg.waitForSent(client.id, /продление ещё не поступило/, { since })
    expect(r.text).toContain(`Период закончился ${formatDate(shifted!.period_end, 'Europe/Moscow', 'ru')}`)
    await renewThroughTelegram(w, client, {
      payload,
      amount,
      charge: `gap-renew-${sub.id}`,
      expires: new Date(shifted!.period_end.getTime() + 30 * DAY),
    })
    since = w.tg.mark()
    await clientSends(w, client, 'После продления')
    await w.tg.waitForSent(client.id, /Вопрос №1 принят/, { since })
    const ps = await periods(w, sub.id)
    expect(ps[1]).toMatchObject({ reserved: 1, granted: 5 })
    // The pinned card shows the period holding now (2) and its numbers.
    const route = await topicReady(w, sub.consultation_id)
    await eventually(async () => {
      const card = w.tg.message(STAFF_CHAT_ID, route.card_message_id!)?.text ?? ''
      // Redrawn by the renewal (5 of 5), or later by the question's lane (4 of 5).
      return /🔁 План: период 2, .*продлится в конце/.test(card) && /осталось [45] из 5/.test(card)
    }, 'the card to show period 2')
    expect(ps[0]).toMatchObject({ reserved: 0, used: 0 })
  })
})
