import { sql } from 'kysely'
import { type DeskRuntime, pick } from '../config/load'
import type { Trx } from '../db/database'
import type { Deps } from '../deps'
import type { Outbox } from '../jobs/jobs'
import { notify } from '../telegram/notify'
import { formatInstant } from '../time/format'
import { freePlaces, slotAccount } from './capacity'
import { announcedSlot, findTariff } from './tariffs'

/**
 * The waitlist of a full start (issue 14). A client joins for an announced slot with no free place; when a place of
 * it frees up (a start moved away, refunded before it began, or a pre-checkout hold that lapsed: `placeFreed`, called
 * in that transaction), the
 * first waiting client is told, first come first served: the entry is taken under a row lock (SKIP LOCKED, so two
 * places freed at once tell two different clients) and marked notified in the same transaction as the freeing. The
 * place itself is not reserved for them: they buy it the usual way, and the ledger's lock at pre-checkout decides
 * between two clients wanting the last place.
 */

export type JoinResult =
  | { ok: true; position: number; at: Date; already: boolean }
  | { ok: false; code: 'gone' | 'not-full' }

export async function joinWaitlist(
  deps: Deps,
  desk: DeskRuntime,
  input: { userId: number; lang: string; tariffCode: string; slot: Date },
): Promise<JoinResult> {
  const tariff = findTariff(desk, input.tariffCode)
  const at = tariff ? announcedSlot(tariff, input.slot) : undefined
  if (!tariff || !at || at.getTime() <= Date.now()) return { ok: false, code: 'gone' }
  const account = slotAccount(desk, tariff.code, tariff.slotCapacity, at, Math.round(tariff.windowHours * 60))
  return deps.db.transaction().execute(async (trx): Promise<JoinResult> => {
    const [left] = await freePlaces(trx, desk.botId, [account])
    if ((left ?? 0) > 0) return { ok: false, code: 'not-full' }
    const inserted = await trx
      .insertInto('waitlist_entry')
      .values({
        bot_id: desk.botId,
        user_id: input.userId,
        tariff_code: tariff.code,
        capacity_key: account.key,
        slot_start: at,
        lang: input.lang,
      })
      .onConflict((oc) =>
        oc.columns(['bot_id', 'user_id', 'capacity_key']).where('state', '=', 'waiting').doNothing(),
      )
      .returning('id')
      .executeTakeFirst()
    const mine = await trx
      .selectFrom('waitlist_entry')
      .select('id')
      .where('bot_id', '=', desk.botId)
      .where('user_id', '=', input.userId)
      .where('capacity_key', '=', account.key)
      .where('state', '=', 'waiting')
      .executeTakeFirstOrThrow()
    const ahead = await trx
      .selectFrom('waitlist_entry')
      .select(sql<number>`count(*)::int`.as('n'))
      .where('bot_id', '=', desk.botId)
      .where('capacity_key', '=', account.key)
      .where('state', '=', 'waiting')
      .where('id', '<', mine.id)
      .executeTakeFirstOrThrow()
    return { ok: true, position: ahead.n + 1, at, already: !inserted }
  })
}

/** A place of `capacityKey` was given back in this transaction: the first waiting client is told. */
export async function placeFreed(
  trx: Trx,
  outbox: Outbox,
  desk: DeskRuntime,
  capacityKey: string,
): Promise<number | undefined> {
  const first = await trx
    .selectFrom('waitlist_entry')
    .selectAll()
    .where('bot_id', '=', desk.botId)
    .where('capacity_key', '=', capacityKey)
    .where('state', '=', 'waiting')
    .where('slot_start', '>', sql<Date>`now()`)
    .orderBy('id')
    .limit(1)
    .forUpdate()
    .skipLocked()
    .executeTakeFirst()
  if (!first) return undefined
  await trx
    .updateTable('waitlist_entry')
    .set({ state: 'notified', notified_at: sql`now()` })
    .where('id', '=', first.id)
    .execute()
  const client = await trx
    .selectFrom('client')
    .select('time_zone')
    .where('bot_id', '=', desk.botId)
    .where('user_id', '=', first.user_id)
    .executeTakeFirst()
  const zone = client?.time_zone ?? desk.schedule.timezone
  const title = findTariff(desk, first.tariff_code)?.title
  await notify(outbox, {
    botId: desk.botId,
    chatId: first.user_id,
    lang: first.lang,
    key: 'waitlist-place-free',
    params: {
      at: formatInstant(first.slot_start, zone, first.lang),
      title: title ? pick(title, first.lang, desk.defaultLanguage) : first.tariff_code,
    },
    dedupeKey: `waitlist:${first.id}:notified`,
  })
  return first.id
}
