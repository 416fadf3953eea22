import { type Kysely, sql } from 'kysely'

/**
 * The staff dashboard (src/dashboard):
 *
 * - Full-text search over the conversation: the text (or caption) of every message the desk stores (desk_message:
 *   client messages, staff answers, bot texts). One GIN index over the Russian and the English configuration
 *   together, so "миграцию" finds "миграция" and "migrations" finds "migration" in the same lookup; the query side
 *   ORs the two configurations' queries (src/dashboard/dashboard.repository.ts repeats this expression exactly, or
 *   the planner does not use the index).
 * - Ranges by date of one desk: the overview reads 7 to 90 days of payments, consultations, questions and drafts of
 *   one bot; without these it scans every row of every desk.
 *
 * Frozen in time: it never imports app code.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create index desk_message_fts on desk_message using gin ((
      to_tsvector('russian'::regconfig, coalesce(content->>'text', content->>'caption', ''))
      || to_tsvector('english'::regconfig, coalesce(content->>'text', content->>'caption', ''))
    ))`.execute(db)
  // The overview's counts read these without visiting the table (index-only scans: the columns they count are in
  // the index), which is most of what keeps 90 days of a busy desk under the target (npm run bench:dashboard).
  await sql`create index payment_bot_created on payment (bot_id, created_at) include (total_amount)`.execute(
    db,
  )
  await sql`create index payment_bot_refunded on payment (bot_id, refunded_at) include (total_amount)
    where refunded_at is not null`.execute(db)
  await sql`create index consultation_bot_created on consultation (bot_id, created_at) include (state)`.execute(
    db,
  )
  await sql`create index desk_appeal_bot_accepted on desk_appeal (bot_id, accepted_at)
    include (state, in_time, breached_at, answered_by)`.execute(db)
  await sql`create index desk_appeal_bot_answered on desk_appeal (bot_id, first_response_at)
    include (answered_by, response_business_minutes, in_time) where first_response_at is not null`.execute(db)
  // An expert's own consultations: those with a question they answered.
  await sql`create index desk_appeal_answered_by on desk_appeal (bot_id, answered_by, consultation_id)
    where answered_by is not null`.execute(db)
  await sql`create index draft_bot_created on draft (bot_id, created_at)
    include (state, requested_by, cost, input_tokens, output_tokens)`.execute(db)
  await sql`create index desk_message_refused on desk_message (bot_id, created_at)
    where direction = 'in' and state = 'refused'`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index desk_message_fts, payment_bot_created, payment_bot_refunded, consultation_bot_created,
    desk_appeal_bot_accepted, desk_appeal_bot_answered, desk_appeal_answered_by, draft_bot_created,
    desk_message_refused`.execute(db)
}
