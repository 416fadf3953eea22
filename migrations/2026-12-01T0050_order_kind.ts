import { type Kysely, sql } from 'kysely'

/**
 * What an order buys. Until now every order bought a consultation; purchases that add to something the client
 * already has (a top-up of a consultation, a plan and its upgrade) go through the same order -> invoice ->
 * pre-checkout -> successful_payment path and are told apart by this column. Its values are listed in
 * src/orders/orders.tables.ts (OrderKind); no CHECK here, so a feature that adds a kind adds no migration for it.
 *
 * Frozen in time: it never imports app code.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table orders add column kind text not null default 'consultation'`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table orders drop column kind`.execute(db)
}
