import type { User } from 'grammy/types'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { checkInvariants } from '../../src/ledger/ledger.invariants'
import { sweepOrders } from '../../src/orders/orders.service'
import { decidePreCheckout } from '../../src/payments/pre-checkout'
import { recordSuccessfulPayment } from '../../src/payments/successful-payment'
import { inboxDrained } from '../support/fixtures'
import {
  auditCount,
  buy,
  jobsIn,
  orderState,
  type PayWorld,
  preCheckout,
  startPayWorld,
  TEST_BOT_ID,
  tariff,
} from './payments-support'

/**
 * Races, in webhook mode (Telegram posts updates concurrently; each POST returns once the update is stored in the
 * inbox, and the tests wait for the inbox to drain) and
 * directly against the services from many connections at once. No timing assertions: only what was recorded.
 */

const ROUNDS = 10

let w: PayWorld
beforeAll(async () => {
  w = await startPayWorld(
    (c) => {
      const desk = c.desks[0]!
      desk.tariffs.push(tariff({ code: 'cap7', dailyCapacity: 7 }))
      for (let r = 0; r < ROUNDS; r++) desk.tariffs.push(tariff({ code: `cap-r${r}`, dailyCapacity: 5 }))
    },
    { mode: 'webhook' },
  )
})
afterAll(() => w?.stop())

async function notifyJobs(dedupeKey: string): Promise<number> {
  return jobsIn(w.deps, 'tg.notify.payment', { dedupeKey })
}

describe('successful_payment delivered 100 times concurrently', () => {
  it('through the bot (one update redelivered): one payment, one activation, one confirmation', async () => {
    const u = w.tg.user()
    const o = await buy(w, u, 'quick')
    expect((await preCheckout(w, u, o)).ok).toBe(true)
    const first = await w.tg.push(
      TEST_BOT_ID,
      w.tg.successfulPayment(u, {
        invoice_payload: o.payload,
        total_amount: o.amount,
        telegram_payment_charge_id: `c100-${u.id}`,
      }),
    )
    const again = await Promise.all(Array.from({ length: 99 }, () => w.tg.redeliver(TEST_BOT_ID, first)))
    expect([first, ...again].every((r) => r.status === 200)).toBe(true)
    await inboxDrained(w.deps.db)

    const { order, payments, consultation } = await orderState(w.deps, o.orderId)
    expect(order.state).toBe('active')
    expect(payments).toHaveLength(1)
    expect(consultation!.state).toBe('active')
    expect(await auditCount(w.deps, 'consultation.activated', consultation!.id)).toBe(1)
    expect(await jobsIn(w.deps, 'consultation.activated', { consultationId: consultation!.id })).toBe(1)
    expect(await notifyJobs(`consultation:${consultation!.id}:activated`)).toBe(1)
    await w.tg.waitForSent(u.id, /is active/)
    // The send is recorded after Telegram answered: wait for the job that sent it to end (not one that only put
    // itself off for the chat's limit and completed as `deferred`), then read what it left.
    const key = `consultation:${consultation!.id}:activated`
    await vi.waitFor(
      async () => {
        const r = await sql<{ n: number }>`
          select count(*)::int as n from pgboss.job where name = 'tg.notify.payment'
            and data @> ${JSON.stringify({ dedupeKey: key })}::jsonb and state = 'completed'
            and not coalesce(output ? 'deferred', false)`.execute(w.deps.db)
        expect(r.rows[0]!.n).toBe(1)
      },
      { timeout: 15_000, interval: 50 },
    )
    const sent = await w.deps.db.selectFrom('outbound_message').select('key').where('key', '=', key).execute()
    expect(sent).toHaveLength(1)
    expect(w.tg.texts(u.id).filter((t) => /is active/.test(t ?? ''))).toHaveLength(1)
  })

  it(`directly from 100 concurrent calls, ${ROUNDS} rounds: exactly one takes effect each time`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const u = w.tg.user()
      const o = await buy(w, u, 'quick')
      expect((await preCheckout(w, u, o)).ok).toBe(true)
      const input = {
        userId: u.id,
        lang: 'en',
        payment: {
          currency: 'XTR',
          total_amount: o.amount,
          invoice_payload: o.payload,
          telegram_payment_charge_id: `race-${round}-${u.id}`,
          provider_payment_charge_id: '',
        },
      }
      const results = await Promise.all(
        Array.from({ length: 100 }, () => recordSuccessfulPayment(w.deps, w.t.desk, input)),
      )
      expect(results.filter((r) => r.status === 'activated')).toHaveLength(1)
      expect(results.filter((r) => r.status === 'duplicate')).toHaveLength(99)
      const { payments, consultation } = await orderState(w.deps, o.orderId)
      expect(payments).toHaveLength(1)
      expect(await auditCount(w.deps, 'consultation.activated', consultation!.id)).toBe(1)
      expect(await notifyJobs(`consultation:${consultation!.id}:activated`)).toBe(1)
    }
  })
})

describe('capacity', () => {
  it('more simultaneous pre-checkouts than places: exactly the capacity is accepted (through the bot)', async () => {
    const users: User[] = Array.from({ length: 30 }, () => w.tg.user())
    const orders: Awaited<ReturnType<typeof buy>>[] = []
    for (const u of users) orders.push(await buy(w, u, 'cap7'))
    const answers = await Promise.all(users.map((u, i) => preCheckout(w, u, orders[i]!)))
    expect(answers.filter((a) => a.ok)).toHaveLength(7)
    for (const a of answers.filter((x) => !x.ok))
      expect(a.error_message).toMatch(/All places for this start are taken/)
    const reserved = await w.deps.db
      .selectFrom('orders')
      .select(sql<number>`count(*)::int`.as('n'))
      .where('tariff_code', '=', 'cap7')
      .where('state', '=', 'reserved')
      .executeTakeFirstOrThrow()
    expect(reserved.n).toBe(7)

    // An expired hold frees its place: the sweeper releases it and a refused client now gets in.
    const held = orders.find((_, i) => answers[i]!.ok)!
    const refusedIdx = answers.findIndex((a) => !a.ok)
    const h = await w.deps.db
      .selectFrom('orders')
      .selectAll()
      .where('id', '=', held.orderId)
      .executeTakeFirstOrThrow()
    await w.deps.db
      .updateTable('orders')
      .set({ hold_expires_at: new Date(Date.now() - 1000) })
      .where('id', '=', held.orderId)
      .execute()
    const swept = await sweepOrders(w.deps)
    expect(swept.holdsReleased).toBeGreaterThanOrEqual(1)
    const after = await orderState(w.deps, held.orderId)
    expect(after.order.state).toBe('created')
    const r = await w.deps.db
      .selectFrom('ledger_reservation')
      .select('state')
      .where('request_id', '=', h.hold_request_id!)
      .executeTakeFirstOrThrow()
    expect(r.state).toBe('released')
    expect((await preCheckout(w, users[refusedIdx]!, orders[refusedIdx]!)).ok).toBe(true)
    // ...and the place is gone again.
    const another = answers.findIndex((a, i) => !a.ok && i !== refusedIdx)
    expect((await preCheckout(w, users[another]!, orders[another]!)).ok).toBe(false)
  })

  it(`directly: 20 concurrent pre-checkouts for 5 places, ${ROUNDS} rounds; the ledger stays consistent`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const users = Array.from({ length: 20 }, () => w.tg.user())
      const orders: Awaited<ReturnType<typeof buy>>[] = []
      for (const u of users) orders.push(await buy(w, u, `cap-r${round}`))
      const decisions = await Promise.all(
        users.map((u, i) =>
          decidePreCheckout(w.deps, w.t.desk, {
            queryId: `direct-${round}-${i}`,
            fromId: u.id,
            currency: 'XTR',
            totalAmount: orders[i]!.amount,
            payload: orders[i]!.payload,
          }),
        ),
      )
      expect(decisions.filter((d) => d.ok)).toHaveLength(5)
      expect(decisions.filter((d) => !d.ok).every((d) => !d.ok && d.code === 'capacity-full')).toBe(true)
    }
    const inv = await checkInvariants(w.deps.db)
    expect(inv.violations).toEqual([])
  })
})
