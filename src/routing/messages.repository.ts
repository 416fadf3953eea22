import { type Insertable, type Selectable, sql } from 'kysely'
import type { Database, Db, Trx } from '../db/database'
import { metrics } from '../metrics'
import type { Direction, ItemState, RoutingTables, StoredContent } from './routing.tables'

/**
 * All Kysely code for desk_message: the message map (source <-> mirror) and, through state 'pending', each
 * consultation's ordered delivery queue per direction.
 */

export type Item = Selectable<RoutingTables['desk_message']>
type Q = Db | Trx

export async function insertItem(trx: Trx, values: Insertable<Database['desk_message']>) {
  return trx
    .insertInto('desk_message')
    .values(values)
    .onConflict((oc) => oc.columns(['bot_id', 'chat_id', 'message_id']).doNothing())
    .returning(['id'])
    .executeTakeFirst()
}

/** A bot-authored item, once per dedupe key. */
export async function insertItemOnce(trx: Trx, values: Insertable<Database['desk_message']>) {
  // A topic note of a consultation whose client used /forget (issue 26): its topic is deleted and no lane may
  // recreate it for a note (an SLA breach, a reminder): kept as withheld, never sent. The forget transaction takes
  // the client row's lock; a note committed before it is withheld there.
  if (
    values.kind === 'note' &&
    values.direction === 'in' &&
    values.consultation_id &&
    values.state === 'pending'
  ) {
    const r = await sql<{ f: boolean }>`select exists(select 1 from desk_route where consultation_id =
                ${values.consultation_id} and replaced_reason = 'forgotten') as f`.execute(trx)
    if (r.rows[0]?.f) values = { ...values, state: 'withheld' }
  }
  return trx
    .insertInto('desk_message')
    .values(values)
    .onConflict((oc) => oc.column('dedupe_key').where('dedupe_key', 'is not', null).doNothing())
    .returning(['id'])
    .executeTakeFirst()
}

export function findBySource(q: Q, botId: number, chatId: number, messageId: number) {
  return q
    .selectFrom('desk_message')
    .selectAll()
    .where('bot_id', '=', botId)
    .where('chat_id', '=', chatId)
    .where('message_id', '=', messageId)
    .executeTakeFirst()
}

export function findByMirror(q: Q, botId: number, chatId: number, messageId: number) {
  return q
    .selectFrom('desk_message')
    .selectAll()
    .where('bot_id', '=', botId)
    .where('mirror_chat_id', '=', chatId)
    .where('mirror_message_id', '=', messageId)
    .executeTakeFirst()
}

/**
 * The message in `targetChatId` that corresponds to message `repliedId` of `fromChatId`: its copy there, or the
 * original it is a copy of. So a reply keeps its reply-to in the mirror, whichever side wrote the replied message.
 */
export async function correspondingMessage(
  q: Q,
  botId: number,
  fromChatId: number,
  repliedId: number,
  targetChatId: number,
): Promise<number | undefined> {
  const r = await sql<{ id: number }>`
    select mirror_message_id as id from desk_message
      where bot_id = ${botId} and chat_id = ${fromChatId} and message_id = ${repliedId}
        and mirror_chat_id = ${targetChatId} and mirror_message_id is not null
    union all
    select message_id as id from desk_message
      where bot_id = ${botId} and mirror_chat_id = ${fromChatId} and mirror_message_id = ${repliedId}
        and chat_id = ${targetChatId}
    limit 1`.execute(q)
  return r.rows[0]?.id
}

/** The lane's queue head: pending items of one consultation and direction in admission order. */
export function pendingItems(q: Q, consultationId: number, direction: Direction, limit: number) {
  return q
    .selectFrom('desk_message')
    .selectAll()
    .where('consultation_id', '=', consultationId)
    .where('direction', '=', direction)
    .where('state', '=', 'pending')
    .orderBy('id')
    .limit(limit)
    .execute()
}

/** The pending parts of an album, and how long ago (database clock) its latest part was admitted. */
export async function pendingAlbum(q: Q, consultationId: number, mediaGroupId: string, direction: Direction) {
  const parts = await q
    .selectFrom('desk_message')
    .selectAll()
    .where('consultation_id', '=', consultationId)
    .where('direction', '=', direction)
    .where('state', '=', 'pending')
    .where('media_group_id', '=', mediaGroupId)
    .orderBy('message_id')
    .execute()
  const quiet = await sql<{ ms: number }>`
    select (extract(epoch from clock_timestamp() - max(created_at)) * 1000)::float8 as ms
      from desk_message where consultation_id = ${consultationId} and media_group_id = ${mediaGroupId}`.execute(
    q,
  )
  return { parts, quietMs: quiet.rows[0]?.ms ?? 0 }
}

/** Records a delivered copy: written right after the Telegram call, before the job can complete. */
export async function markSent(
  q: Q,
  id: number,
  mirror: { chatId: number; threadId: number | null; messageId: number | null; version: number },
): Promise<void> {
  await q
    .updateTable('desk_message')
    .set({
      state: 'sent',
      mirror_chat_id: mirror.chatId,
      mirror_thread_id: mirror.threadId,
      mirror_message_id: mirror.messageId,
      mirror_version: mirror.version,
      sent_at: sql`now()`,
      attempts: sql`attempts + 1`,
      error: null,
    })
    .where('id', '=', id)
    .execute()
  metrics.deliveries.inc({ result: 'sent' })
}

export async function markItems(q: Q, ids: number[], state: ItemState, error: string | null): Promise<void> {
  if (ids.length === 0) return
  const r = await q
    .updateTable('desk_message')
    .set({ state, error, attempts: sql`attempts + 1` })
    .where('id', 'in', ids)
    .where('state', '=', 'pending')
    .executeTakeFirst()
  metrics.deliveries.inc({ result: state }, Number(r.numUpdatedRows))
}

/**
 * Every pending item to the client, at once, while the client is marked as having blocked the bot (403): none of
 * them can be delivered. Conditional on the mark in the same statement, so items the client's return has just
 * re-queued are not parked again.
 */
export async function markPendingOutBlocked(q: Q, consultationId: number) {
  const rows = await q
    .updateTable('desk_message')
    .set({ state: 'blocked', error: 'client blocked the bot (403)' })
    .where('consultation_id', '=', consultationId)
    .where('direction', '=', 'out')
    .where('state', '=', 'pending')
    .where(({ exists, selectFrom }) =>
      exists(
        selectFrom('desk_consultation')
          .select('consultation_id')
          .where('consultation_id', '=', consultationId)
          .where('client_blocked_at', 'is not', null),
      ),
    )
    .returning(['id'])
    .execute()
  metrics.deliveries.inc({ result: 'blocked' }, rows.length)
  return rows
}

/** The client wrote again after blocking the bot: what could not be delivered is queued again. */
export async function requeueBlocked(trx: Trx, consultationId: number) {
  return trx
    .updateTable('desk_message')
    .set({ state: 'pending', error: null })
    .where('consultation_id', '=', consultationId)
    .where('direction', '=', 'out')
    .where('state', '=', 'blocked')
    .returning(['id'])
    .execute()
}

/** Delivered items whose source was edited since their mirror was made. */
export function pendingEdits(q: Q, consultationId: number, direction: Direction, limit = 50) {
  return q
    .selectFrom('desk_message')
    .selectAll()
    .where('consultation_id', '=', consultationId)
    .where('direction', '=', direction)
    .where('state', '=', 'sent')
    .where(sql<boolean>`version > mirror_version`)
    .orderBy('id')
    .limit(limit)
    .execute()
}

export async function setMirrorVersion(q: Q, id: number, version: number): Promise<void> {
  await q
    .updateTable('desk_message')
    .set({ mirror_version: sql`greatest(mirror_version, ${version})` })
    .where('id', '=', id)
    .execute()
}

/** Records an edit of the source when its text or caption really changed; returns the new version. */
export async function recordEdit(trx: Trx, id: number, content: StoredContent) {
  return trx
    .updateTable('desk_message')
    .set({ content: JSON.stringify(content), version: sql`version + 1` })
    .where('id', '=', id)
    .returning(['version', 'state', 'consultation_id', 'direction'])
    .executeTakeFirst()
}

/** Client messages copied to the topic that have not had their receipt reaction yet. */
export function unreacted(q: Q, consultationId: number, limit = 50) {
  return q
    .selectFrom('desk_message')
    .select(['id', 'chat_id', 'message_id'])
    .where('consultation_id', '=', consultationId)
    .where('direction', '=', 'in')
    .where('kind', '=', 'copy')
    .where('state', '=', 'sent')
    .where('reacted', '=', false)
    .orderBy('id')
    .limit(limit)
    .execute()
}

export async function markReacted(q: Q, ids: number[]): Promise<void> {
  if (ids.length === 0) return
  await q.updateTable('desk_message').set({ reacted: true }).where('id', 'in', ids).execute()
}

/** Whether the lane of one direction has anything to do (pending items, or mirrors behind an edit). */
export async function laneHasItems(q: Q, consultationId: number, direction: Direction): Promise<boolean> {
  const r = await sql<{ yes: boolean }>`
    select exists (
      select 1 from desk_message
        where consultation_id = ${consultationId} and direction = ${direction} and state = 'pending'
    ) or exists (
      select 1 from desk_message
        where consultation_id = ${consultationId} and direction = ${direction} and state = 'sent'
          and version > mirror_version
    ) as yes`.execute(q)
  return r.rows[0]?.yes === true
}

/** The conversation as stored, oldest first (accepted and delivered items, no refusals). */
export function conversation(q: Q, consultationId: number) {
  return q
    .selectFrom('desk_message')
    .select([
      'id',
      'direction',
      'kind',
      'content_type',
      'content',
      'state',
      'from_id',
      'accepted_at',
      'created_at',
    ])
    .where('consultation_id', '=', consultationId)
    .where('state', '<>', 'refused')
    .orderBy('id')
    .execute()
}
