import { type Kysely, sql } from 'kysely'

/**
 * Ratings of closed consultations (src/consultations/ratings.ts): one per consultation (the primary key), a score
 * of 1 to 5 and an optional comment, editable by the client for 7 days after the first rating. `expert_id` is the
 * staff member the rating counts for: the one who answered most of the consultation's questions when it was rated
 * (null when nobody answered). `/report` and the dashboard average by it.
 *
 * Frozen in time: it never imports app code.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table consultation_rating (
      consultation_id bigint primary key references consultation (id),
      bot_id bigint not null,
      user_id bigint not null,
      expert_id bigint,
      score smallint not null check (score between 1 and 5),
      comment text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db)
  await sql`create index consultation_rating_bot_created on consultation_rating (bot_id, created_at)
    include (score, expert_id)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table consultation_rating`.execute(db)
}
