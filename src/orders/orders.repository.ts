import { type Insertable, type Selectable, sql } from 'kysely'
import type { Database, Db, Trx } from '../db/database'
import type { OrderTables } from './orders.tables'

/** All Kysely code for orders, payments and consultations as the payment side sees them. */

export type Order = Selectable<OrderTables['orders']>
export type Payment = Selectable<OrderTables['payment']>
export type Consultation = Selectable<OrderTables['consultation']>

type Q = Db | Trx

// ---------------------------------------------------------------------------------------------------------------
// Orders

export async function insertOrder(trx: Trx, values: Insertable<Database['orders']>): Promise<Order> {
  return trx.insertInto('orders').values(values).returningAll().executeTakeFirstOrThrow()
}

export function findOrder(q: Q, orderId: number) {
  return q.selectFrom('orders').selectAll().where('id', '=', orderId).executeTakeFirst()
}

export async function setInvoiceMessage(q: Q, orderId: number, messageId: number): Promise<void> {
  await q.updateTable('orders').set({ invoice_message_id: messageId }).where('id', '=', orderId).execute()
}

/** Records a pre-checkout hold (the caller has checked the move to `state` against the transition table). */
export async function setHold(
  trx: Trx,
  orderId: number,
  hold: { state: 'reserved'; requestId: string | null; expiresAt: Date; capacityKey: string | null },
): Promise<void> {
  await trx
    .updateTable('orders')
    .set({
      state: hold.state,
      hold_request_id: hold.requestId,
      hold_expires_at: hold.expiresAt,
      capacity_key: hold.capacityKey,
      updated_at: sql`now()`,
    })
    .where('id', '=', orderId)
    .execute()
}

export async function updateOrder(
  trx: Trx,
  orderId: number,
  set: Partial<
    Pick<
      Order,
      | 'paid_at'
      | 'needs_start_date'
      | 'start_by'
      | 'capacity_key'
      | 'slot_start'
      | 'cancel_reason'
      | 'hold_request_id'
      | 'hold_expires_at'
    >
  >,
): Promise<void> {
  await trx
    .updateTable('orders')
    .set({ ...set, updated_at: sql`now()` })
    .where('id', '=', orderId)
    .execute()
}

/** Reserved orders whose capacity hold lapsed, locked; SKIP LOCKED so two sweepers never take the same order. */
export function lockLapsedHolds(trx: Trx, limit: number) {
  return trx
    .selectFrom('orders')
    .selectAll()
    .where('state', '=', 'reserved')
    .where('hold_expires_at', '<', sql<Date>`now()`)
    .orderBy('hold_expires_at')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute()
}

/**
 * Unpaid orders older than their desk's hours (`hours`: bot id -> hours; `otherHours` for a bot not listed), locked
 * (SKIP LOCKED): their invoices are no longer honoured at pre-checkout.
 */
export function lockStaleUnpaid(
  trx: Trx,
  hours: ReadonlyMap<number, number>,
  otherHours: number,
  limit: number,
) {
  const bots = [...hours.keys()]
  const each = [...hours.values()]
  const least = Math.min(otherHours, ...each)
  return trx
    .selectFrom('orders')
    .selectAll()
    .where('state', '=', 'created')
    .where('created_at', '<', sql<Date>`now() - make_interval(hours => ${least})`)
    .where(
      'created_at',
      '<',
      sql<Date>`now() - make_interval(hours => coalesce((select r.h from unnest(${bots}::bigint[], ${each}::int[])
        as r(b, h) where r.b = orders.bot_id), ${otherHours}))`,
    )
    .orderBy('created_at')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute()
}

export function listUserOrders(q: Q, botId: number, userId: number, limit = 10) {
  return (
    q
      .selectFrom('orders as o')
      .leftJoin('consultation as c', 'c.order_id', 'o.id')
      .select([
        'o.id',
        'o.title',
        'o.tariff_code',
        'o.state',
        'o.price_stars',
        'o.start_mode',
        'o.slot_start',
        'o.needs_start_date',
        'o.capacity_key',
        'o.start_by',
        'o.paid_at',
        'o.created_at',
        'c.id as consultation_id',
        'c.state as consultation_state',
        'c.starts_at',
        'c.access_until',
      ])
      .where('o.bot_id', '=', botId)
      .where('o.user_id', '=', userId)
      .where('o.state', '<>', 'cancelled')
      // Top-ups are parts of a consultation listed by its own order (their payments are in /paysupport's list).
      .where('o.kind', '=', 'consultation')
      .orderBy('o.created_at', 'desc')
      .limit(limit)
      .execute()
  )
}

// ---------------------------------------------------------------------------------------------------------------
// Payments

/**
 * Inserts a payment unless its charge id is already recorded. UNIQUE(bot_id, telegram_payment_charge_id) makes a
 * redelivered successful_payment a no-op: a concurrent duplicate waits for the first insert and then conflicts.
 */
export async function insertPaymentOnce(
  trx: Trx,
  values: Insertable<Database['payment']>,
): Promise<Payment | undefined> {
  return trx
    .insertInto('payment')
    .values(values)
    .onConflict((oc) => oc.columns(['bot_id', 'telegram_payment_charge_id']).doNothing())
    .returningAll()
    .executeTakeFirst()
}

export function findPaymentByCharge(q: Q, botId: number, chargeId: string) {
  return q
    .selectFrom('payment')
    .selectAll()
    .where('bot_id', '=', botId)
    .where('telegram_payment_charge_id', '=', chargeId)
    .executeTakeFirst()
}

export function findPayment(q: Q, paymentId: number) {
  return q.selectFrom('payment').selectAll().where('id', '=', paymentId).executeTakeFirst()
}

export function lockPayment(trx: Trx, paymentId: number) {
  return trx.selectFrom('payment').selectAll().where('id', '=', paymentId).forUpdate().executeTakeFirst()
}

/** The order's first (non-overpayment) payment. */
export function primaryPayment(q: Q, orderId: number) {
  return q
    .selectFrom('payment')
    .selectAll()
    .where('order_id', '=', orderId)
    .where('kind', '=', 'payment')
    .orderBy('id')
    .executeTakeFirst()
}

/** A refund claim older than this is a crashed attempt: the next press may call Telegram again (which is safe: a
 * refund that did succeed answers CHARGE_ALREADY_REFUNDED, taken as success). */
export const REFUND_CLAIM_STALE_SECONDS = 60

/**
 * Is a refund call in flight for the order's payment (claimed, not refunded, the claim younger than `staleSeconds`)?
 * The scheduled start reads it under the order's lock and waits for the refund's outcome instead of starting a
 * consultation the client is cancelling (src/consultations/start.service.ts).
 */
export async function refundInFlight(
  q: Q,
  orderId: number,
  staleSeconds = REFUND_CLAIM_STALE_SECONDS,
): Promise<boolean> {
  const r = await q
    .selectFrom('payment')
    .select('id')
    .where('order_id', '=', orderId)
    .where('kind', '=', 'payment')
    .where('refunded_at', 'is', null)
    .where('refund_started_at', '>=', sql<Date>`now() - make_interval(secs => ${staleSeconds})`)
    .executeTakeFirst()
  return r !== undefined
}

/**
 * Claims a payment for a refund call: succeeds unless it is refunded or another claim younger than `staleSeconds`
 * is in flight. One conditional UPDATE, so two admins pressing at once cannot both win.
 */
export function claimRefund(q: Q, paymentId: number, staleSeconds: number) {
  return q
    .updateTable('payment')
    .set({ refund_started_at: sql`now()`, refund_error: null })
    .where('id', '=', paymentId)
    .where('refunded_at', 'is', null)
    .where((eb) =>
      eb.or([
        eb('refund_started_at', 'is', null),
        eb('refund_started_at', '<', sql<Date>`now() - make_interval(secs => ${staleSeconds})`),
      ]),
    )
    .returningAll()
    .executeTakeFirst()
}

export async function failRefund(q: Q, paymentId: number, error: string): Promise<void> {
  await q
    .updateTable('payment')
    .set({ refund_started_at: null, refund_error: error })
    .where('id', '=', paymentId)
    .where('refunded_at', 'is', null)
    .execute()
}

export async function markRefunded(
  trx: Trx,
  paymentId: number,
  by: number | null,
  source: NonNullable<Payment['refund_source']>,
): Promise<void> {
  await trx
    .updateTable('payment')
    .set({ refunded_at: sql`now()`, refunded_by: by, refund_source: source, refund_error: null })
    .where('id', '=', paymentId)
    .execute()
}

export function listUserPayments(q: Q, botId: number, userId: number, limit = 8) {
  return q
    .selectFrom('payment as p')
    .leftJoin('orders as o', 'o.id', 'p.order_id')
    .select([
      'p.id',
      'p.telegram_payment_charge_id',
      'p.total_amount',
      'p.kind',
      'p.refunded_at',
      'p.created_at',
      'o.id as order_id',
      'o.title',
      'o.state as order_state',
    ])
    .where('p.bot_id', '=', botId)
    .where('p.user_id', '=', userId)
    .orderBy('p.created_at', 'desc')
    .limit(limit)
    .execute()
}

/** What waits for an admin: overpayments and unmatched payments not refunded, paid orders without a start date. */
export async function refundQueue(q: Q, botId: number) {
  const payments = await q
    .selectFrom('payment')
    .selectAll()
    .where('bot_id', '=', botId)
    .where('kind', '<>', 'payment')
    .where('refunded_at', 'is', null)
    .orderBy('created_at')
    .execute()
  const waiting = await q
    .selectFrom('orders')
    .innerJoin('payment', (j) =>
      j.onRef('payment.order_id', '=', 'orders.id').on('payment.kind', '=', 'payment'),
    )
    .select([
      'orders.id as order_id',
      'orders.user_id',
      'orders.title',
      'orders.price_stars',
      'orders.paid_at',
      'payment.id as payment_id',
      'payment.telegram_payment_charge_id',
    ])
    .where('orders.bot_id', '=', botId)
    .where('orders.state', '=', 'paid_waiting')
    .where('orders.needs_start_date', '=', true)
    .orderBy('orders.paid_at')
    .execute()
  return { payments, waiting }
}

// ---------------------------------------------------------------------------------------------------------------
// Consultations

export async function insertConsultation(
  trx: Trx,
  values: Insertable<Database['consultation']>,
): Promise<Consultation> {
  return trx.insertInto('consultation').values(values).returningAll().executeTakeFirstOrThrow()
}

export function findConsultationByOrder(q: Q, orderId: number) {
  return q.selectFrom('consultation').selectAll().where('order_id', '=', orderId).executeTakeFirst()
}

export function lockConsultation(trx: Trx, consultationId: number) {
  return trx
    .selectFrom('consultation')
    .selectAll()
    .where('id', '=', consultationId)
    .forUpdate()
    .executeTakeFirst()
}

/** The database clock: every window boundary is computed from it, never from a process's clock. */
export async function dbNow(q: Q): Promise<Date> {
  const r = await sql<{ now: Date }>`select now() as now`.execute(q)
  return r.rows[0]!.now
}

/** A consultation with the order fields the desk needs (tariff snapshot). */
export interface DeskConsultationView {
  id: number
  bot_id: number
  user_id: number
  order_id: number
  state: 'waiting' | 'active' | 'closed' | 'revoked'
  starts_at: Date | null
  access_until: Date | null
  closed_at: Date | null
  revoked_at: Date | null
  refund_policy: 'deliver' | 'stop' | null
  sla_minutes: number
  appeals: number
  /** AI drafts included per consultation (0 = drafting not in the tariff). */
  drafts: number
  title: string
  tariff_code: string
  price_stars: number
  start_mode: 'immediate' | 'scheduled' | 'on_request'
  slot_start: Date | null
  needs_start_date: boolean
  lang: string
  /** The staff group of its topic; null: the desk's home group (read it through staffChatOf). */
  staff_chat_id: number | null
}

const VIEW_COLUMNS = sql`c.id, c.bot_id, c.user_id, c.order_id, c.state, c.starts_at, c.access_until, c.closed_at,
  c.revoked_at, c.refund_policy, o.sla_minutes, o.appeals, o.drafts, o.title, o.tariff_code, o.price_stars, o.start_mode,
  o.slot_start, o.needs_start_date, o.lang, c.staff_chat_id`

/** Locks a consultation by id (same order of locks as the admission: the consultation row only). */
export async function lockConsultationView(trx: Trx, consultationId: number) {
  const r = await sql<DeskConsultationView>`
    select ${VIEW_COLUMNS}
      from consultation c join orders o on o.id = c.order_id
      where c.id = ${consultationId}
      for update of c`.execute(trx)
  return r.rows[0]
}

export async function consultationView(q: Q, consultationId: number) {
  const r = await sql<DeskConsultationView>`
    select ${VIEW_COLUMNS} from consultation c join orders o on o.id = c.order_id where c.id = ${consultationId}`.execute(
    q,
  )
  return r.rows[0]
}
