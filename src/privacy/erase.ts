import { sql } from 'kysely'
import type { Trx } from '../db/database'
import { BOSS_SCHEMA } from '../jobs/jobs'

/**
 * The erasures of /forget (issue 26) that are not the client row and the message lane: the client's words and
 * names wherever else the desk stored them, all in the caller's transaction. Rows stay (the rating's score, the audit
 * trail, the jobs' history); only their personal part goes.
 */

/** Parameters of a notification that carry a person's words or name (rendered into the message when it is sent). */
const WORDS = ['comment', 'reason', 'text', 'client', 'name', 'username']

export async function eraseElsewhere(
  trx: Trx,
  s: { botId: number; userId: number; consultationIds: number[]; disputeIds: number[] },
): Promise<void> {
  const { botId, userId } = s
  const ids = s.consultationIds.map(String)
  const disputes = s.disputeIds.map(String)
  // The rating stays (it counts for the expert); the client's comment on it goes.
  await sql`update consultation_rating set comment = null
              where bot_id = ${botId} and user_id = ${userId} and comment is not null`.execute(trx)
  // Audit rows stay; their personal part goes: a dispute follow-up's text, a resolution's reason, a staff /note
  // on one of their consultations (it may quote them).
  await sql`update audit_log set details = (details - ${WORDS}::text[]) || '{"erased": true}'::jsonb
              where bot_id = ${botId} and details ?| ${WORDS}::text[]
                and ((subject_type = 'dispute' and subject_id = any(${disputes}::text[]))
                  or (subject_type = 'consultation' and subject_id = any(${ids}::text[])))`.execute(trx)
  // pg-boss keeps job payloads (queued, done, archived): the notifications about them or to them lose their words
  // (a low rating's comment, a dispute's reason), a dispute follow-up's copy for the staff loses its text.
  for (const table of ['job', 'archive']) {
    const t = sql.table(`${BOSS_SCHEMA}.${table}`)
    await sql`update ${t} set data = jsonb_set(data, '{params}', (data->'params') - ${WORDS}::text[])
                where name in ('tg.notify', 'tg.notify.group') and jsonb_typeof(data->'params') = 'object'
                  and (data->'params') ?| ${WORDS}::text[] and (data->>'botId')::bigint = ${botId}
                  and (data->>'chatId' = ${String(userId)}
                    or data->'params'->>'consultation' = any(${ids}::text[])
                    or data->'params'->>'ticket' = any(${disputes}::text[]))`.execute(trx)
    if (disputes.length)
      await sql`update ${t} set data = data || '{"text": ""}'::jsonb
                  where name = 'disputes.note' and data->>'disputeId' = any(${disputes}::text[])
                    and coalesce(data->>'text', '') <> ''`.execute(trx)
  }
  // Stored updates of their private chat still pending - the "yes, forget me" press being handled is one: they
  // stay readable for their handler, without the names (first, last, username) in their `from` and `chat`.
  await sql`update inbox_update
              set payload = regexp_replace(payload::text,
                '"(first_name|last_name|username)":"(\\\\.|[^"\\\\])*"', '"\\1":"—"', 'g')::json
              where bot_id = ${botId} and chat_key = any(${[String(userId), `u${userId}`]}::text[])
                and state = 'pending'`.execute(trx)
}
