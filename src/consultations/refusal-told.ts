import { sql } from 'kysely'
import type { Trx } from '../db/database'
import type { Deps } from '../deps'
import { notify } from '../telegram/notify'

/**
 * A refused client message is answered once per chat and refusal every few minutes, not once per message: a stranger
 * writing a hundred messages to a desk where they have no consultation gets one "you have no paid consultation",
 * and so costs Telegram one send, not a hundred (each would also queue a notification job).
 *
 * The decision is one upsert in the refusal's own transaction (PostgreSQL, not memory): the row of (bot, chat,
 * topic) is inserted, or its told_at moved to now when the last telling is at least REFUSAL_QUIET_SECONDS old; a row
 * returned means "tell". Two refusals racing for one chat serialize on the row: the second sees the first's told_at
 * once it commits and tells nothing. A refusal rolled back (its transaction failed) leaves no row behind.
 *
 * The topic is the refusal's reason and the consultation it is about, so a different reason (the window closed
 * after "not started yet") or another consultation is told at once. Rows are pruned a day after their last telling
 * (src/jobs/retention.ts).
 */
export const REFUSAL_QUIET_SECONDS = 5 * 60

export function refusalTopic(reason: string, consultationId: number | null): string {
  return `${reason}:${consultationId ?? '-'}`
}

/** True when this refusal is to be told (first of its kind in the quiet period); records the telling. */
export async function claimRefusalTelling(
  trx: Trx,
  r: { botId: number; chatId: number; topic: string },
  quietSeconds = REFUSAL_QUIET_SECONDS,
): Promise<boolean> {
  const q = await sql<{ told: number }>`
    insert into refusal_told as t (bot_id, chat_id, topic, told_at)
      values (${r.botId}, ${r.chatId}, ${r.topic}, now())
      on conflict (bot_id, chat_id, topic) do update set told_at = excluded.told_at
        where t.told_at <= excluded.told_at - make_interval(secs => ${quietSeconds})
      returning 1 as told`.execute(trx)
  return q.rows.length > 0
}

/**
 * A command nobody handles, in a client's private chat: "unknown command" once per chat in the quiet period (a
 * stranger repeating /foo a hundred times costs one send), in the transaction that records the telling. The params
 * are the answer's (the asker's commands, the nearest one: src/bot/commands.ts).
 */
export async function tellUnknownCommand(
  deps: Pick<Deps, 'db' | 'jobs'>,
  m: { botId: number; chatId: number; messageId: number; lang: string; params: Record<string, string> },
): Promise<boolean> {
  return deps.jobs.transaction(deps.db, async (trx, outbox) => {
    const tell = await claimRefusalTelling(trx, {
      botId: m.botId,
      chatId: m.chatId,
      topic: refusalTopic('unknown_command', null),
    })
    if (!tell) return false
    await notify(outbox, {
      botId: m.botId,
      chatId: m.chatId,
      lang: m.lang,
      key: 'desk-unknown-command',
      params: m.params,
      dedupeKey: `desk:unknown-command:${m.botId}:${m.chatId}:${m.messageId}`,
    })
    return true
  })
}
