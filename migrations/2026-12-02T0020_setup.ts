import { type Kysely, sql } from 'kysely'

/**
 * Setting a desk up from Telegram (issue 24, src/setup): the owner's one-time claim code, staff invites with their
 * uses, and what the bot last saw of each group it was added to (rights, forum, present).
 *
 * Frozen in time: it never imports app code.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table desk_claim (
    code text primary key check (code ~ '^[A-Za-z0-9_-]{1,64}$'),
    bot_id bigint not null,
    state text not null default 'open' check (state in ('open', 'used', 'expired')),
    created_at timestamptz not null default now(),
    expires_at timestamptz not null,
    used_by bigint,
    used_at timestamptz,
    check ((state = 'used') = (used_by is not null))
  )`.execute(db)
  // At most one open claim per desk: two processes starting at once print the same code.
  await sql`create unique index desk_claim_open on desk_claim (bot_id) where state = 'open'`.execute(db)

  await sql`create table staff_invite (
    code text primary key check (code ~ '^[A-Za-z0-9_-]{1,64}$'),
    bot_id bigint not null,
    role text not null check (role in ('expert', 'admin')),
    uses_total integer not null check (uses_total between 1 and 100),
    uses_left integer not null check (uses_left >= 0 and uses_left <= uses_total),
    created_by bigint not null,
    created_lang text not null,
    created_at timestamptz not null default now(),
    expires_at timestamptz not null
  )`.execute(db)
  await sql`create table staff_invite_use (
    code text not null references staff_invite (code),
    user_id bigint not null,
    used_at timestamptz not null default now(),
    primary key (code, user_id)
  )`.execute(db)

  await sql`create table staff_group_state (
    bot_id bigint not null,
    chat_id bigint not null,
    title text not null,
    present boolean not null,
    problems text[] not null default '{}',
    added_by bigint,
    revision integer not null default 1,
    checked_at timestamptz not null default now(),
    primary key (bot_id, chat_id)
  )`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table staff_group_state`.execute(db)
  await sql`drop table staff_invite_use`.execute(db)
  await sql`drop table staff_invite`.execute(db)
  await sql`drop table desk_claim`.execute(db)
}
