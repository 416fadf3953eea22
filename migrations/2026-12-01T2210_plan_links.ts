import { type Kysely, sql } from 'kysely'

/**
 * Support plans: a Star subscription's price is fixed when its link is made (issue 22), so
 *
 * - subscription_link: one per plan link (an order of kind 'subscription'), written with the order when the link is
 *   asked for: the price the link charges at every renewal and the plan as it was sold (its snapshot, JSON), and,
 *   for a change of plan, the subscription it replaces and the end of its paid time shown in the offer (the new plan
 *   starts there). A renewal grants what this row says, never the config's
 *   current numbers.
 * - subscription.price_stars: the subscription's own price (its link's), compared with every renewal's amount;
 *   existing rows take their order's price (the link was made at that price).
 * - subscription.replaced_by / replaces: a change of plan is a new subscription on the same consultation (one topic,
 *   consecutive periods), so consultation_id is no longer unique.
 *
 * Frozen in time: it never imports app code.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table subscription_link (
      order_id bigint primary key references orders(id),
      bot_id bigint not null,
      plan_code text not null,
      price_stars integer not null check (price_stars > 0),
      plan jsonb not null,
      replaces_subscription_id bigint references subscription(id),
      paid_until timestamptz,
      created_at timestamptz not null default now()
    )`.execute(db)
  await sql`alter table subscription add column price_stars integer`.execute(db)
  await sql`update subscription s set price_stars = o.price_stars from orders o where o.id = s.order_id`.execute(
    db,
  )
  await sql`alter table subscription alter column price_stars set not null`.execute(db)
  await sql`alter table subscription add column replaces bigint references subscription(id)`.execute(db)
  await sql`alter table subscription add column replaced_by bigint references subscription(id)`.execute(db)
  await sql`alter table subscription add column replaced_at timestamptz`.execute(db)
  await sql`alter table subscription drop constraint subscription_consultation_id_key`.execute(db)
  await sql`create index subscription_consultation on subscription (consultation_id)`.execute(db)
  await sql`create unique index subscription_replaces on subscription (replaces) where replaces is not null`.execute(
    db,
  )
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index subscription_replaces`.execute(db)
  await sql`drop index subscription_consultation`.execute(db)
  await sql`alter table subscription add constraint subscription_consultation_id_key unique (consultation_id)`.execute(
    db,
  )
  await sql`alter table subscription drop column replaced_at`.execute(db)
  await sql`alter table subscription drop column replaced_by`.execute(db)
  await sql`alter table subscription drop column replaces`.execute(db)
  await sql`alter table subscription drop column price_stars`.execute(db)
  await sql`drop table subscription_link`.execute(db)
}
