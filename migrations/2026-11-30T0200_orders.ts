import { type Kysely, sql } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table orders (
      id bigint generated always as identity primary key,
      bot_id bigint not null,
      user_id bigint not null,
      -- The tariff as it was when the order was created; a later config change never alters an order.
      tariff_code text not null,
      title text not null,
      price_stars integer not null check (price_stars > 0),
      window_minutes integer not null check (window_minutes > 0),
      appeals integer not null check (appeals > 0),
      drafts integer not null default 0 check (drafts >= 0),
      sla_minutes integer not null check (sla_minutes > 0),
      start_mode text not null check (start_mode in ('immediate', 'scheduled', 'on_request')),
      start_within_days integer,
      breach_policy jsonb not null default '{"kind":"none"}',
      terms_version text not null,
      lang text not null,
      -- scheduled: the chosen slot; immediate/on_request: null.
      slot_start timestamptz,
      state text not null default 'created'
        check (state in ('created', 'reserved', 'paid_waiting', 'active', 'closed', 'cancelled', 'refunded')),
      -- The capacity hold taken at pre-checkout (a ledger reservation) and when it lapses.
      hold_request_id text,
      hold_expires_at timestamptz,
      -- Paid after the hold lapsed and no capacity was left: waits for a start date chosen with the client.
      needs_start_date boolean not null default false,
      invoice_message_id bigint,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db)
  await sql`create index orders_user_idx on orders (bot_id, user_id, created_at desc)`.execute(db)
  await sql`create index orders_hold_idx on orders (hold_expires_at) where state = 'reserved'`.execute(db)

  await sql`
    create table payment (
      id bigint generated always as identity primary key,
      bot_id bigint not null,
      order_id bigint not null references orders (id),
      user_id bigint not null,
      telegram_payment_charge_id text not null,
      provider_payment_charge_id text,
      currency text not null,
      total_amount integer not null,
      -- overpayment: a second, different payment for an order that was already paid; queued for refund.
      kind text not null check (kind in ('payment', 'overpayment')),
      refunded_at timestamptz,
      refunded_by bigint,
      created_at timestamptz not null default now(),
      unique (bot_id, telegram_payment_charge_id)
    )`.execute(db)
  await sql`create index payment_order_idx on payment (order_id)`.execute(db)

  await sql`
    create table consultation (
      id bigint generated always as identity primary key,
      bot_id bigint not null,
      order_id bigint not null unique references orders (id),
      user_id bigint not null,
      state text not null default 'waiting' check (state in ('waiting', 'active', 'closed', 'revoked')),
      -- The access window: a message is accepted iff starts_at <= now() < access_until (database clock).
      starts_at timestamptz,
      access_until timestamptz,
      check (access_until is null or access_until > starts_at),
      revoked_at timestamptz,
      closed_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db)
  await sql`create index consultation_user_idx on consultation (bot_id, user_id, created_at desc)`.execute(db)

  await sql`
    create table audit_log (
      id bigint generated always as identity primary key,
      bot_id bigint not null,
      -- Telegram user id of the person who acted; null for the system.
      actor_id bigint,
      action text not null,
      subject_type text not null,
      subject_id text not null,
      details jsonb not null default '{}',
      at timestamptz not null default now()
    )`.execute(db)
  await sql`create index audit_subject_idx on audit_log (subject_type, subject_id)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table audit_log, consultation, payment, orders`.execute(db)
}
