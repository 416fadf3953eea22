import { type Kysely, sql } from 'kysely'

/**
 * Payments, refunds and the /paysupport dispute desk on top of the orders schema (2026-11-30T0200), plus the
 * conversations plugin's storage. Frozen in time: it never imports app code.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table orders
      -- The capacity account the order's start takes from: 'day:<tariff>:<YYYY-MM-DD>' or 'slot:<tariff>:<epoch ms>'.
      add column capacity_key text,
      add column paid_at timestamptz,
      -- on_request: the client may press Start until then.
      add column start_by timestamptz,
      add column cancel_reason text
  `.execute(db)
  await sql`create index orders_created_idx on orders (created_at) where state = 'created'`.execute(db)

  // A payment whose payload names no order of this desk is still recorded (Telegram took the Stars): 'unmatched',
  // order_id null, queued for an admin like an overpayment.
  await sql`alter table payment alter column order_id drop not null`.execute(db)
  await sql`alter table payment drop constraint payment_kind_check`.execute(db)
  await sql`
    alter table payment
      add constraint payment_kind_check check (kind in ('payment', 'overpayment', 'unmatched')),
      add constraint payment_order_check check ((kind = 'unmatched') = (order_id is null)),
      add column invoice_payload text not null default '',
      -- A refund call in flight: set by the admin action that calls refundStarPayment, so a second press waits for
      -- the first instead of calling Telegram twice. Cleared when the call fails; stale after a minute (crash).
      add column refund_started_at timestamptz,
      add column refund_error text,
      -- admin | telegram (a refunded_payment message: refunded elsewhere) | dispute
      add column refund_source text
  `.execute(db)
  await sql`create index payment_user_idx on payment (bot_id, user_id, created_at desc)`.execute(db)
  await sql`create index payment_queue_idx on payment (bot_id) where kind <> 'payment' and refunded_at is null`.execute(
    db,
  )

  // What a refund does to questions already accepted: 'deliver' (answers still delivered) or 'stop'.
  await sql`alter table consultation add column refund_policy text`.execute(db)

  await sql`
    create table dispute (
      -- The ticket number the client sees.
      id bigint generated always as identity primary key,
      bot_id bigint not null,
      user_id bigint not null,
      payment_id bigint references payment (id),
      telegram_payment_charge_id text,
      order_id bigint references orders (id),
      lang text not null,
      reason text not null,
      state text not null default 'open' check (state in ('open', 'refunded', 'declined', 'closed')),
      -- The staff topic; null until the topic job has created it.
      thread_id bigint,
      -- An admin pressed "Decline": their next message in the topic is the reason.
      decline_pending_by bigint,
      resolution text,
      resolved_by bigint,
      resolved_at timestamptz,
      -- What the client was promised: an answer by then (business time).
      reply_by timestamptz not null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db)
  // One open ticket per client and payment (null payment = "not in the list"): a replayed conversation step or a
  // second /paysupport finds the open one instead of opening another.
  await sql`create unique index dispute_open_idx on dispute (bot_id, user_id, coalesce(payment_id, 0)) where state = 'open'`.execute(
    db,
  )
  await sql`create unique index dispute_thread_idx on dispute (bot_id, thread_id) where thread_id is not null`.execute(
    db,
  )

  // @grammyjs/conversations replay state per private chat; nothing of a conversation lives in memory.
  await sql`
    create table conversation_state (
      bot_id bigint not null,
      chat_id bigint not null,
      data jsonb not null,
      updated_at timestamptz not null default now(),
      primary key (bot_id, chat_id)
    )`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table conversation_state, dispute`.execute(db)
  await sql`alter table consultation drop column refund_policy`.execute(db)
  await sql`delete from payment where kind = 'unmatched'`.execute(db)
  await sql`
    alter table payment
      drop constraint payment_order_check,
      drop constraint payment_kind_check,
      drop column invoice_payload,
      drop column refund_started_at,
      drop column refund_error,
      drop column refund_source`.execute(db)
  await sql`alter table payment add constraint payment_kind_check check (kind in ('payment', 'overpayment'))`.execute(
    db,
  )
  await sql`alter table payment alter column order_id set not null`.execute(db)
  await sql`alter table orders drop column capacity_key, drop column paid_at, drop column start_by, drop column cancel_reason`.execute(
    db,
  )
}
