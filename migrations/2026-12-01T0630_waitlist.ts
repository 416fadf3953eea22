import { type Kysely, sql } from 'kysely'

/**
 * A waitlist for a full start (src/orders/waitlist.ts): a client joins for a slot whose places are all taken and
 * is told, first come first served, when a place of it frees up (a start moved away or refunded). One waiting entry
 * per client and slot.
 *
 * Frozen in time: it never imports app code.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table waitlist_entry (
      id bigint generated always as identity primary key,
      bot_id bigint not null,
      user_id bigint not null,
      tariff_code text not null,
      capacity_key text not null,
      slot_start timestamptz not null,
      lang text not null,
      state text not null default 'waiting' check (state in ('waiting', 'notified')),
      created_at timestamptz not null default now(),
      notified_at timestamptz
    )`.execute(db)
  await sql`create unique index waitlist_entry_one_waiting on waitlist_entry (bot_id, user_id, capacity_key)
    where state = 'waiting'`.execute(db)
  await sql`create index waitlist_entry_queue on waitlist_entry (bot_id, capacity_key, id)
    where state = 'waiting'`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table waitlist_entry`.execute(db)
}
