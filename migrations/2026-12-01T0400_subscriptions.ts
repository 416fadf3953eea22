import { type Kysely, sql } from 'kysely'

/**
 * Support plans paid by a Stars subscription (issue 12, src/subscriptions):
 *
 * - subscription: one per paid plan purchase (an order of kind 'subscription'), with the consultation that carries
 *   its questions, its forum topic and its access window across periods. Keyed by the order: a redelivered first
 *   payment finds it.
 * - subscription_period: one per charge (the first payment and each renewal), UNIQUE(bot_id, charge_id): a
 *   redelivered renewal creates nothing. Each period has its own ledger account (scope consultation, subject the
 *   consultation id, unit appeals, period [period_start, period_end)).
 * - subscription_upgrade: a paid one-off upgrade of the current period, once per charge.
 *
 * Frozen in time: it never imports app code.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table subscription (
      id bigserial primary key,
      bot_id bigint not null,
      user_id bigint not null,
      order_id bigint not null unique references orders(id),
      consultation_id bigint not null unique references consultation(id),
      plan_code text not null,
      next_plan_code text,
      terms_version text not null,
      state text not null default 'active',
      renewal_cancelled boolean not null default false,
      first_charge_id text not null,
      last_charge_id text not null,
      expires_at timestamptz,
      lapsed_at timestamptz,
      refunded_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db)
  await sql`create index subscription_user on subscription (bot_id, user_id)`.execute(db)
  await sql`
    create table subscription_period (
      id bigserial primary key,
      subscription_id bigint not null references subscription(id),
      bot_id bigint not null,
      number integer not null,
      charge_id text not null,
      payment_id bigint references payment(id),
      plan_code text not null,
      period_start timestamptz not null,
      period_end timestamptz not null,
      account_id bigint not null references ledger_account(id),
      granted integer not null,
      carried integer not null default 0,
      created_at timestamptz not null default now(),
      unique (subscription_id, number),
      unique (bot_id, charge_id)
    )`.execute(db)
  await sql`
    create table subscription_upgrade (
      id bigserial primary key,
      subscription_id bigint not null references subscription(id),
      bot_id bigint not null,
      period_id bigint not null references subscription_period(id),
      from_plan text not null,
      to_plan text not null,
      charge_id text not null,
      d_granted integer not null,
      created_at timestamptz not null default now(),
      unique (bot_id, charge_id)
    )`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table subscription_upgrade`.execute(db)
  await sql`drop table subscription_period`.execute(db)
  await sql`drop table subscription`.execute(db)
}
