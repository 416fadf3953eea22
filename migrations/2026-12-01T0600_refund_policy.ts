import { type Kysely, sql } from 'kysely'

/**
 * The refund policy becomes a tariff's setting (config `tariffs[].refundPolicy`) instead of one constant: the order
 * keeps it as part of its tariff snapshot, so a refund applies what the client read on the card before paying.
 * Orders made before this migration get 'deliver', the constant they were sold under.
 *
 * Frozen in time: it never imports app code.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table orders add column refund_policy text not null default 'deliver'
    check (refund_policy in ('deliver', 'stop'))`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table orders drop column refund_policy`.execute(db)
}
