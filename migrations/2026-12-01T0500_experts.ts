import { type Kysely, sql } from 'kysely'

/**
 * Experts (src/experts): who owns a consultation and since when, an expert's availability and name, alerts muted
 * per consultation, and the desk's canned replies added by admins.
 *
 * - expert_assignment: the history of a consultation's owners; the current owner is the row without ended_at (at
 *   most one per consultation: a unique partial index, so two hand-overs at once cannot both win).
 * - expert_profile: per desk and person: the name shown on cards, /away, and when they were last given a
 *   consultation (the round robin among equally loaded experts).
 * - expert_mute: an expert's /mute of a consultation's private alerts.
 * - desk_snippet: snippets added with /snippet add (config snippets are not stored).
 *
 * Frozen in time: it never imports app code.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table expert_assignment (
      id bigint generated always as identity primary key,
      bot_id bigint not null,
      consultation_id bigint not null references consultation (id),
      expert_id bigint not null,
      -- Who handed it over (null: the activation chose).
      assigned_by bigint,
      reason text not null check (reason in ('tariff', 'least_loaded', 'handover')),
      started_at timestamptz not null default now(),
      ended_at timestamptz
    )`.execute(db)
  await sql`create unique index expert_assignment_current on expert_assignment (consultation_id)
    where ended_at is null`.execute(db)
  await sql`create index expert_assignment_owner on expert_assignment (bot_id, expert_id)
    include (consultation_id) where ended_at is null`.execute(db)
  await sql`
    create table expert_profile (
      bot_id bigint not null,
      user_id bigint not null,
      name text,
      away_since timestamptz,
      last_assigned_at timestamptz,
      updated_at timestamptz not null default now(),
      primary key (bot_id, user_id)
    )`.execute(db)
  await sql`
    create table expert_mute (
      consultation_id bigint not null references consultation (id),
      expert_id bigint not null,
      created_at timestamptz not null default now(),
      primary key (consultation_id, expert_id)
    )`.execute(db)
  await sql`
    create table desk_snippet (
      bot_id bigint not null,
      name text not null,
      text text not null,
      created_by bigint not null,
      created_at timestamptz not null default now(),
      primary key (bot_id, name)
    )`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table desk_snippet, expert_mute, expert_profile, expert_assignment`.execute(db)
}
