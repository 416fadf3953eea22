import type { Message } from 'grammy/types'
import { sql } from 'kysely'
import { clientZone } from '../clients/clients.service'
import type { DeskRuntime } from '../config/load'
import type { Db, Trx } from '../db/database'
import type { Deps } from '../deps'
import type { Outbox } from '../jobs/jobs'
import { defineQueue, jobId } from '../jobs/queue'
import { notify } from '../telegram/notify'
import { formatInstant, type Zone } from '../time/format'

/**
 * Several consultations at once (issue 26). A client may have more than one live consultation (a plan and a
 * one-off, or a second one-off bought while the first runs). A message goes to the consultation it names: a reply
 * to one of its messages, or its topic in the private chat (decided in desk_admit, src/consultations/sql). A
 * message that names none goes to the client's remembered choice (client_route); with no choice yet it is held
 * (held_message) and the client is asked once, with a button per consultation; the press (choice.ts) remembers the
 * choice and admits what was held. /switch and the button on each receipt change the choice. When the choice goes
 * away (all but one consultation ended) the held messages go to the one left (settleHeld, choice.ts), and a message
 * written before that is done waits behind them (holdBehind), so they reach the topic in the order written.
 */

/** A live consultation as the client knows it: its tariff or plan, and when it was bought. */
export interface LiveConsultation {
  id: number
  title: string
  boughtAt: Date
}

type Q = Db | Trx

/** The client's consultations whose window holds now, oldest first (the rule desk_admit uses). */
export async function liveConsultations(q: Q, botId: number, userId: number): Promise<LiveConsultation[]> {
  const rows = await q
    .selectFrom('consultation as c')
    .innerJoin('orders as o', 'o.id', 'c.order_id')
    .select(['c.id', 'o.title', 'c.created_at'])
    .where('c.bot_id', '=', botId)
    .where('c.user_id', '=', userId)
    .where('c.state', '=', 'active')
    .where('c.revoked_at', 'is', null)
    .where(sql<boolean>`c.starts_at <= now() and now() < c.access_until`)
    .orderBy('c.id')
    .execute()
  return rows.map((r) => ({ id: r.id, title: r.title, boughtAt: r.created_at }))
}

/** How a consultation is named to its client: "Quick review, bought 2 Dec, 14:05". */
export function labelParams(
  c: LiveConsultation,
  zone: Zone,
  lang: string,
): { title: string; bought: string } {
  return { title: c.title, bought: formatInstant(c.boughtAt, zone, lang) }
}

/** One consultation by id, named as the client knows it (its title and purchase), if it is the client's. */
export async function consultationLabel(
  q: Q,
  botId: number,
  userId: number,
  consultationId: number,
): Promise<LiveConsultation | undefined> {
  const r = await q
    .selectFrom('consultation as c')
    .innerJoin('orders as o', 'o.id', 'c.order_id')
    .select(['c.id', 'o.title', 'c.created_at'])
    .where('c.id', '=', consultationId)
    .where('c.bot_id', '=', botId)
    .where('c.user_id', '=', userId)
    .executeTakeFirst()
  return r ? { id: r.id, title: r.title, boughtAt: r.created_at } : undefined
}

/** The choice's buttons: one per live consultation, named in words (callback sw:<consultation id>). */
export function choiceKeyboard(
  deps: Pick<Deps, 'i18n'>,
  live: LiveConsultation[],
  zone: Zone,
  lang: string,
): { text: string; callback_data: string }[][] {
  return live.map((c) => [
    {
      text: deps.i18n.t(lang, 'several-choice-button', labelParams(c, zone, lang)),
      callback_data: `sw:${c.id}`,
    },
  ])
}

/** A re-ask after this long without an answer: the first question may have scrolled away. */
const ASK_AGAIN_MINUTES = 30

/**
 * desk_admit found several live consultations and nothing naming one: the message is kept whole until the client
 * chooses (a redelivered update finds it kept: `duplicate`), and the client is asked once (not once per message:
 * client_route.asking, claimed by a conditional upsert, so two messages at once ask once).
 */
export async function holdForChoice(
  trx: Trx,
  outbox: Outbox,
  deps: Pick<Deps, 'i18n'>,
  desk: DeskRuntime,
  m: Message,
  lang: string,
): Promise<'held' | 'duplicate'> {
  const userId = m.from!.id
  if (!(await keep(trx, desk, m, lang))) return 'duplicate'
  const ask =
    await sql`insert into client_route (bot_id, user_id, asking) values (${desk.botId}, ${userId}, true)
      on conflict (bot_id, user_id) do update set asking = true, updated_at = now()
      where not client_route.asking
         or client_route.updated_at < now() - make_interval(mins => ${ASK_AGAIN_MINUTES})
      returning 1`.execute(trx)
  if (ask.rows.length === 0) return 'held'
  await askChoice(
    trx,
    outbox,
    deps,
    desk,
    userId,
    lang,
    'several-choose',
    `several:ask:${desk.botId}:${m.chat.id}:${m.message_id}`,
  )
  return 'held'
}

/**
 * desk_admit found messages held for a choice that is no longer there (one live consultation left): this one is
 * kept behind them, without asking, and a settle job of its own (settleHeld, choice.ts) delivers them all, oldest
 * first: the job of the ending that left one consultation may have read the held messages before this one, and a
 * window that has just passed has written no job at all.
 */
export async function holdBehind(
  trx: Trx,
  outbox: Outbox,
  desk: DeskRuntime,
  m: Message,
  lang: string,
): Promise<'held' | 'duplicate'> {
  if (!(await keep(trx, desk, m, lang))) return 'duplicate'
  await settleHeldAfterEnd(
    outbox,
    { botId: desk.botId, userId: m.from!.id },
    `behind:${m.chat.id}:${m.message_id}`,
  )
  return 'held'
}

/** The message kept whole in held_message; false when it is there already (a redelivered update). */
async function keep(trx: Trx, desk: DeskRuntime, m: Message, lang: string): Promise<boolean> {
  const held = await trx
    .insertInto('held_message')
    .values({
      bot_id: desk.botId,
      chat_id: m.chat.id,
      message_id: m.message_id,
      user_id: m.from!.id,
      lang,
      message: JSON.stringify(m),
    })
    .onConflict((oc) => oc.doNothing())
    .returning('message_id')
    .executeTakeFirst()
  return held !== undefined
}

/** The question itself: which consultation, one button each. */
export async function askChoice(
  trx: Trx,
  outbox: Outbox,
  deps: Pick<Deps, 'i18n'>,
  desk: DeskRuntime,
  userId: number,
  lang: string,
  key: 'several-choose' | 'several-switch',
  dedupeKey: string,
): Promise<void> {
  const live = await liveConsultations(trx, desk.botId, userId)
  const zone = await clientZone(trx, desk, userId)
  await notify(outbox, {
    botId: desk.botId,
    chatId: userId,
    lang,
    key,
    params: { count: live.length },
    replyMarkup: { inline_keyboard: choiceKeyboard(deps, live, zone, lang) },
    dedupeKey,
  })
}

/**
 * Said before payment (the tariff's and the plan's card, and before the invoice) when the client already has a
 * consultation running: the new one is separate, and how messages find their consultation. Undefined: none runs.
 */
export async function runningBeforePurchase(
  deps: Pick<Deps, 'db' | 'i18n'>,
  desk: DeskRuntime,
  userId: number,
  lang: string,
): Promise<string | undefined> {
  const live = await liveConsultations(deps.db, desk.botId, userId)
  if (live.length === 0) return undefined
  const zone = await clientZone(deps.db, desk, userId)
  const list = live.map((c) => deps.i18n.t(lang, 'several-offer-item', labelParams(c, zone, lang))).join(', ')
  return deps.i18n.t(lang, 'several-offer-running', { count: live.length, list })
}

/**
 * Written by every transaction that ends one of a client's consultations (the window's close, an early close, a
 * refund): the client's held messages wait for a choice only while there is one to make. Worked in choice.ts
 * (settleHeld): with one live consultation left they go to it, with none the client is told they were not sent.
 */
export const heldSettleQueue = defineQueue<{ botId: number; userId: number }>('consultation.held-settle')

/**
 * The settle job for a client one of whose consultations stopped being live; `ending` names the event (the
 * consultation closed, a payment refunded), so a replayed ending writes the same job once.
 */
export async function settleHeldAfterEnd(
  outbox: Pick<Outbox, 'send'>,
  c: { botId: number; userId: number },
  ending: string,
): Promise<void> {
  await outbox.send(
    heldSettleQueue,
    { botId: c.botId, userId: c.userId },
    { id: jobId(`consultation.held-settle:${c.botId}:${ending}`) },
  )
}
