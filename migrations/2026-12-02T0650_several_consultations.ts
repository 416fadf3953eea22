import { type Kysely, sql } from 'kysely'

/**
 * Several consultations at once (issue 26): where a client's message goes when they have more than one live.
 * - consultation_client_message: the bot's own messages in a client's chat and the consultation each belongs to (a
 *   receipt, an activation notice, a topic's welcome); a reply to one of them goes to that consultation. Answers
 *   copied to the client are in desk_message already (mirror_chat_id, mirror_message_id).
 * - client_route: the consultation the client chose for messages that name none (no reply, no private topic), and
 *   whether a choice is being asked (asked once, not once per message).
 * - held_message: a message that came while the choice was open, kept whole (the update's message) until the
 *   client chooses, then admitted to the chosen consultation once (desk_message's unique key) and deleted.
 * - client_topic: the consultation's topic in the client's private chat (Bot API 9.3+ private-chat topics), or why
 *   there is none (off: the bot has no topics; broken: Telegram refused it, the plain chat is used).
 *
 * desk_admit gains two arguments (the private topic, a target) and a result column: its old signature is dropped here
 * and src/consultations/sql/desk_admit.sql, changed with it, creates the new one after the migrations.
 *
 * Frozen in time: it never imports app code.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`drop function if exists desk_admit(bigint, bigint, bigint, bigint, text, bigint, text, jsonb, boolean)`.execute(
    db,
  )
  await sql`create table consultation_client_message (
    bot_id bigint not null,
    chat_id bigint not null,
    message_id bigint not null,
    consultation_id bigint not null references consultation (id) on delete cascade,
    primary key (bot_id, chat_id, message_id)
  )`.execute(db)
  await sql`create index consultation_client_message_consultation
              on consultation_client_message (consultation_id)`.execute(db)
  await sql`create table client_route (
    bot_id bigint not null,
    user_id bigint not null,
    consultation_id bigint references consultation (id) on delete set null,
    asking boolean not null default false,
    updated_at timestamptz not null default now(),
    primary key (bot_id, user_id)
  )`.execute(db)
  await sql`create table held_message (
    bot_id bigint not null,
    chat_id bigint not null,
    message_id bigint not null,
    user_id bigint not null,
    lang text not null,
    message jsonb not null,
    created_at timestamptz not null default now(),
    primary key (bot_id, chat_id, message_id)
  )`.execute(db)
  await sql`create index held_message_user on held_message (bot_id, user_id, message_id)`.execute(db)
  await sql`create table client_topic (
    consultation_id bigint primary key references consultation (id) on delete cascade,
    bot_id bigint not null,
    user_id bigint not null,
    thread_id bigint,
    state text not null default 'wanted' check (state in ('wanted', 'open', 'broken', 'off')),
    updated_at timestamptz not null default now()
  )`.execute(db)
  await sql`create unique index client_topic_thread on client_topic (bot_id, user_id, thread_id)
              where thread_id is not null`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table client_topic, held_message, client_route, consultation_client_message`.execute(db)
}
