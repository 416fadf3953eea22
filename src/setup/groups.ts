import { type Api, GrammyError } from 'grammy'
import type { ChatMember } from 'grammy/types'
import { sql } from 'kysely'
import type { DeskRuntime } from '../config/load'
import { deskLanguage } from '../config/rules.schema'
import type { Language } from '../config/schema'
import { isStaffGroup } from '../config/staff-groups'
import type { Db, Trx } from '../db/database'
import type { Deps } from '../deps'
import type { Outbox } from '../jobs/jobs'
import { changeDeskIn, committed, type DeskSettings } from '../settings/settings'
import { notify } from '../telegram/notify'
import { rememberBroken } from './last-look'
import { addStaffGroup, deskAdmins, isDeskAdmin } from './staff-doc'

/**
 * Staff groups bound by adding the bot (issue 24). The bot looks at a group it was added to, or whose rights
 * changed (a my_chat_member update, or the start-up check of the groups in the desk's settings), with getChat and
 * getChatMember - outside any transaction - and records what it saw in staff_group_state. Each change of what is
 * missing moves the row's revision and tells people once (the outbox, keyed by the revision):
 * - a group not yet the desk's: the person who added it (owner or admin) gets "use «title» as the staff group?"
 *   with a button, or the list of switches still missing;
 * - one of the desk's groups: the owner and every admin are told what broke, or that it works again; while any
 *   of them is broken the desk sells nothing new (src/setup/gate.ts).
 */
export type GroupProblem =
  | 'gone'
  | 'not-supergroup'
  | 'not-forum'
  | 'not-admin'
  | 'manage-topics'
  | 'pin-messages'
  | 'delete-messages'

export interface GroupFacts {
  chatId: number
  title: string
  present: boolean
  problems: GroupProblem[]
}

/** Telegram's "no such chat / not a member" answers: the bot is not (or no longer) in the group. */
function isGone(err: unknown): boolean {
  return err instanceof GrammyError && (err.error_code === 400 || err.error_code === 403)
}

/** What a bot's own membership lacks for a staff group. */
export function memberProblems(m: ChatMember): GroupProblem[] {
  if (m.status === 'left' || m.status === 'kicked') return ['gone']
  if (m.status === 'creator') return []
  if (m.status !== 'administrator') return ['not-admin']
  const out: GroupProblem[] = []
  if (!m.can_manage_topics) out.push('manage-topics')
  if (!m.can_pin_messages) out.push('pin-messages')
  if (!m.can_delete_messages) out.push('delete-messages')
  return out
}

/** Asks Telegram what the group is and what the bot may do there. Network errors other than "gone" are thrown. */
export async function inspectGroup(
  api: Api,
  botId: number,
  chatId: number,
  title?: string,
): Promise<GroupFacts> {
  let name = title ?? String(chatId)
  try {
    const chat = await api.getChat(chatId)
    if ('title' in chat && chat.title) name = chat.title
    const problems: GroupProblem[] = []
    if (chat.type !== 'supergroup') problems.push('not-supergroup')
    else if (!chat.is_forum) problems.push('not-forum')
    const member = await api.getChatMember(chatId, botId)
    const mine = memberProblems(member)
    if (mine.includes('gone')) return { chatId, title: name, present: false, problems: ['gone'] }
    return { chatId, title: name, present: true, problems: [...problems, ...mine] }
  } catch (err) {
    if (isGone(err)) return { chatId, title: name, present: false, problems: ['gone'] }
    throw err
  }
}

export type RecordOutcome = { changed: false } | { changed: true; revision: number; bound: boolean }

/**
 * Stores what the bot saw (one transaction, the row locked) and, when it differs from the last look, tells people
 * through the outbox. `addedBy`: the owner or admin who just added the bot (kept on the row; they are asked to
 * confirm). A redelivered update sees no change and sends nothing.
 */
export async function recordGroupFacts(
  deps: Deps,
  desk: DeskRuntime,
  facts: GroupFacts,
  addedBy?: number,
  /** Who made the change (the update's sender) and their Telegram language: they are told in it. */
  actor?: { id: number; language_code?: string | undefined },
): Promise<RecordOutcome> {
  const r = await deps.jobs.transaction(deps.db, async (trx, outbox): Promise<RecordOutcome> => {
    const before = await trx
      .selectFrom('staff_group_state')
      .select(['present', 'problems', 'added_by', 'revision'])
      .where('bot_id', '=', desk.botId)
      .where('chat_id', '=', facts.chatId)
      .forUpdate()
      .executeTakeFirst()
    const same =
      before &&
      before.present === facts.present &&
      before.problems.join(',') === facts.problems.join(',') &&
      (addedBy === undefined || before.added_by === addedBy)
    if (same) {
      await trx
        .updateTable('staff_group_state')
        .set({ checked_at: sql<Date>`now()`, title: facts.title })
        .where('bot_id', '=', desk.botId)
        .where('chat_id', '=', facts.chatId)
        .execute()
      return { changed: false }
    }
    const row = await trx
      .insertInto('staff_group_state')
      .values({
        bot_id: desk.botId,
        chat_id: facts.chatId,
        title: facts.title,
        present: facts.present,
        problems: facts.problems,
        added_by: addedBy ?? null,
      })
      .onConflict((oc) =>
        oc.columns(['bot_id', 'chat_id']).doUpdateSet({
          title: facts.title,
          present: facts.present,
          problems: facts.problems,
          added_by: addedBy ?? sql<number | null>`staff_group_state.added_by`,
          revision: sql<number>`staff_group_state.revision + 1`,
          checked_at: sql<Date>`now()`,
        }),
      )
      .returning(['revision', 'added_by'])
      .executeTakeFirstOrThrow()
    const bound = isStaffGroup(desk, facts.chatId)
    await tellAboutGroup(deps, trx, outbox, desk, facts, row.revision, bound, row.added_by, before, actor)
    return { changed: true, revision: row.revision, bound }
  })
  // This process's pre-checkout answers see the change at once (src/setup/gate.ts); the others within ~2 s.
  if (r.changed)
    rememberBroken(
      deps.db,
      desk.botId,
      (await brokenGroups(deps.db, desk)).map((g) => ({ kind: 'group' as const, ...g })),
    )
  return r
}

/** The problems as message keys, one line each. */
export function problemLines(problems: readonly string[]): { key: string }[] {
  return problems.map((p) => ({ key: `setup-group-problem-${p}` }))
}

async function tellAboutGroup(
  deps: Deps,
  trx: Trx,
  outbox: Outbox,
  desk: DeskRuntime,
  facts: GroupFacts,
  revision: number,
  bound: boolean,
  addedBy: number | null,
  before: { present: boolean; problems: string[] } | undefined,
  actor: { id: number; language_code?: string | undefined } | undefined,
): Promise<void> {
  const lang = async (to: number) =>
    to === actor?.id && supportedLanguage(desk, actor.language_code)
      ? supportedLanguage(desk, actor.language_code)!
      : languageOf(trx, desk, to)
  const wasPresent = before?.present ?? false
  const dedupe = (to: number) => `setup:group:${desk.botId}:${facts.chatId}:${revision}:${to}`
  const params = { title: facts.title }
  if (bound) {
    const ok = facts.problems.length === 0
    // A first look that finds it working, or a look after one that did, is nothing to tell.
    if (ok && (!before || (before.present && before.problems.length === 0))) return
    for (const to of deskAdmins(desk)) {
      await notify(outbox, {
        botId: desk.botId,
        chatId: to,
        lang: await lang(to),
        key: ok ? 'setup-group-fixed' : facts.present ? 'setup-group-broken' : 'setup-group-removed',
        params,
        more: ok
          ? []
          : [...problemLines(facts.present ? facts.problems : []), { key: 'setup-group-not-selling' }],
        dedupeKey: dedupe(to),
      })
    }
    return
  }
  // Not one of the desk's groups: only the person who added it hears (the owner when nobody is known), and
  // nothing is said when the bot just left it.
  if (!facts.present) return
  const to = addedBy ?? deskAdmins(desk)[0]
  if (to === undefined) return
  const language = await lang(to)
  if (facts.problems.length === 0)
    await notify(outbox, {
      botId: desk.botId,
      chatId: to,
      lang: language,
      key: 'setup-group-confirm',
      params,
      replyMarkup: {
        inline_keyboard: [
          [
            {
              text: deps.i18n.t(language, 'setup-btn-use-group', params),
              callback_data: `sg:use:${facts.chatId}`,
            },
          ],
        ],
      },
      dedupeKey: dedupe(to),
    })
  else
    await notify(outbox, {
      botId: desk.botId,
      chatId: to,
      lang: language,
      key: wasPresent ? 'setup-group-still-missing' : 'setup-group-missing',
      params,
      more: problemLines(facts.problems),
      dedupeKey: dedupe(to),
    })
}

/** A Telegram language_code ("en-US") as a language the desk speaks (rules.languages), or undefined. */
export function supportedLanguage(
  desk: Pick<DeskRuntime, 'rules'>,
  code: string | null | undefined,
): Language | undefined {
  const base = code?.toLowerCase().split(/[-_]/)[0] ?? ''
  return (desk.rules.languages as readonly string[]).includes(base) ? (base as Language) : undefined
}

/** A staff member's language: what their Telegram said when they last wrote to the bot, else the desk's. */
export async function languageOf(db: Db | Trx, desk: DeskRuntime, userId: number): Promise<Language> {
  const row = await db
    .selectFrom('client')
    .select('language_code')
    .where('bot_id', '=', desk.botId)
    .where('user_id', '=', userId)
    .executeTakeFirst()
  return deskLanguage(desk, row?.language_code)
}

/** Whether the bot knows this group already (it was added by staff, or it is one of the desk's). */
export async function knownGroup(db: Db, desk: DeskRuntime, chatId: number): Promise<boolean> {
  if (isStaffGroup(desk, chatId)) return true
  const row = await db
    .selectFrom('staff_group_state')
    .select('chat_id')
    .where('bot_id', '=', desk.botId)
    .where('chat_id', '=', chatId)
    .where('added_by', 'is not', null)
    .executeTakeFirst()
  return row !== undefined
}

export type ConfirmOutcome =
  | { ok: true; as: 'home' | 'listed'; title: string }
  | { ok: false; reason: 'not-admin' | 'unknown' | 'not-ready' | 'already'; title?: string }

class Already extends Error {}

/**
 * "Use «title» as the staff group" pressed: only the owner or an admin of this desk; the group's last look must
 * show nothing missing. The first group becomes the home group, a further one is listed (staffGroups) - through
 * the desk's settings in the same transaction that reads the group's row under its lock.
 */
export async function confirmGroup(
  deps: Deps,
  desk: DeskRuntime,
  userId: number,
  chatId: number,
): Promise<ConfirmOutcome> {
  if (!isDeskAdmin(desk, userId)) return { ok: false, reason: 'not-admin' }
  let changed: DeskSettings | undefined
  try {
    const r = await deps.db.transaction().execute(async (trx): Promise<ConfirmOutcome> => {
      const g = await trx
        .selectFrom('staff_group_state')
        .select(['title', 'present', 'problems'])
        .where('bot_id', '=', desk.botId)
        .where('chat_id', '=', chatId)
        .forUpdate()
        .executeTakeFirst()
      if (!g) return { ok: false, reason: 'unknown' }
      if (!g.present || g.problems.length > 0) return { ok: false, reason: 'not-ready', title: g.title }
      let as: 'home' | 'listed' | 'already' = 'already'
      changed = await changeDeskIn(trx, desk.botId, { userId, source: 'telegram' }, 'any', (doc) => {
        // Checked again on the document being changed: an admin removed meanwhile may not bind.
        if (!isDeskAdmin(doc, userId)) throw new NotAdmin()
        as = addStaffGroup(doc, chatId)
        if (as === 'already') throw new Already()
      })
      return { ok: true, as: as as 'home' | 'listed', title: g.title }
    })
    if (changed) committed(deps.db, desk.botId, changed)
    return r
  } catch (e) {
    if (e instanceof Already) return { ok: false, reason: 'already' }
    if (e instanceof NotAdmin) return { ok: false, reason: 'not-admin' }
    throw e
  }
}

class NotAdmin extends Error {}

/** The desk's groups that the last look found broken (for the gate and /health). */
export async function brokenGroups(
  db: Db,
  desk: DeskRuntime,
): Promise<{ chatId: number; title: string; problems: string[] }[]> {
  const ids = [
    ...(desk.staffChatId !== undefined && desk.staffChatId !== null ? [desk.staffChatId] : []),
    ...(desk.staffGroups ?? []).map((g) => g.chatId),
  ]
  if (ids.length === 0) return []
  const rows = await db
    .selectFrom('staff_group_state')
    .select(['chat_id', 'title', 'problems'])
    .where('bot_id', '=', desk.botId)
    .where('chat_id', 'in', ids)
    .where(sql<boolean>`cardinality(problems) > 0`)
    .execute()
  return rows.map((r) => ({ chatId: r.chat_id, title: r.title, problems: r.problems }))
}
