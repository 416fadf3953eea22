import type { DeskRuntime } from '../config/load'
import type { DeskConfig } from '../config/schema'
import type { Deps } from '../deps'
import { changeDeskIn, committed, type DeskSettings } from '../settings/settings'
import { notify } from '../telegram/notify'
import { inspectGroup, languageOf, recordGroupFacts, supportedLanguage } from './groups'
import { deskAdmins } from './staff-doc'

/**
 * A basic group upgraded to a supergroup (issue 24): Telegram gives it a new id and says so with a service message,
 * `migrate_to_chat_id` in the old group (and `migrate_from_chat_id` in the new one). A group the desk knows is
 * followed in one transaction: the binding in the desk's settings (home group and listed groups), the routes of its
 * consultations and the group's last look move to the new id, and the owner and admins are told. Then the new
 * group is looked at as if the bot had just been added (a supergroup without Topics, or with rights missing, is
 * reported the usual way; a group not yet bound gets its "use as the staff group?" question). A group the desk does
 * not know, or one already followed (a redelivered update), changes nothing.
 */
export async function followMigration(
  deps: Deps,
  desk: DeskRuntime,
  from: number,
  to: number,
  /** The group's title and who upgraded it (told in their Telegram language, as the other group notices are). */
  seen: { title?: string | undefined; actor?: { id: number; language_code?: string | undefined } } = {},
): Promise<'moved' | 'unknown'> {
  let changed: DeskSettings | undefined
  const r = await deps.jobs.transaction(deps.db, async (trx, outbox) => {
    const row = await trx
      .selectFrom('staff_group_state')
      .select(['title', 'added_by'])
      .where('bot_id', '=', desk.botId)
      .where('chat_id', '=', from)
      .forUpdate()
      .executeTakeFirst()
    let bound = false
    changed = await changeDeskIn(trx, desk.botId, { userId: null, source: 'telegram' }, 'any', (doc) => {
      bound = moveGroup(doc, from, to)
    })
    if (!bound && !row) return { moved: false as const }
    if (row) {
      await trx
        .deleteFrom('staff_group_state')
        .where('bot_id', '=', desk.botId)
        .where('chat_id', '=', to)
        .execute()
      await trx
        .updateTable('staff_group_state')
        .set({ chat_id: to })
        .where('bot_id', '=', desk.botId)
        .where('chat_id', '=', from)
        .execute()
    }
    await trx
      .updateTable('consultation')
      .set({ staff_chat_id: to })
      .where('bot_id', '=', desk.botId)
      .where('staff_chat_id', '=', from)
      .execute()
    if (bound)
      for (const id of deskAdmins(changed.doc))
        await notify(outbox, {
          botId: desk.botId,
          chatId: id,
          lang:
            id === seen.actor?.id && supportedLanguage(desk, seen.actor.language_code)
              ? supportedLanguage(desk, seen.actor.language_code)!
              : await languageOf(trx, desk, id),
          key: 'st-group-moved',
          params: { title: seen.title ?? row?.title ?? String(to) },
          dedupeKey: `setup:migrated:${desk.botId}:${from}:${to}:${id}`,
        })
    return { moved: true as const, addedBy: row?.added_by ?? undefined, bound }
  })
  if (changed) committed(deps.db, desk.botId, changed)
  if (!r.moved) return 'unknown'
  const now = deps.desk(desk.botId)
  const facts = await inspectGroup(deps.api(desk.botId), desk.botId, to)
  await recordGroupFacts(deps, now, facts, r.bound ? undefined : (r.addedBy ?? undefined), seen.actor)
  return 'moved'
}

/** Replaces a group's id in the desk's document; false when the group is not one of the desk's. */
function moveGroup(doc: DeskConfig, from: number, to: number): boolean {
  let found = false
  if (doc.staffChatId === from) {
    doc.staffChatId = to
    found = true
  }
  for (const g of doc.staffGroups ?? [])
    if (g.chatId === from) {
      g.chatId = to
      found = true
    }
  return found
}
