import { type Kysely, sql } from 'kysely'

/**
 * Top-ups inside a consultation (src/payments/topup.ts): an order of kind 'topup' buys more questions or more
 * hours for a consultation the client already has. It names that consultation here, with what it adds (questions
 * or hours; its appeals/window columns keep the tariff's snapshot, as they must stay positive); the units are
 * granted in the transaction that records the payment.
 *
 * Frozen in time: it never imports app code.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table orders add column topup_consultation_id bigint references consultation (id),
    add column topup_questions integer not null default 0 check (topup_questions >= 0),
    add column topup_hours integer not null default 0 check (topup_hours >= 0)`.execute(db)
  await sql`alter table orders add constraint orders_topup_names_consultation
    check ((kind = 'topup') = (topup_consultation_id is not null))`.execute(db)
  await sql`create index orders_topup_consultation on orders (topup_consultation_id)
    where topup_consultation_id is not null`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table orders drop column topup_consultation_id, drop column topup_questions,
    drop column topup_hours`.execute(db)
}
