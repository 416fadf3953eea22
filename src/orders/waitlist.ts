import { sql } from 'kysely'
import { audit } from '../audit/audit'
import { clientZone } from '../clients/clients.service'
import type { DeskRuntime } from '../config/load'
import type { Trx } from '../db/database'
import type { Deps } from '../deps'
import type { Outbox } from '../jobs/jobs'
import { jobId } from '../jobs/queue'
import { notify } from '../telegram/notify'
import { formatInstant } from '../time/format'
import { freePlaces, holdCapacity, releaseHold, slotAccount } from './capacity'
import { lockOrder, moveOrder } from './order-state'
import { waitlistHoldQueue } from './orders.jobs'
import { dbNow, insertOrder, type Order, setHold, updateOrder } from './orders.repository'
import { announcedSlot, findTariff, snapshotTariff } from './tariffs'
import type { WaitlistTables } from './waitlist.tables'

/**
 * The waitlist of a full start (issues 14, 26). A client joins for an announced slot with no free place. When a
 * place of it frees up (a start moved away, refunded before it began, a pre-checkout hold that lapsed, a waitlist
 * hold that ended: `placeFreed`, called in that transaction), the first waiting client (row lock, SKIP LOCKED: two
 * places freed at once go to two different clients) gets it held: an order of their own is created in that
 * transaction with the place reserved on the slot's ledger account for `waitlistHoldMinutes` (a desk setting), so
 * nobody else can buy it meanwhile, and they are told with a Pay button. A real desk wants this rather than first
 * come first served: a waitlist whose freed place goes to whoever happens to look first is not a line.
 *
 * The hold ends by itself (a job written with it, for its end: runWaitlistHoldEnd): unbought, the order is
 * cancelled, the place released and passed to the next in line, and the client told. A client leaves the line
 * (leaveWaitlist; a held place passes on at once). Buying the slot, by any order, closes the client's entry in the
 * payment's transaction (closeOnPurchase), so nobody is told "a place freed up" for a slot they already have.
 *
 * Locks: an entry's held order before the entry (the payment's order, its order lock, comes first there too).
 */

type Entry = WaitlistTables['waitlist_entry'] & { id: number; state: string; created_at: Date }

export type JoinResult =
  | { ok: true; entryId: number; position: number; at: Date; already: boolean }
  | { ok: false; code: 'gone' | 'not-full' | 'have-place' }

export async function joinWaitlist(
  deps: Deps,
  desk: DeskRuntime,
  input: { userId: number; lang: string; tariffCode: string; slot: Date },
): Promise<JoinResult> {
  const tariff = findTariff(desk, input.tariffCode)
  const at = tariff ? announcedSlot(tariff, input.slot) : undefined
  if (!tariff || !at || at.getTime() <= Date.now()) return { ok: false, code: 'gone' }
  const account = slotAccount(desk, tariff.code, tariff.slotCapacity, at, Math.round(tariff.windowHours * 60))
  return deps.db.transaction().execute(async (trx): Promise<JoinResult> => {
    // A client who has this start already (paid, or a place held for them) has nothing to wait for.
    const own = await trx
      .selectFrom('orders')
      .select('id')
      .where('bot_id', '=', desk.botId)
      .where('user_id', '=', input.userId)
      .where('capacity_key', '=', account.key)
      .where('state', 'in', ['reserved', 'paid_waiting', 'active'])
      .executeTakeFirst()
    if (own) return { ok: false, code: 'have-place' }
    const [left] = await freePlaces(trx, desk.botId, [account])
    if ((left ?? 0) > 0) return { ok: false, code: 'not-full' }
    const inserted = await trx
      .insertInto('waitlist_entry')
      .values({
        bot_id: desk.botId,
        user_id: input.userId,
        tariff_code: tariff.code,
        capacity_key: account.key,
        slot_start: at,
        lang: input.lang,
      })
      .onConflict((oc) =>
        oc
          .columns(['bot_id', 'user_id', 'capacity_key'])
          .where('state', 'in', ['waiting', 'notified'])
          .doNothing(),
      )
      .returning('id')
      .executeTakeFirst()
    const mine = await trx
      .selectFrom('waitlist_entry')
      .select('id')
      .where('bot_id', '=', desk.botId)
      .where('user_id', '=', input.userId)
      .where('capacity_key', '=', account.key)
      .where('state', 'in', ['waiting', 'notified'])
      .executeTakeFirstOrThrow()
    const ahead = await trx
      .selectFrom('waitlist_entry')
      .select(sql<number>`count(*)::int`.as('n'))
      .where('bot_id', '=', desk.botId)
      .where('capacity_key', '=', account.key)
      .where('state', '=', 'waiting')
      .where('id', '<', mine.id)
      .executeTakeFirstOrThrow()
    return { ok: true, entryId: mine.id, position: ahead.n + 1, at, already: !inserted }
  })
}

/** The client's open entries (in line, or a place held), soonest start first. */
export function myWaitlist(deps: Deps, desk: DeskRuntime, userId: number) {
  return deps.db
    .selectFrom('waitlist_entry')
    .select(['id', 'tariff_code', 'slot_start', 'state', 'hold_until'])
    .where('bot_id', '=', desk.botId)
    .where('user_id', '=', userId)
    .where('state', 'in', ['waiting', 'notified'])
    .where('slot_start', '>', sql<Date>`now()`)
    .orderBy('slot_start')
    .orderBy('id')
    .execute()
}

/** The tariff's title in a language (the code when the tariff is gone from the config). */
export function waitlistTitle(desk: DeskRuntime, tariffCode: string, lang: string): string {
  const title = findTariff(desk, tariffCode)?.title
  return title ? (title[lang as 'en' | 'ru'] ?? title[desk.defaultLanguage] ?? tariffCode) : tariffCode
}

/** Locks an entry after its held order (the lock order of this module); undefined when it is not this desk's. */
async function lockEntry(
  trx: Trx,
  botId: number,
  entryId: number,
): Promise<{ entry: Entry; order: Order | undefined } | undefined> {
  const head = await trx
    .selectFrom('waitlist_entry')
    .select(['bot_id', 'order_id'])
    .where('id', '=', entryId)
    .executeTakeFirst()
  if (!head || head.bot_id !== botId) return undefined
  const order = head.order_id ? await lockOrder(trx, head.order_id) : undefined
  const entry = await trx
    .selectFrom('waitlist_entry')
    .selectAll()
    .where('id', '=', entryId)
    .forUpdate()
    .executeTakeFirstOrThrow()
  // The order is set once, when the entry is told, before it can be locked here again: it cannot have changed.
  return { entry: entry as Entry, order }
}

/**
 * Ends the place held on an entry's order if it is still held and unpaid: the order is cancelled, its hold released
 * and the place passed to the next in line. True when a place was given back.
 */
async function dropHeldPlace(
  trx: Trx,
  outbox: Outbox,
  desk: DeskRuntime,
  entry: Entry,
  order: Order | undefined,
): Promise<boolean> {
  if (!order || (order.state !== 'created' && order.state !== 'reserved')) return false
  // A hold the client's own checkout took over (a pre-checkout after the waitlist hold ran out) is theirs to pay
  // now; it lapses the usual way (the order sweeper, which passes the place on).
  const ours = !order.hold_request_id || order.hold_request_id.startsWith('wl:')
  if (!ours) return false
  if (order.hold_request_id) await releaseHold(trx, order.hold_request_id, 'waitlist hold ended')
  await moveOrder(trx, order, 'cancelled')
  await updateOrder(trx, order.id, {
    cancel_reason: 'waitlist',
    hold_request_id: null,
    hold_expires_at: null,
  })
  if (!order.hold_request_id) return false
  await placeFreed(trx, outbox, desk, entry.capacity_key)
  return true
}

export type LeaveResult =
  | { ok: true; at: Date; title: string }
  | { ok: false; code: 'unknown' | 'closed' | 'duplicate' }

/** The client leaves the line (a button or /waitlist): a place held for them passes to the next at once. */
export async function leaveWaitlist(
  deps: Deps,
  desk: DeskRuntime,
  input: { userId: number; entryId: number },
): Promise<LeaveResult> {
  return deps.jobs.transaction(deps.db, async (trx, outbox): Promise<LeaveResult> => {
    const locked = await lockEntry(trx, desk.botId, input.entryId)
    if (!locked || locked.entry.user_id !== input.userId) return { ok: false, code: 'unknown' }
    const { entry, order } = locked
    if (entry.state !== 'waiting' && entry.state !== 'notified') return { ok: false, code: 'closed' }
    await closeEntry(trx, entry.id, 'left')
    if (entry.state === 'notified') await dropHeldPlace(trx, outbox, desk, entry, order)
    return { ok: true, at: entry.slot_start, title: waitlistTitle(desk, entry.tariff_code, entry.lang) }
  })
}

async function closeEntry(trx: Trx, id: number, state: 'bought' | 'left' | 'lapsed'): Promise<void> {
  await trx.updateTable('waitlist_entry').set({ state, closed_at: sql`now()` }).where('id', '=', id).execute()
}

/**
 * The end of a hold (the job written with it): unbought, the place passes to the next in line and the client is
 * told the hold ended. Idempotent: an entry no longer notified (bought, left, ended) changes nothing.
 */
export async function runWaitlistHoldEnd(
  deps: Deps,
  data: { entryId: number },
): Promise<'passed' | 'nothing'> {
  return deps.jobs.transaction(deps.db, async (trx, outbox) => {
    const head = await trx
      .selectFrom('waitlist_entry')
      .select('bot_id')
      .where('id', '=', data.entryId)
      .executeTakeFirst()
    const desk = head && deps.config.desks.find((d) => d.botId === head.bot_id)
    if (!desk) return 'nothing'
    const locked = await lockEntry(trx, desk.botId, data.entryId)
    if (locked?.entry.state !== 'notified') return 'nothing'
    const { entry, order } = locked
    const paid = order && !['created', 'reserved', 'cancelled'].includes(order.state)
    await closeEntry(trx, entry.id, paid ? 'bought' : 'lapsed')
    if (paid) return 'nothing'
    // The client's own checkout took the hold over: they are paying; that hold lapses the usual way.
    if (order?.hold_request_id && !order.hold_request_id.startsWith('wl:')) return 'nothing'
    await dropHeldPlace(trx, outbox, desk, entry, order)
    const zone = await clientZone(trx, desk, entry.user_id)
    await notify(outbox, {
      botId: desk.botId,
      chatId: entry.user_id,
      lang: entry.lang,
      key: 'waitlist-hold-ended',
      params: {
        at: formatInstant(entry.slot_start, zone, entry.lang),
        title: waitlistTitle(desk, entry.tariff_code, entry.lang),
      },
      dedupeKey: `waitlist:${entry.id}:hold-ended`,
    })
    return 'passed'
  })
}

/**
 * A payment for a start (in the payment's transaction, the paid order locked): the client's open entries for that
 * slot are closed as bought; a place still held for them on another order goes to the next in line.
 */
export async function closeOnPurchase(
  trx: Trx,
  outbox: Outbox,
  desk: DeskRuntime,
  order: Pick<Order, 'id' | 'user_id' | 'tariff_code' | 'slot_start' | 'window_minutes'>,
): Promise<void> {
  if (!order.slot_start) return
  const key = slotAccount(desk, order.tariff_code, 0, order.slot_start, order.window_minutes).key
  const open = await trx
    .selectFrom('waitlist_entry')
    .select('id')
    .where('bot_id', '=', desk.botId)
    .where('user_id', '=', order.user_id)
    .where('capacity_key', '=', key)
    .where('state', 'in', ['waiting', 'notified'])
    .execute()
  for (const { id } of open) {
    const locked = await lockEntry(trx, desk.botId, id)
    if (!locked || (locked.entry.state !== 'waiting' && locked.entry.state !== 'notified')) continue
    await closeEntry(trx, id, 'bought')
    if (locked.order && locked.order.id !== order.id)
      await dropHeldPlace(trx, outbox, desk, locked.entry, locked.order)
  }
}

/**
 * A place of `capacityKey` was given back in this transaction: it is held for the first waiting client (an order of
 * theirs, reserved until the hold ends) and they are told, with a Pay and a Leave button. Returns the entry's id, or
 * undefined when nobody waits (or the place could not be held: the slot is full again).
 */
export async function placeFreed(
  trx: Trx,
  outbox: Outbox,
  desk: DeskRuntime,
  capacityKey: string,
): Promise<number | undefined> {
  const first = await trx
    .selectFrom('waitlist_entry')
    .selectAll()
    .where('bot_id', '=', desk.botId)
    .where('capacity_key', '=', capacityKey)
    .where('state', '=', 'waiting')
    .where('slot_start', '>', sql<Date>`now()`)
    .orderBy('id')
    .limit(1)
    .forUpdate()
    .skipLocked()
    .executeTakeFirst()
  if (!first) return undefined
  const tariff = findTariff(desk, first.tariff_code)
  // A tariff removed or paused sells nothing: the line waits (a place is not held for a start nobody may buy).
  if (!tariff || tariff.paused || tariff.startMode !== 'scheduled') return undefined
  const now = await dbNow(trx)
  const holdMs = desk.waitlistHoldMinutes * 60_000
  const until = new Date(Math.min(now.getTime() + holdMs, first.slot_start.getTime()))
  const account = slotAccount(
    desk,
    tariff.code,
    tariff.slotCapacity,
    first.slot_start,
    Math.round(tariff.windowHours * 60),
  )
  const requestId = `wl:${first.id}:${now.getTime()}`
  // The ledger's own expiry comes an hour after the hold's end, so the job (not the ledger sweeper) ends it and
  // passes the place on.
  const held = await holdCapacity(trx, desk.botId, account, requestId, Math.ceil(holdMs / 1000) + 3600)
  if (!held.ok) return undefined
  const order = await insertOrder(trx, {
    bot_id: desk.botId,
    user_id: first.user_id,
    ...snapshotTariff(desk, tariff, first.lang),
    slot_start: first.slot_start,
  })
  await setHold(trx, order.id, { state: 'reserved', requestId, expiresAt: until, capacityKey: account.key })
  await trx
    .updateTable('waitlist_entry')
    .set({ state: 'notified', notified_at: now, order_id: order.id, hold_until: until })
    .where('id', '=', first.id)
    .execute()
  await outbox.send(
    waitlistHoldQueue,
    { entryId: first.id },
    { startAfter: until, id: jobId(`${waitlistHoldQueue.name}:${first.id}`) },
  )
  await audit(trx, {
    botId: desk.botId,
    actorId: null,
    action: 'waitlist.place_held',
    subjectType: 'order',
    subjectId: order.id,
    details: { entryId: first.id, capacity: account.key, until: until.toISOString() },
  })
  const zone = await clientZone(trx, desk, first.user_id)
  await notify(outbox, {
    botId: desk.botId,
    chatId: first.user_id,
    lang: first.lang,
    key: 'waitlist-place-held',
    params: {
      at: formatInstant(first.slot_start, zone, first.lang),
      until: formatInstant(until, zone, first.lang),
      title: order.title,
      price: order.price_stars,
    },
    buttons: [
      [{ key: 'waitlist-btn-pay', params: { price: order.price_stars }, data: `wl:pay:${first.id}` }],
      [{ key: 'waitlist-btn-leave', data: `wl:leave:${first.id}` }],
    ],
    dedupeKey: `waitlist:${first.id}:notified`,
  })
  return first.id
}

export type HeldOrderResult =
  | { ok: true; order: Order; until: Date }
  | { ok: false; code: 'unknown' | 'closed' | 'ended' }

/** The order holding the client's place (the Pay button): theirs, still told, the hold still running. */
export async function heldOrder(
  deps: Deps,
  desk: DeskRuntime,
  input: { userId: number; entryId: number },
): Promise<HeldOrderResult> {
  const entry = await deps.db
    .selectFrom('waitlist_entry')
    .selectAll()
    .where('id', '=', input.entryId)
    .executeTakeFirst()
  if (!entry || entry.bot_id !== desk.botId || entry.user_id !== input.userId)
    return { ok: false, code: 'unknown' }
  if (entry.state !== 'notified' || !entry.order_id || !entry.hold_until) return { ok: false, code: 'closed' }
  const order = await deps.db
    .selectFrom('orders')
    .selectAll()
    .where('id', '=', entry.order_id)
    .executeTakeFirst()
  const now = await dbNow(deps.db)
  if (order?.state !== 'reserved' || entry.hold_until.getTime() <= now.getTime())
    return { ok: false, code: 'ended' }
  return { ok: true, order, until: entry.hold_until }
}
