import { sql } from 'kysely'
import { clientZone } from '../clients/clients.service'
import type { DeskRuntime } from '../config/load'
import type { Deps } from '../deps'
import { notify } from '../telegram/notify'
import { admitClientMessage } from './admission'
import { askChoice, type LiveConsultation, labelParams, liveConsultations } from './several'

/**
 * The client's choice of consultation (issue 26; the rule is in several.ts): a press of a choice button (or of
 * "Send my next messages here" on a receipt) and /switch.
 */

export type ChooseResult =
  | { ok: true; chosen: LiveConsultation; released: number }
  /** Not the presser's consultation, or no longer live (ended, refunded). */
  | { ok: false; reason: 'not-live' }

/**
 * Remembers the choice, then admits what was held, oldest first, to the chosen consultation. The choice is written
 * under the consultation's row lock after checking, in that transaction, that it is the presser's and live. Each
 * held message is admitted by the ordinary admission with the chosen consultation as its target and deleted after:
 * the admission's unique key on the message makes a second release (a redelivered press, a crash between the two
 * steps) a duplicate, so a held message is delivered once.
 */
export async function chooseConsultation(
  deps: Deps,
  desk: DeskRuntime,
  input: { userId: number; consultationId: number; lang: string; updateId: number },
): Promise<ChooseResult> {
  const { userId, consultationId } = input
  const chosen = await deps.jobs.transaction(deps.db, async (trx, outbox) => {
    const c = await sql<{ id: number }>`select c.id from consultation c
        where c.id = ${consultationId} and c.bot_id = ${desk.botId} and c.user_id = ${userId}
          and c.state = 'active' and c.revoked_at is null and c.starts_at <= now() and now() < c.access_until
        for update`.execute(trx)
    if (c.rows.length === 0) return undefined
    await sql`insert into client_route (bot_id, user_id, consultation_id, asking)
        values (${desk.botId}, ${userId}, ${consultationId}, false)
        on conflict (bot_id, user_id) do update
          set consultation_id = excluded.consultation_id, asking = false, updated_at = now()`.execute(trx)
    const live = (await liveConsultations(trx, desk.botId, userId)).find((l) => l.id === consultationId)
    if (!live) return undefined
    const held = await trx
      .selectFrom('held_message')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('bot_id', '=', desk.botId)
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow()
    const zone = await clientZone(trx, desk, userId)
    // Said once per press (a redelivered press has the same update id).
    await notify(outbox, {
      botId: desk.botId,
      chatId: userId,
      lang: input.lang,
      key: Number(held.n) > 0 ? 'several-chosen-released' : 'several-chosen',
      params: { ...labelParams(live, zone, input.lang), count: Number(held.n) },
      consultationId,
      dedupeKey: `several:chosen:${desk.botId}:${input.updateId}`,
    })
    return live
  })
  if (!chosen) return { ok: false, reason: 'not-live' }
  const released = await releaseHeld(deps, desk, userId, consultationId)
  return { ok: true, chosen, released }
}

function heldOf(deps: Deps, desk: DeskRuntime, userId: number) {
  return deps.db
    .selectFrom('held_message')
    .select(['chat_id', 'message_id', 'lang', 'message'])
    .where('bot_id', '=', desk.botId)
    .where('user_id', '=', userId)
    .orderBy('message_id')
    .execute()
}

async function releaseHeld(
  deps: Deps,
  desk: DeskRuntime,
  userId: number,
  consultationId: number,
): Promise<number> {
  const held = await heldOf(deps, desk, userId)
  let n = 0
  for (const h of held) {
    const r = await admitClientMessage(deps, desk, {
      message: h.message,
      lang: h.lang,
      target: consultationId,
    })
    if (r.status !== 'duplicate') n++
    await deps.db
      .deleteFrom('held_message')
      .where('bot_id', '=', desk.botId)
      .where('chat_id', '=', h.chat_id)
      .where('message_id', '=', h.message_id)
      .execute()
  }
  return n
}

export type SettleResult = 'nothing-held' | 'still-several' | 'delivered' | 'dropped'

/**
 * The job one of the client's consultations ending writes (heldSettleQueue, several.ts): held messages wait for a
 * choice only while there is one. With one live consultation left they are admitted to it, oldest first, through
 * the ordinary admission (its unique key on the message makes a second run a duplicate: each is delivered once);
 * with none left they are dropped. Either way the held rows are deleted and the client is told in one transaction,
 * once (the notice's key is the first held message), so a run that dies between the admissions and that
 * transaction is finished by the retry, and a later run finds nothing held.
 */
export async function settleHeld(deps: Deps, job: { botId: number; userId: number }): Promise<SettleResult> {
  const desk = deps.desk(job.botId)
  const held = await heldOf(deps, desk, job.userId)
  if (held.length === 0) return 'nothing-held'
  const live = await liveConsultations(deps.db, desk.botId, job.userId)
  if (live.length >= 2) return 'still-several'
  const only = live[0]
  if (only)
    for (const h of held)
      await admitClientMessage(deps, desk, { message: h.message, lang: h.lang, target: only.id })
  const first = held[0]!
  const lang = held[held.length - 1]!.lang
  await deps.jobs.transaction(deps.db, async (trx, outbox) => {
    const gone = await trx
      .deleteFrom('held_message')
      .where('bot_id', '=', desk.botId)
      .where('user_id', '=', job.userId)
      .where(
        'message_id',
        'in',
        held.map((h) => h.message_id),
      )
      .returning('message_id')
      .execute()
    if (gone.length === 0) return
    const zone = await clientZone(trx, desk, job.userId)
    await notify(outbox, {
      botId: desk.botId,
      chatId: job.userId,
      lang,
      key: only ? 'several-held-delivered' : 'several-held-dropped',
      params: { count: gone.length, ...(only ? labelParams(only, zone, lang) : {}) },
      ...(only ? { consultationId: only.id } : {}),
      dedupeKey: `several:settled:${desk.botId}:${first.chat_id}:${first.message_id}`,
    })
  })
  return only ? 'delivered' : 'dropped'
}

export type SwitchResult = { kind: 'asked' } | { kind: 'one'; only: LiveConsultation } | { kind: 'none' }

/** /switch: the choice again, when there is one to make. */
export async function offerSwitch(
  deps: Deps,
  desk: DeskRuntime,
  userId: number,
  lang: string,
  updateId: number,
): Promise<SwitchResult> {
  return deps.jobs.transaction(deps.db, async (trx, outbox) => {
    const live = await liveConsultations(trx, desk.botId, userId)
    if (live.length === 0) return { kind: 'none' }
    if (live.length === 1) return { kind: 'one', only: live[0]! }
    await askChoice(
      trx,
      outbox,
      deps,
      desk,
      userId,
      lang,
      'several-switch',
      `several:switch:${desk.botId}:${updateId}`,
    )
    return { kind: 'asked' }
  })
}
