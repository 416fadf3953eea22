import type { User } from 'grammy/types'
import {
  activeConsultation,
  type DeskWorld,
  eventually,
  newClient,
  STAFF_CHAT_ID,
  topicReady,
} from '../support/fixtures'

/** Helpers of the tests of several consultations at once (issue 26: several.test.ts, several-edges.test.ts). */

/** The question the client gets when a message names no consultation. */
export const CHOOSE = /Which one is this message for\?/

/** A new client with two live consultations of the same tariff, each with its staff topic. */
export async function twoConsultations(w: DeskWorld) {
  const client = await newClient(w)
  const a = (await activeConsultation(w, client)).consultationId
  const b = (await activeConsultation(w, client)).consultationId
  const [ra, rb] = await Promise.all([topicReady(w, a), topicReady(w, b)])
  return { client, a, b, staffA: ra.message_thread_id, staffB: rb.message_thread_id }
}

/** The bot's messages in the client's chat recorded as sent for the consultation (receipts, notices), in order. */
export async function messagesOf(w: DeskWorld, consultationId: number): Promise<number[]> {
  const rows = await w.deps.db
    .selectFrom('consultation_client_message')
    .select('message_id')
    .where('consultation_id', '=', consultationId)
    .orderBy('message_id')
    .execute()
  return rows.map((r) => r.message_id)
}

/** messagesOf, once the consultation has one (the first is its activation notice). */
export function firstMessages(w: DeskWorld, consultationId: number, what: string): Promise<number[]> {
  return eventually(async () => {
    const m = await messagesOf(w, consultationId)
    return m.length ? m : undefined
  }, what)
}

/** The copy of a client's message in the staff group (the call that made it), once made. */
export function copiedTo(w: DeskWorld, client: User, messageId: number) {
  return w.tg.waitFor(
    'copyMessage',
    { chat_id: STAFF_CHAT_ID, from_chat_id: client.id, message_id: messageId },
    { ok: true },
  )
}

/** The copies of a client's message in the staff group made so far. */
export function copiesOf(w: DeskWorld, client: User, messageId: number) {
  return w.tg
    .callsTo('copyMessage', { chat_id: STAFF_CHAT_ID, from_chat_id: client.id, message_id: messageId })
    .filter((c) => c.ok)
}

/** The client's messages held for a choice of consultation. */
export function heldOf(w: DeskWorld, client: User) {
  return w.deps.db.selectFrom('held_message').select('message_id').where('user_id', '=', client.id).execute()
}

/** The desk_message rows of the client's messages: the consultation each was taken for. */
export function takenFor(w: DeskWorld, client: User, messageIds: number[]) {
  return w.deps.db
    .selectFrom('desk_message')
    .select('consultation_id')
    .where('chat_id', '=', client.id)
    .where('message_id', 'in', messageIds)
    .execute()
}

/** The consultation's topic in the client's private chat, once it is in `state`. */
export function clientTopic(w: DeskWorld, consultationId: number, state: string) {
  return eventually(async () => {
    const r = await w.deps.db
      .selectFrom('client_topic')
      .selectAll()
      .where('consultation_id', '=', consultationId)
      .executeTakeFirst()
    return r?.state === state ? r : undefined
  }, `the client topic of ${consultationId} to be ${state}`)
}
