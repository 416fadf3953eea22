import { type Insertable, type Selectable, sql, type Updateable } from 'kysely'
import type { Database, Db, Trx } from '../db/database'
import type { ConversationItem } from './prompt'

/**
 * All of drafting's SQL: the draft rows, the edits taken from the topic, and the reads the prompt and the
 * admission need from the consultation (its tariff snapshot and its own messages: never another consultation's).
 */

export type Draft = Selectable<Database['draft']>
type Q = Db | Trx

export async function findDraft(q: Q, id: number): Promise<Draft | undefined> {
  return q.selectFrom('draft').selectAll().where('id', '=', id).executeTakeFirst()
}

export async function findDraftByRequest(q: Q, requestId: string): Promise<Draft | undefined> {
  return q.selectFrom('draft').selectAll().where('request_id', '=', requestId).executeTakeFirst()
}

/** Locks a draft row: every change of a draft's state happens under it (send, discard, edit, settle, reconcile). */
export async function lockDraft(trx: Trx, id: number): Promise<Draft | undefined> {
  return trx.selectFrom('draft').selectAll().where('id', '=', id).forUpdate().executeTakeFirst()
}

/** Inserts the draft once per request id; undefined when a concurrent or earlier delivery inserted it first. */
export async function insertDraft(
  trx: Trx,
  values: Insertable<Database['draft']>,
): Promise<Draft | undefined> {
  return trx
    .insertInto('draft')
    .values(values)
    .onConflict((oc) => oc.column('request_id').doNothing())
    .returningAll()
    .executeTakeFirst()
}

export async function updateDraft(q: Q, id: number, set: Updateable<Database['draft']>): Promise<void> {
  await q
    .updateTable('draft')
    .set({ ...set, updated_at: sql`now()` })
    .where('id', '=', id)
    .execute()
}

/** queued -> calling, only from queued: the one step after which the provider may have the request. */
export async function claimForCall(trx: Trx, id: number): Promise<boolean> {
  const r = await trx
    .updateTable('draft')
    .set({ state: 'calling', updated_at: sql`now()` })
    .where('id', '=', id)
    .where('state', '=', 'queued')
    .returning('id')
    .executeTakeFirst()
  return r !== undefined
}

/** The draft this staff member is editing in this consultation (locked), if the edit was started recently. */
export async function lockEditingDraft(
  trx: Trx,
  consultationId: number,
  staffId: number,
  withinMinutes: number,
): Promise<Draft | undefined> {
  return trx
    .selectFrom('draft')
    .selectAll()
    .where('consultation_id', '=', consultationId)
    .where('state', '=', 'editing')
    .where('editing_by', '=', staffId)
    .where('editing_since', '>', sql<Date>`now() - make_interval(mins => ${withinMinutes})`)
    .orderBy('editing_since', 'desc')
    .limit(1)
    .forUpdate()
    .executeTakeFirst()
}

export async function findEdit(q: Q, botId: number, chatId: number, messageId: number) {
  return q
    .selectFrom('draft_edit')
    .selectAll()
    .where('bot_id', '=', botId)
    .where('chat_id', '=', chatId)
    .where('message_id', '=', messageId)
    .executeTakeFirst()
}

export async function insertEdit(
  trx: Trx,
  e: { botId: number; chatId: number; messageId: number; draftId: number; version: number },
): Promise<boolean> {
  const r = await trx
    .insertInto('draft_edit')
    .values({
      bot_id: e.botId,
      chat_id: e.chatId,
      message_id: e.messageId,
      draft_id: e.draftId,
      version: e.version,
    })
    .onConflict((oc) => oc.columns(['bot_id', 'chat_id', 'message_id']).doNothing())
    .returning('draft_id')
    .executeTakeFirst()
  return r !== undefined
}

/** Drafts whose provider outcome is unknown (held on the ledger), oldest first, for the admins' list. */
export async function listUnknownDrafts(q: Q, botId: number, limit = 30): Promise<Draft[]> {
  return q
    .selectFrom('draft')
    .selectAll()
    .where('bot_id', '=', botId)
    .where('state', '=', 'unknown')
    .orderBy('created_at')
    .limit(limit)
    .execute()
}

/** What the admission needs of the consultation: its state and tariff snapshot (no payment fields). */
export interface DraftingConsultation {
  id: number
  bot_id: number
  user_id: number
  state: 'waiting' | 'active' | 'closed' | 'revoked'
  tariff_code: string
  title: string
  drafts: number
  lang: string
  /** Its staff group; null: the desk's home group. */
  staff_chat_id: number | null
}

export async function draftingConsultation(q: Q, consultationId: number) {
  const r = await sql<DraftingConsultation>`
    select c.id, c.bot_id, c.user_id, c.state, o.tariff_code, o.title, o.drafts, o.lang, c.staff_chat_id
      from consultation c join orders o on o.id = c.order_id
      where c.id = ${consultationId}`.execute(q)
  return r.rows[0]
}

/** The staff group a consultation lives in (null: the home group); undefined when there is no such consultation. */
export async function consultationGroup(q: Q, consultationId: number) {
  return q
    .selectFrom('consultation')
    .select('staff_chat_id')
    .where('id', '=', consultationId)
    .executeTakeFirst()
}

/** The open appeal of the consultation (the question a draft answers). */
export async function openAppealOf(q: Q, consultationId: number) {
  return q
    .selectFrom('desk_appeal')
    .select(['id', 'number', 'accepted_at'])
    .where('consultation_id', '=', consultationId)
    .where('state', '=', 'open')
    .executeTakeFirst()
}

/**
 * This consultation's messages for the prompt, oldest first: accepted client messages and staff answers (refused
 * and undeliverable ones left out), content and direction only.
 */
export async function conversationForPrompt(q: Q, consultationId: number): Promise<ConversationItem[]> {
  const rows = await q
    .selectFrom('desk_message')
    .select(['direction', 'kind', 'content_type', 'content', 'appeal_id'])
    .where('consultation_id', '=', consultationId)
    .where('state', 'not in', ['refused', 'failed'])
    .where('kind', '<>', 'note')
    .orderBy('id')
    .execute()
  return rows.map((r) => ({
    direction: r.direction,
    kind: r.kind,
    contentType: r.content_type,
    text: r.content?.text ?? r.content?.caption ?? null,
    appealId: r.appeal_id,
  }))
}

/** The database clock (instants of admissions and deadlines come from it, as everywhere in the desk). */
export async function dbNow(q: Q): Promise<Date> {
  const r = await sql<{ now: Date }>`select clock_timestamp() as now`.execute(q)
  return r.rows[0]!.now
}

/**
 * Cheap pre-check for every staff message in a topic: is this staff member editing a draft, or was this message
 * already taken as an edit (a redelivery)? Only then does the edit capture open a transaction.
 */
export async function hasEditingDraft(
  q: Q,
  botId: number,
  staffId: number,
  chatId: number,
  messageId: number,
): Promise<boolean> {
  const r = await sql<{ yes: boolean }>`
    select exists (select 1 from draft where bot_id = ${botId} and state = 'editing' and editing_by = ${staffId})
      or exists (select 1 from draft_edit where bot_id = ${botId} and chat_id = ${chatId} and message_id = ${messageId})
      as yes`.execute(q)
  return r.rows[0]?.yes === true
}

/** Whether Stop was pressed on the draft (polled by the job while its provider call runs). */
export async function stopRequested(q: Q, id: number): Promise<boolean> {
  const r = await q.selectFrom('draft').select('stop_requested_at').where('id', '=', id).executeTakeFirst()
  return !!r?.stop_requested_at
}
