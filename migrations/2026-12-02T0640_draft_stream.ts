import { type Kysely, sql } from 'kysely'

/**
 * Streaming AI drafts, their Stop, and the hand-off summary (issue 25, src/drafting/README.md).
 *
 * - stop_requested_by / stop_requested_at: a staff member pressed Stop; the job running the provider call (in any
 *   process) polls the flag during the stream and aborts the call.
 * - stream_chat_id / stream_message_id: the requesting expert's private chat the draft is streamed into, and the
 *   message there carrying the Stop button (null: not streamed).
 * - source 'handoff': a summary of the consultation for its new owner after a hand-over (never sent to the client);
 *   state 'delivered': that summary was handed to the new owner in private.
 *
 * Frozen in time: it never imports app code.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table draft
    add column stop_requested_by bigint,
    add column stop_requested_at timestamptz,
    add column stream_chat_id bigint,
    add column stream_message_id bigint`.execute(db)
  await sql`alter table draft drop constraint draft_source_check`.execute(db)
  await sql`alter table draft add constraint draft_source_check
    check (source in ('command', 'button', 'handoff'))`.execute(db)
  await sql`alter table draft drop constraint draft_state_check`.execute(db)
  await sql`alter table draft add constraint draft_state_check
    check (state in ('refused', 'queued', 'calling', 'ready', 'editing', 'sent', 'discarded', 'failed', 'unknown',
      'delivered'))`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table draft drop constraint draft_state_check`.execute(db)
  await sql`alter table draft add constraint draft_state_check
    check (state in ('refused', 'queued', 'calling', 'ready', 'editing', 'sent', 'discarded', 'failed',
      'unknown'))`.execute(db)
  await sql`alter table draft drop constraint draft_source_check`.execute(db)
  await sql`alter table draft add constraint draft_source_check check (source in ('command', 'button'))`.execute(
    db,
  )
  await sql`alter table draft drop column stop_requested_by, drop column stop_requested_at,
    drop column stream_chat_id, drop column stream_message_id`.execute(db)
}
