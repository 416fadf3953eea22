import { Composer, InlineKeyboard } from 'grammy'
import type { Message } from 'grammy/types'
import { deskRole, isAdminRole, isStaffRole } from '../../config/access'
import { isStaffGroup } from '../../config/staff-groups'
import { recordEditedMessage, recordStaffMessage } from '../../consultations/answers'
import {
  addInternalNote,
  type ConsultationTopic,
  claimStaffCommand,
  closeEarly,
  consultationOfTopic,
  extendWindowOnce,
  replyInTopic,
  requestCard,
  setClientBan,
} from '../../consultations/desk.service'
import { rememberStaffName } from '../../experts/experts.service'
import { contentTypeOf } from '../../routing/content'
import { roleOfSender } from '../access'
import { leadingCommand, unknownCommandHelp } from '../commands'
import type { BotContext } from '../context'

/**
 * The staff's side of the desk, in the consultation topics of the staff supergroup. Topics that are not
 * consultations (dispute tickets, General) pass on to other features.
 *
 * Only the desk's staff (experts and admins from config) are relayed to the client; an anonymous admin (a message
 * with sender_chat = the group) counts as an admin only where the desk's config says so (staff.anonymousAdmins).
 * Messages from anyone else, from bots, starting with the internal-note prefix, service messages and commands (for
 * this bot or any other) stay in the topic.
 */
export const staffFeature = new Composer<BotContext>()
const group = staffFeature.filter((ctx) => isStaffGroup(ctx.desk, ctx.chat?.id))

type Role = 'admin' | 'expert'
interface Staff {
  role: Role
  /** The user id; the group's id for an anonymous admin. */
  id: number
  label: string
}

/**
 * Who the sender is on this desk, where they write (the desk's policy, src/config/access.ts): an owner counts as an
 * admin here; an anonymous admin acts as the group it posts in. Undefined: not staff here.
 */
export function staffOf(ctx: BotContext, m: Pick<Message, 'from' | 'sender_chat'>): Staff | undefined {
  const r = roleOfSender(ctx, m)
  if (!isStaffRole(r)) return undefined
  const role: Role = isAdminRole(r) ? 'admin' : 'expert'
  if (m.sender_chat) return { role, id: m.sender_chat.id, label: 'anonymous admin' }
  const u = m.from!
  const label = [u.first_name, u.last_name].filter(Boolean).join(' ') || `id ${u.id}`
  return { role, id: u.id, label }
}

/**
 * Whether the text starts with a command, and whether it is ours (not `/x@other_bot`). A command is never a message
 * for the client, whichever bot it is for (the text starts with "/": a command-looking text without the entity too).
 * The topic commands themselves are matched by grammY's command() below; this sees the rest.
 */
function commandOf(ctx: BotContext, m: Message): { ours: boolean } | undefined {
  const e = leadingCommand(m)
  if (!m.text) return undefined
  if (!e) return /^\/[A-Za-z0-9_]/.test(m.text) ? { ours: false } : undefined
  const at = m.text.slice(1, e.length).split('@')[1]
  return { ours: !at || !ctx.me?.username || at.toLowerCase() === ctx.me.username.toLowerCase() }
}

/** Hours for /extend: a plain decimal ("4", "1.5", "1,5"), more than 0 and at most 90 days; else undefined. */
export function parseHours(args: string): number | undefined {
  if (!/^\d{1,4}(?:[.,]\d{1,2})?$/.test(args)) return undefined
  const hours = Number(args.replace(',', '.'))
  return hours > 0 && hours <= 24 * 90 ? hours : undefined
}

async function routeOf(ctx: BotContext, m: Message): Promise<ConsultationTopic | undefined> {
  if (!m.is_topic_message || !m.message_thread_id) return undefined
  return consultationOfTopic(ctx.deps.db, ctx.desk.botId, m.chat.id, m.message_thread_id)
}

/**
 * The topic commands, by grammY's command() (`/name` or `/name@this_bot`, the rest of the text in ctx.match): only
 * in a consultation topic and from its staff; anything else passes on (an admin's /ban <user id> outside topics, a
 * listed expert's refusal below).
 */
const TOPIC_COMMANDS = ['card', 'note', 'extend', 'close', 'ban', 'unban'] as const
for (const name of TOPIC_COMMANDS)
  group.command(name, async (ctx, next) => {
    const m = ctx.message
    if (!m?.text) return next()
    const route = await routeOf(ctx, m)
    const who = route && staffOf(ctx, m)
    if (!route || !who) return next()
    if (m.from && !m.sender_chat) await rememberStaffName(ctx.deps, ctx.desk, who.id, who.label)
    await command(ctx, route, who, m, { name, args: ctx.match.trim() })
  })

group.on('message', async (ctx, next) => {
  const m = ctx.message
  const route = await routeOf(ctx, m)
  if (!route) return next()
  const who = staffOf(ctx, m)
  if (!who) return refuseOtherGroup(ctx, route, m)
  // The name Telegram shows, kept for /report, the dashboard and SLA mentions (src/experts/names.ts).
  if (m.from && !m.sender_chat) await rememberStaffName(ctx.deps, ctx.desk, who.id, who.label)
  const cmd = commandOf(ctx, m)
  // A command of ours that no feature took is unknown here; another bot's stays in the topic.
  if (cmd) return cmd.ours ? unknownCommand(ctx, route, who, m) : undefined
  const text = m.text ?? m.caption ?? ''
  if (text.startsWith(ctx.desk.internalNotePrefix) || !contentTypeOf(m)) return
  const r = await recordStaffMessage(ctx.deps, ctx.desk, {
    consultationId: route.consultation_id,
    staffId: who.id,
    message: m,
  })
  if (r.status === 'recorded' && r.answered)
    ctx.log.info({ consultation_id: route.consultation_id, appeal: r.answered }, 'appeal answered')
})

/**
 * An expert of the desk writing in a topic of a group that does not list them: nothing reaches the client, and
 * they are told so in the topic (once per message) rather than left believing they answered.
 */
async function refuseOtherGroup(ctx: BotContext, route: ConsultationTopic, m: Message): Promise<void> {
  const { deps, desk } = ctx
  if (!m.from || m.sender_chat || deskRole(desk, m.from.id) !== 'expert') return
  const text = m.text ?? m.caption ?? ''
  if (text.startsWith(desk.internalNotePrefix) || !contentTypeOf(m)) return
  const c = { id: route.consultation_id, bot_id: route.bot_id, user_id: route.user_id }
  await replyInTopic(
    deps,
    c,
    'desk-not-your-group',
    {},
    `desk:other-group:${desk.botId}:${m.chat.id}:${m.message_id}`,
  )
}

group.on('edited_message', async (ctx, next) => {
  const m = ctx.editedMessage
  const route = await routeOf(ctx, m)
  if (!route) return next()
  if (!staffOf(ctx, m)) return
  // Only messages that were relayed have a copy to edit; a note stays a note.
  await recordEditedMessage(ctx.deps, ctx.desk, m)
})

/**
 * An admin demoted after the command arrived: the write's own re-check refused it (the services' 'forbidden'), and
 * the topic is told in the words of the admin tools (src/bot/features/admin-tools.ts).
 */
const NOT_ADMIN_NOW = 'adm-no-longer-admin'

async function command(
  ctx: BotContext,
  route: ConsultationTopic,
  who: Staff,
  m: Message,
  cmd: { name: (typeof TOPIC_COMMANDS)[number]; args: string },
): Promise<void> {
  const { deps, desk } = ctx
  const c = { id: route.consultation_id, bot_id: route.bot_id, user_id: route.user_id }
  const reply = (key: string, params: Record<string, string | number> = {}) =>
    replyInTopic(deps, c, key, params, `desk:cmd:${desk.botId}:${m.message_id}`)
  const adminOnly = async () => {
    if (who.role === 'admin') return true
    await reply('desk-cmd-admins-only')
    return false
  }
  // Commands that change something run once per update, whatever Telegram redelivers.
  const once = () => claimStaffCommand(deps, desk.botId, ctx.update.update_id)

  switch (cmd.name) {
    case 'card':
      await requestCard(deps, c)
      return
    case 'note':
      if (!cmd.args) return reply('desk-cmd-note-usage')
      if (!(await once())) return
      await addInternalNote(deps, desk, {
        consultationId: c.id,
        actorId: who.id,
        text: cmd.args,
        messageId: m.message_id,
      })
      return
    case 'extend': {
      if (!(await adminOnly())) return
      const hours = parseHours(cmd.args)
      if (hours === undefined) return reply('desk-cmd-extend-usage')
      const r = await extendWindowOnce(deps, desk, {
        updateId: ctx.update.update_id,
        consultationId: c.id,
        hours,
        actorId: who.id,
        actorLabel: who.label,
      })
      if (r?.status === 'forbidden') await reply(NOT_ADMIN_NOW)
      if (r?.status === 'not-active') await reply('desk-cmd-not-active', { state: r.state })
      return
    }
    case 'close':
      await replyInTopic(
        deps,
        c,
        'desk-cmd-close-confirm',
        { id: String(c.id) },
        `desk:cmd:${desk.botId}:${m.message_id}`,
        new InlineKeyboard()
          .text(deps.i18n.t(desk.defaultLanguage, 'desk-cmd-close-yes'), `desk:close:${c.id}:yes`)
          .text(deps.i18n.t(desk.defaultLanguage, 'desk-cmd-close-no'), `desk:close:${c.id}:no`),
      )
      return
    case 'ban':
    case 'unban': {
      if (!(await adminOnly())) return
      // They act on the topic's client and take no argument: `/ban 123` or `/unban x` is refused, not half-read.
      if (cmd.args) return reply('desk-cmd-ban-usage', { cmd: cmd.name })
      if (!(await once())) return
      const banned = cmd.name === 'ban'
      const r = await setClientBan(deps, desk, {
        userId: route.user_id,
        actorId: who.id,
        actorLabel: who.label,
        banned,
        consultationId: c.id,
      })
      // 'done': the service's note in the topic says who did it.
      if (r === 'forbidden') await reply(NOT_ADMIN_NOW)
      if (r === 'already') await reply(banned ? 'desk-cmd-already-banned' : 'desk-cmd-not-banned')
      return
    }
  }
}

async function unknownCommand(
  ctx: BotContext,
  route: ConsultationTopic,
  who: Staff,
  m: Message,
): Promise<void> {
  const c = { id: route.consultation_id, bot_id: route.bot_id, user_id: route.user_id }
  await replyInTopic(
    ctx.deps,
    c,
    'desk-cmd-unknown',
    {
      prefix: ctx.desk.internalNotePrefix,
      ...unknownCommandHelp(ctx, who.role === 'admin' ? 'admin' : 'staff', 'group'),
    },
    `desk:cmd:${ctx.desk.botId}:${m.message_id}`,
  )
}

group.callbackQuery(/^desk:close:(\d{1,15}):(yes|no)$/, async (ctx) => {
  const q = ctx.callbackQuery
  const who = staffOf(ctx, { from: q.from })
  if (!who) return ctx.answerCallbackQuery({ text: ctx.t('desk-cmd-admins-only'), show_alert: true })
  if (ctx.match[2] === 'no') return ctx.answerCallbackQuery({ text: ctx.t('desk-cmd-close-cancelled') })
  const r = await closeEarly(ctx.deps, ctx.desk, {
    consultationId: Number(ctx.match[1]),
    actorId: who.id,
    actorLabel: who.label,
  })
  await ctx.answerCallbackQuery(
    r.status === 'closed'
      ? {}
      : r.status === 'other-group'
        ? { text: ctx.t('staff-cb-other-group'), show_alert: true }
        : { text: ctx.t('desk-cmd-not-active', { state: r.state }), show_alert: true },
  )
})
