import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkInvariants } from '../../src/ledger/ledger.invariants'
import { findTariff, snapshotTariff } from '../../src/orders/tariffs'
import { orderPayload } from '../../src/payments/payload'
import {
  decidePreCheckout,
  decidePreCheckoutInOneStatement,
  decidePreCheckoutInTransaction,
  type PreCheckoutDecision,
  type PreCheckoutInput,
} from '../../src/payments/pre-checkout'
import { type PayWorld, preCheckout, startPayWorld, TEST_BOT_ID, tariff } from './payments-support'

/**
 * The pre-checkout decision has two paths: one statement (pre_checkout_hold, src/payments/sql/pre_checkout_hold.sql)
 * and the transaction it was folded from. For every rule, the same order state gives the same answer and leaves the same
 * rows on both; redeliveries replay across them (same hold request id, same ledger fingerprint).
 */

const SLOT = new Date(Math.ceil((Date.now() + 72 * 3_600_000) / 3_600_000) * 3_600_000)

let w: PayWorld
beforeAll(async () => {
  w = await startPayWorld((c) => {
    const desk = c.desks[0]!
    desk.tariffs.push(
      tariff({ code: 'pair', dailyCapacity: 2 }),
      tariff({ code: 'gone' }),
      tariff({ code: 'slot', startMode: 'scheduled', slots: [SLOT.toISOString()], slotCapacity: 1 }),
    )
  })
})
afterAll(() => w?.stop())

let userSeq = 8_100_000_000
let querySeq = 0

type Setup = Partial<{
  code: string
  user: number
  state: string
  createdAgoHours: number
  slotStart: Date
  holdExpiresInMinutes: number
  banned: boolean
}>

/** An order as the tariff button creates it, then edited into the state a rule needs. */
async function order(s: Setup = {}): Promise<{ id: number; user: number; price: number }> {
  const desk = w.t.desk
  const user = s.user ?? ++userSeq
  const t = findTariff(desk, s.code ?? 'quick')!
  const o = await w.deps.db
    .insertInto('orders')
    .values({
      bot_id: TEST_BOT_ID,
      user_id: user,
      ...snapshotTariff(desk, t, 'en'),
      ...(t.startMode === 'scheduled' ? { slot_start: s.slotStart ?? SLOT } : {}),
    })
    .returning(['id', 'price_stars'])
    .executeTakeFirstOrThrow()
  if (s.state)
    await w.deps.db
      .updateTable('orders')
      .set({ state: s.state as never })
      .where('id', '=', o.id)
      .execute()
  if (s.createdAgoHours !== undefined)
    await w.deps.db
      .updateTable('orders')
      .set({ created_at: new Date(Date.now() - s.createdAgoHours * 3_600_000) })
      .where('id', '=', o.id)
      .execute()
  if (s.banned)
    await sql`insert into client (bot_id, user_id, first_name, banned_at) values (${TEST_BOT_ID}, ${user}, 'B', now())
      on conflict (bot_id, user_id) do update set banned_at = now()`.execute(w.deps.db)
  return { id: o.id, user, price: o.price_stars }
}

function input(o: { id: number; user: number; price: number }, extra: Partial<PreCheckoutInput> = {}) {
  return {
    queryId: `paths-${++querySeq}`,
    fromId: o.user,
    currency: 'XTR',
    totalAmount: o.price,
    payload: orderPayload(o.id),
    ...extra,
  }
}

/** What a decision says, without the order id (each path gets its own order). */
function answer(d: PreCheckoutDecision | undefined) {
  if (!d) return d
  if (d.ok) return { ok: true, holdUntil: d.holdUntil !== null }
  return { ok: false, code: d.code, params: d.params }
}

/** The order and its holds after a decision, comparable across two orders. */
async function rows(orderId: number) {
  const o = await w.deps.db
    .selectFrom('orders')
    .selectAll()
    .where('id', '=', orderId)
    .executeTakeFirstOrThrow()
  const holds = await w.deps.db
    .selectFrom('ledger_reservation')
    .select(['state', 'amounts', 'fingerprint'])
    .where('request_id', 'like', `hold:${orderId}:%`)
    .orderBy('created_at')
    .execute()
  return {
    state: o.state,
    held: o.hold_request_id !== null,
    holdFromQuery: o.hold_request_id?.replace(/^hold:\d+:/, 'hold:<order>:').replace(/paths-\d+$/, '<query>'),
    expires: o.hold_expires_at !== null,
    capacityKey: o.capacity_key,
    holds,
  }
}

/** Two identical orders; one decided in one statement, the other by the transaction; both must agree. */
async function bothPaths(
  setup: Setup,
  extra: (o: { id: number; user: number; price: number }) => Partial<PreCheckoutInput> = () => ({}),
) {
  const a = await order(setup)
  const b = await order(setup)
  return decideBoth(a, b, extra)
}

async function decideBoth(
  a: { id: number; user: number; price: number },
  b: { id: number; user: number; price: number },
  extra: (o: { id: number; user: number; price: number }) => Partial<PreCheckoutInput> = () => ({}),
) {
  const fast = await decidePreCheckoutInOneStatement(w.deps, w.t.desk, input(a, extra(a)))
  const full = await decidePreCheckoutInTransaction(w.deps, w.t.desk, input(b, extra(b)))
  expect(fast, 'the statement decided (did not hand over)').toBeDefined()
  expect(answer(fast)).toEqual(answer(full))
  expect(await rows(a.id)).toEqual(await rows(b.id))
  return { fast: fast!, full, a, b }
}

describe('one statement and the transaction decide alike', () => {
  it('accepts a fresh order and holds one place of the day (same request id shape, same fingerprint)', async () => {
    // The day's account exists once any hold of it has been taken.
    await decidePreCheckout(w.deps, w.t.desk, input(await order()))
    const { fast, a } = await bothPaths({})
    expect(fast.ok).toBe(true)
    const r = await rows(a.id)
    expect(r).toMatchObject({ state: 'reserved', held: true, holds: [{ state: 'reserved', amounts: [1] }] })
    expect(r.capacityKey).toMatch(/^day:quick:\d{4}-\d{2}-\d{2}$/)
  })

  it('on_request holds nothing; a scheduled order holds its slot, and a full slot refuses alike', async () => {
    const later = await bothPaths({ code: 'later' })
    expect(later.fast.ok).toBe(true)
    expect((await rows(later.a.id)).holds).toEqual([])
    // The slot's first hold opens its account (the full path does that) and takes its only place.
    expect(await decidePreCheckout(w.deps, w.t.desk, input(await order({ code: 'slot' })))).toMatchObject({
      ok: true,
    })
    const { fast, a } = await bothPaths({ code: 'slot' })
    expect(answer(fast)).toEqual({ ok: false, code: 'capacity-full', params: { capacity: 1 } })
    expect(await rows(a.id)).toMatchObject({ state: 'created', held: false, holds: [] })
  })

  it('refuses each bad input with the same code and parameters, changing nothing', async () => {
    const cases: [string, Setup, ((o: { id: number }) => Partial<PreCheckoutInput>)?][] = [
      ['order-unknown (payload)', {}, () => ({ payload: 'o:999999999' })],
      ['order-foreign', {}, () => ({ fromId: 1234 })],
      ['banned', { banned: true }],
      ['wrong-currency', {}, () => ({ currency: 'USD' })],
      ['wrong-amount', {}, () => ({ totalAmount: 99 })],
      ['order-cancelled', { state: 'cancelled' }],
      ['order-paid', { state: 'active' }],
      ['order-expired', { createdAgoHours: 25 }],
      ['slot-started', { code: 'slot', slotStart: new Date(Date.now() - 60_000) }],
    ]
    for (const [label, setup, extra] of cases) {
      const { fast } = await bothPaths(setup, extra)
      expect(fast.ok, label).toBe(false)
      expect(!fast.ok && fast.code, label).toBe(label.split(' ')[0])
    }
    // A tariff removed from config after the invoice was sent.
    const a = await order({ code: 'gone' })
    const b = await order({ code: 'gone' })
    const i = w.t.desk.tariffs.findIndex((t) => t.code === 'gone')
    const removed = w.t.desk.tariffs.splice(i, 1)
    try {
      const { fast } = await decideBoth(a, b)
      expect(answer(fast)).toEqual({
        ok: false,
        code: 'tariff-unavailable',
        params: { title: 'Tariff gone' },
      })
    } finally {
      w.t.desk.tariffs.splice(i, 0, ...removed)
    }
  })

  it('a full day refuses with the capacity; the statement rolls back the order move', async () => {
    const first = await order({ code: 'pair' })
    await decidePreCheckout(w.deps, w.t.desk, input(first))
    await decidePreCheckout(w.deps, w.t.desk, input(await order({ code: 'pair' })))
    const { fast } = await bothPaths({ code: 'pair' })
    expect(answer(fast)).toEqual({ ok: false, code: 'capacity-full', params: { capacity: 2 } })
  })
})

describe('idempotency across the paths', () => {
  it('a redelivered query gets the same answer and no second hold, whichever path sees it', async () => {
    const o = await order()
    const q = input(o)
    const first = await decidePreCheckoutInOneStatement(w.deps, w.t.desk, q)
    const again = await decidePreCheckoutInOneStatement(w.deps, w.t.desk, q)
    const viaFull = await decidePreCheckoutInTransaction(w.deps, w.t.desk, q)
    expect(first).toMatchObject({ ok: true })
    expect(again).toEqual(first)
    expect(viaFull).toEqual(first)
    expect((await rows(o.id)).holds).toHaveLength(1)
  })

  it('a hold replayed by request id: the full path gets the statement hold back, not a conflict', async () => {
    const o = await order()
    const q = input(o)
    expect(await decidePreCheckoutInOneStatement(w.deps, w.t.desk, q)).toMatchObject({ ok: true })
    // As if the order had lost its hold record but the ledger kept the reservation: the same request id again.
    await w.deps.db
      .updateTable('orders')
      .set({ state: 'created', hold_request_id: null, hold_expires_at: null })
      .where('id', '=', o.id)
      .execute()
    expect(await decidePreCheckoutInTransaction(w.deps, w.t.desk, q)).toMatchObject({ ok: true })
    const r = await rows(o.id)
    expect(r.holds).toHaveLength(1)
    expect(r.held).toBe(true)
  })

  it('a lapsed hold is released and a new one taken, the same way on both paths', async () => {
    const lapse = async (o: { id: number; user: number; price: number }) => {
      await decidePreCheckout(w.deps, w.t.desk, input(o))
      await w.deps.db
        .updateTable('orders')
        .set({ hold_expires_at: new Date(Date.now() - 1000) })
        .where('id', '=', o.id)
        .execute()
    }
    const a = await order()
    const b = await order()
    await lapse(a)
    await lapse(b)
    const fast = await decidePreCheckoutInOneStatement(w.deps, w.t.desk, input(a))
    const full = await decidePreCheckoutInTransaction(w.deps, w.t.desk, input(b))
    expect(answer(fast)).toEqual(answer(full))
    expect(await rows(a.id)).toEqual(await rows(b.id))
    expect((await rows(a.id)).holds.map((h) => h.state)).toEqual(['released', 'reserved'])
    expect((await checkInvariants(w.deps.db)).violations).toEqual([])
  })
})

describe('through the bot', () => {
  it('answers in the webhook response on a webhook, by a request of its own when polling', async () => {
    const u = w.tg.user({ language_code: 'en' })
    const o = await order({ user: u.id })
    const a = await preCheckout(w, u, { payload: orderPayload(o.id), amount: o.price })
    expect(a.ok).toBe(true)
    const call = w.tg.callsTo('answerPreCheckoutQuery').at(-1)!
    expect(call.viaWebhookReply).toBeUndefined()

    const hooked = await startPayWorld(undefined, { mode: 'webhook' })
    try {
      const v = hooked.tg.user({ language_code: 'en' })
      const mine = await hooked.deps.db
        .insertInto('orders')
        .values({
          bot_id: TEST_BOT_ID,
          user_id: v.id,
          ...snapshotTariff(hooked.t.desk, findTariff(hooked.t.desk, 'quick')!, 'en'),
        })
        .returning(['id', 'price_stars'])
        .executeTakeFirstOrThrow()
      const refused = await preCheckout(hooked, v, { payload: orderPayload(mine.id), amount: 1 })
      expect(refused.error_message).toMatch(/does not match the order's price/)
      const ok = await preCheckout(hooked, v, { payload: orderPayload(mine.id), amount: mine.price_stars })
      expect(ok.ok).toBe(true)
      const calls = hooked.tg.callsTo('answerPreCheckoutQuery')
      expect(calls).toHaveLength(2)
      expect(calls.every((c) => c.viaWebhookReply === true && c.ok === true)).toBe(true)
    } finally {
      await hooked.stop()
    }
  })
})
