import { type Kysely, sql } from 'kysely'

/**
 * The waitlist keeps its entries to the end (src/orders/waitlist.ts): a client leaves (`left`), buys the slot
 * (`bought`, closed in the payment's transaction), or is told of a freed place that is then held for them on an
 * order of their own (`notified`, with `order_id` and `hold_until`) until they buy it or the hold ends (`lapsed`,
 * the place passing to the next in line). One open entry (waiting or notified) per client and slot. Entries told
 * before this change (first come, first served, no place held) are closed as lapsed.
 *
 * Frozen in time: it never imports app code.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table waitlist_entry
    add column order_id bigint references orders (id),
    add column hold_until timestamptz,
    add column closed_at timestamptz`.execute(db)
  await sql`update waitlist_entry set state = 'lapsed', closed_at = now() where state = 'notified'`.execute(
    db,
  )
  await sql`alter table waitlist_entry drop constraint waitlist_entry_state_check`.execute(db)
  await sql`alter table waitlist_entry add constraint waitlist_entry_state_check
    check (state in ('waiting', 'notified', 'bought', 'left', 'lapsed'))`.execute(db)
  await sql`drop index waitlist_entry_one_waiting`.execute(db)
  await sql`create unique index waitlist_entry_one_open on waitlist_entry (bot_id, user_id, capacity_key)
    where state in ('waiting', 'notified')`.execute(db)
  await sql`create index waitlist_entry_user on waitlist_entry (bot_id, user_id) where state in ('waiting', 'notified')`.execute(
    db,
  )
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index waitlist_entry_user`.execute(db)
  await sql`drop index waitlist_entry_one_open`.execute(db)
  await sql`update waitlist_entry set state = 'notified' where state <> 'waiting'`.execute(db)
  await sql`alter table waitlist_entry drop constraint waitlist_entry_state_check`.execute(db)
  await sql`alter table waitlist_entry add constraint waitlist_entry_state_check
    check (state in ('waiting', 'notified'))`.execute(db)
  await sql`create unique index waitlist_entry_one_waiting on waitlist_entry (bot_id, user_id, capacity_key)
    where state = 'waiting'`.execute(db)
  await sql`alter table waitlist_entry drop column order_id, drop column hold_until, drop column closed_at`.execute(
    db,
  )
}
