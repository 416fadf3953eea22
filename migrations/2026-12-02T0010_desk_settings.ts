import { type Kysely, sql } from 'kysely'

/**
 * Settings in PostgreSQL (issue 24): each desk's whole desk document (one `desks[]` entry of the YAML, validated by
 * the same schema) with a version that every change raises by one (src/settings). desk_terms keeps the text of
 * every terms version a desk has had, so an order's terms_version still names the text it was sold with after the
 * terms change. Frozen in time: it never imports app code.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table desk_settings (
      bot_id bigint primary key,
      version integer not null check (version > 0),
      doc jsonb not null,
      updated_at timestamptz not null default now(),
      -- Telegram user id of who changed it; null for the system (seed, import from a file).
      updated_by bigint,
      source text not null check (source in ('telegram', 'dashboard', 'import', 'seed'))
    )`.execute(db)
  await sql`
    create table desk_terms (
      bot_id bigint not null,
      -- 'desk' for the desk's terms, 'plan:<code>' for a support plan's.
      kind text not null,
      version text not null,
      text jsonb not null,
      first_at timestamptz not null default now(),
      primary key (bot_id, kind, version)
    )`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table desk_terms`.execute(db)
  await sql`drop table desk_settings`.execute(db)
}
