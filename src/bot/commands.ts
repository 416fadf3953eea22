import { CommandGroup, type CommandsFlavor, commandNotFound } from '@grammyjs/commands'
import type { Api, Context } from 'grammy'
import type { BotCommandScope, LanguageCode, MessageEntity } from 'grammy/types'
import type { DeskRuntime } from '../config/load'
import { LANGUAGES } from '../config/schema'
import { isStaffGroup, staffGroupsOf } from '../config/staff-groups'
import type { Deps } from '../deps'
import { defineQueue, JobDeferred, jobId } from '../jobs/queue'
import type { BotContext } from './context'

/**
 * The command menu: every command the bot answers, declared once with who it is for and where (the handlers stay
 * in their features, src/bot/features, with grammY's command()). @grammyjs/commands turns the list into Telegram's
 * menus, per scope and per language (descriptions from Fluent: `cmd-<name>`):
 *
 * - client commands in every private chat (BotCommandScopeAllPrivateChats);
 * - staff commands in each staff group (BotCommandScopeChat of the group), next to nothing for clients there;
 * - admin commands (audience 'admin') in the staff groups too (a group's menu is one for all its members: an expert
 *   who tries one is told it is for admins) but, in private, only in the admins' chats;
 * - in each staff member's private chat (BotCommandScopeChat of that chat: a private chat's id is the user's; Bot
 *   API's chat_member scope covers members of groups only), the client commands and the staff commands of private
 *   chats. A staff member who never started the bot has no private chat yet: Telegram refuses that scope, and the
 *   next run (the staff changed, or a restart) tries again.
 *
 * The menus are set at start and again, through a job (never in a transaction), when the desk's staff or groups
 * change (src/app.ts); the calls go through the desk's Api and so its Telegram budget.
 */
type Where = 'private' | 'group'
export type Audience = 'client' | 'staff' | 'admin'
interface Declared {
  name: string
  audience: Audience
  where: readonly Where[]
  /** Only on desks where it means something (e.g. /plan where a plan is sold). */
  when?: (desk: DeskRuntime) => boolean
}

const client = (name: string, when?: Declared['when']): Declared => ({
  name,
  audience: 'client',
  where: ['private'],
  ...(when ? { when } : {}),
})
const staff = (name: string, ...where: Where[]): Declared => ({ name, audience: 'staff', where })
const admin = (name: string, ...where: Where[]): Declared => ({ name, audience: 'admin', where })

export const COMMANDS: readonly Declared[] = [
  client('start'),
  client('tariffs'),
  client('plan', (d) => (d.plans?.length ?? 0) > 0),
  client('status'),
  client('waitlist'),
  client('switch'),
  client('transcript'),
  client('timezone'),
  client('help'),
  client('terms'),
  client('privacy'),
  client('mydata'),
  client('paysupport'),
  client('cancel'),
  client('forget'),
  // In a consultation's topic (src/bot/features/staff.ts, experts.ts, drafting.ts).
  staff('card', 'group'),
  staff('note', 'group'),
  admin('extend', 'group'),
  staff('close', 'group'),
  staff('assign', 'group'),
  staff('mute', 'group'),
  staff('unmute', 'group'),
  staff('s', 'group'),
  staff('draft', 'group'),
  // In a topic: this topic's client; elsewhere: /ban <user id> (src/bot/features/admin-tools.ts).
  admin('ban', 'group', 'private'),
  admin('unban', 'group', 'private'),
  // Anywhere the staff work.
  staff('away', 'group', 'private'),
  staff('back', 'group', 'private'),
  staff('snippet', 'group', 'private'),
  staff('dashboard', 'group', 'private'),
  staff('report', 'group'),
  // The admins' tools (src/bot/features/admin-payments.ts, admin-tools.ts, drafting.ts).
  admin('refund', 'group', 'private'),
  admin('refunds', 'group', 'private'),
  admin('reconcile', 'group', 'private'),
  admin('startdate', 'group', 'private'),
  admin('grant', 'group', 'private'),
  admin('reopen', 'group', 'private'),
  admin('bans', 'group', 'private'),
  admin('tz', 'group', 'private'),
  admin('write', 'group', 'private'),
  admin('stuck', 'group', 'private'),
  admin('stars', 'group', 'private'),
  admin('drafts', 'group'),
  admin('draft_commit', 'group'),
  admin('draft_release', 'group'),
  // In private with the bot (src/bot/features/setup.ts, settings, mine.ts).
  staff('mine', 'private'),
  staff('staff', 'private'),
  staff('invite', 'private'),
  staff('myname', 'private'),
  staff('settings', 'private'),
  admin('setup', 'private'),
]

/**
 * The desk's commands for one audience and place: an admin has the staff's commands and the admins' own; a staff
 * member in private has the clients' commands too.
 */
export function commandsFor(desk: DeskRuntime, audience: Audience, where: Where): Declared[] {
  const of = (a: Audience) => (a === 'admin' ? ['staff', 'admin'] : [a])
  return COMMANDS.filter(
    (c) =>
      (of(audience).includes(c.audience) ||
        (audience !== 'client' && where === 'private' && c.audience === 'client')) &&
      (c.audience === 'client' || c.where.includes(where)) &&
      (c.when?.(desk) ?? true),
  )
}

/**
 * Whether the message is a command, ours or not, the way grammY's command() recognises one (the rule every handler
 * of src/bot/features is matched by): a bot_command entity at offset 0 of the text, whichever of the text's entities
 * that is (a command the client formatted has a second entity at 0, which may come first). A caption is no command,
 * as for grammY. The commands plugin's own matching (a "/word" anywhere in the text) is for its "did you mean", not
 * for this: a question that quotes "/etc/hosts" is still a question.
 */
export function isCommand(ctx: Context): boolean {
  return ctx.has(':entities:bot_command') && leadingCommand(ctx.msg) !== undefined
}

/** The message's command as grammY defines one: a bot_command entity at offset 0, whichever entity comes first. */
export function leadingCommand(m: { entities?: MessageEntity[] | undefined }): MessageEntity | undefined {
  return m.entities?.find((e) => e.type === 'bot_command' && e.offset === 0)
}

/**
 * For the answer to a command nobody took: the commands of the asker's audience here, as "/a, /b, ...", and the
 * nearest one to what they typed ("did you mean"), by @grammyjs/commands' similarity (its commands() middleware is
 * installed in src/bot/bot.ts); `none` when nothing is near.
 */
export function unknownCommandHelp(
  ctx: BotContext,
  audience: Audience,
  where: Where,
): { commands: string; near: string } {
  const declared = commandsFor(ctx.desk, audience, where)
  const group = new CommandGroup<BotContext>()
  for (const c of declared) group.command(c.name, c.name)
  const notFound = commandNotFound<CommandsFlavor<BotContext>, BotContext>(group, {
    ignoreLocalization: true,
  })
  const near = notFound(ctx) ? ctx.commandSuggestion : null
  return { commands: declared.map((c) => `/${c.name}`).join(', '), near: near ?? 'none' }
}

/** The staff's private chats (everyone on the staff, once). */
function staffIds(desk: DeskRuntime): number[] {
  return [...new Set([...desk.staff.admins, ...desk.staff.experts])]
}

/** The admins' private chats (the owner is one of the admins). */
function adminIds(desk: DeskRuntime): number[] {
  return [...new Set([...desk.staff.admins, ...(desk.staff.owner !== undefined ? [desk.staff.owner] : [])])]
}

/** The groups of the desk: the home group and the listed ones, once each. */
function groupIds(desk: DeskRuntime): number[] {
  const ids = staffGroupsOf(desk).map((g) => g.chatId)
  if (desk.staffChatId !== undefined) ids.unshift(desk.staffChatId)
  return [...new Set(ids)].filter((id) => isStaffGroup(desk, id))
}

/** The plugin's group of the desk's commands, with every scope and language. */
export function deskCommandGroup(deps: Pick<Deps, 'i18n'>, desk: DeskRuntime): CommandGroup<BotContext> {
  const group = new CommandGroup<BotContext>()
  const describe = (lang: string, name: string) => deps.i18n.t(lang, `cmd-${name}`)
  const scopesOf = (c: Declared): BotCommandScope[] => {
    const chats = (ids: number[]) => ids.map((id): BotCommandScope => ({ type: 'chat', chat_id: id }))
    const privates = chats(c.audience === 'admin' ? adminIds(desk) : staffIds(desk))
    if (c.audience === 'client') return [{ type: 'all_private_chats' }, ...privates]
    return [
      ...(c.where.includes('group')
        ? groupIds(desk).map((id): BotCommandScope => ({ type: 'chat', chat_id: id }))
        : []),
      ...(c.where.includes('private') ? privates : []),
    ]
  }
  for (const c of COMMANDS) {
    if (!(c.when?.(desk) ?? true)) continue
    const cmd = group.command(c.name, describe(desk.defaultLanguage, c.name))
    // Described in the languages the desk speaks (rules.languages); a client whose Telegram speaks another sees the
    // default menu, in the desk's default language: the language the bot will answer in.
    for (const lang of desk.rules.languages)
      cmd.localize(lang as LanguageCode, c.name, describe(lang, c.name))
    for (const scope of scopesOf(c)) cmd.addToScope(scope)
  }
  return group
}

/**
 * Sets every menu of the desk (each scope, by default and per language), and deletes each scope's menu in a language
 * the desk no longer speaks (set before the owner changed rules.languages). A scope Telegram refuses (a staff
 * member's private chat that does not exist yet) is logged and skipped; the others are set. `current` is asked
 * before each call: once it says no (the menus changed meanwhile), the run stops and leaves the menus to the run
 * the change queued, so an older run never writes over a newer one's.
 */
export async function setDeskCommands(
  api: Api,
  deps: Pick<Deps, 'i18n' | 'log'>,
  desk: DeskRuntime,
  current: () => boolean = () => true,
): Promise<void> {
  const { scopes } = deskCommandGroup(deps, desk).toArgs()
  const languages = [...desk.rules.languages] as readonly string[]
  const stale = () => {
    if (current()) return false
    deps.log.info({ desk: desk.slug }, 'command menus changed meanwhile: the newer run sets them')
    return true
  }
  for (const s of scopes) {
    const commands = s.commands.map((c) => ({ command: c.command, description: c.description }))
    const other = { scope: s.scope, ...(s.language_code ? { language_code: s.language_code } : {}) }
    try {
      if (stale()) return
      await api.setMyCommands(commands, other)
      if (s.language_code) continue
      for (const lang of LANGUAGES)
        if (!languages.includes(lang)) {
          if (stale()) return
          await api.deleteMyCommands({ scope: s.scope, language_code: lang })
        }
    } catch (err) {
      if (s.scope?.type !== 'chat') throw err
      deps.log.info({ desk: desk.slug, chat_id: s.scope.chat_id }, 'command menu not set for this chat')
    }
  }
}

/**
 * The job that sets a desk's menus again after its staff or groups changed, sent for the settings version that
 * changed them. A worker whose settings have not reached that version yet comes back in a second; a run whose menus
 * change while it goes stops (see setDeskCommands): the change sent a run of its own.
 */
export const commandsQueue = defineQueue<{ botId: number; version?: number }>('bot.commands', {
  retryLimit: 3,
  retryDelay: 30,
})

/**
 * Queues the menus' run for the desk's settings version, after a change that touches them: one job per desk and
 * version (its id), however many bot processes saw the change.
 */
export function queueDeskCommands(deps: Pick<Deps, 'db' | 'jobs'>, desk: DeskRuntime) {
  const version = desk.settingsVersion ?? 0
  return deps.jobs.send(
    deps.db,
    commandsQueue,
    { botId: desk.botId, version },
    { id: jobId(`${commandsQueue.name}:${desk.botId}:${version}`) },
  )
}

export async function handleCommandsJob(
  deps: Deps,
  data: { botId: number; version?: number },
): Promise<void> {
  const desk = deps.desk(data.botId)
  if ((desk.settingsVersion ?? 0) < (data.version ?? 0))
    throw new JobDeferred(1, 'command menus: the settings change has not reached this process yet')
  const started = menuKey(desk)
  await setDeskCommands(deps.api(data.botId), deps, desk, () => menuKey(desk) === started)
}

/**
 * Whether a settings change touches the menus: the staff, the groups, whether plans are sold, or the languages the
 * desk speaks.
 */
type MenuPart = Pick<
  DeskRuntime,
  'staff' | 'staffChatId' | 'staffGroups' | 'plans' | 'defaultLanguage' | 'rules'
>
export function menusChanged(before: MenuPart, after: MenuPart): boolean {
  return menuKey(before) !== menuKey(after)
}

function menuKey(d: MenuPart): string {
  return JSON.stringify([
    d.staff.admins,
    d.staff.experts,
    d.staffChatId,
    d.staffGroups ?? [],
    (d.plans?.length ?? 0) > 0,
    d.defaultLanguage,
    d.rules.languages,
  ])
}
