import { Composer, InlineKeyboard, type NextFunction } from 'grammy'
import { isStaffGroup } from '../../config/staff-groups'
import { type ConsultationTopic, consultationOfTopic, replyInTopic } from '../../consultations/desk.service'
import { answerWithSnippet } from '../../consultations/snippet-answer'
import {
  assignChoices,
  editSnippet,
  handOver,
  listSnippets,
  ownerOf,
  type ReplyTo,
  rememberStaffName,
  setAlertsMuted,
  setAway,
} from '../../experts/experts.service'
import { notifyNow } from '../../telegram/notify'
import { cut } from '../../text'
import type { BotContext } from '../context'
import { staffOf } from './staff'

/**
 * The experts' commands (src/experts). In a consultation topic: /assign (buttons listing the staff; a press hands
 * the consultation over), /mute and /unmute (private alerts of this consultation), /s NAME (a snippet as the
 * expert's answer). Anywhere in the staff group or in the private chat with the bot: /away, /back, and for admins
 * /snippet add|list|del. Anything else passes on (the staff feature, the client's desk).
 */
export const expertsFeature = new Composer<BotContext>()

const TOPIC_COMMANDS = new Set(['assign', 'mute', 'unmute', 's'])
const ANYWHERE_COMMANDS = new Set(['away', 'back', 'snippet'])

/** grammY's command() matches `/name` and `/name@this_bot` at the start; the rest of the text is ctx.match. */
for (const name of [...TOPIC_COMMANDS, ...ANYWHERE_COMMANDS])
  expertsFeature.command(name, (ctx, next) => expertCommand(ctx, next, { name, args: ctx.match.trim() }))

async function expertCommand(
  ctx: BotContext,
  next: NextFunction,
  cmd: { name: string; args: string },
): Promise<unknown> {
  const { deps, desk } = ctx
  const m = ctx.message
  // A caption that starts like a command is a message, as before: only texts are commands here.
  if (!m?.text) return next()
  const inGroup = isStaffGroup(desk, m.chat.id)
  if (!inGroup && m.chat.type !== 'private') return next()
  const who = staffOf(ctx, m)
  // A client typing /away in private is a client: the desk says the command is unknown.
  if (!who) return next()
  const route =
    inGroup && m.is_topic_message && m.message_thread_id
      ? await consultationOfTopic(deps.db, desk.botId, m.chat.id, m.message_thread_id)
      : undefined
  if (TOPIC_COMMANDS.has(cmd.name) && !route) return next()
  if (m.from && !m.sender_chat) await rememberStaffName(deps, desk, who.id, who.label)

  const updateId = ctx.update.update_id
  const replyTo: ReplyTo = {
    chatId: m.chat.id,
    ...(m.is_topic_message && m.message_thread_id ? { threadId: m.message_thread_id } : {}),
  }
  const answer = (key: string, params: Record<string, string | number> = {}, markup?: InlineKeyboard) =>
    route
      ? replyInTopic(
          deps,
          topicConsultation(route),
          key,
          params,
          `experts:cmd:${desk.botId}:${m.message_id}`,
          markup,
        )
      : notifyNow(deps, {
          botId: desk.botId,
          ...replyTo,
          lang: desk.defaultLanguage,
          key,
          params,
          ...(markup ? { replyMarkup: markup } : {}),
          dedupeKey: `experts:cmd:${desk.botId}:${m.chat.id}:${m.message_id}`,
        })

  switch (cmd.name) {
    case 'assign': {
      const c = route!
      const owner = await ownerOf(deps.db, desk, c.consultation_id)
      const kb = new InlineKeyboard()
      for (const s of await assignChoices(deps, desk, m.chat.id))
        kb.text(
          `${s.id === owner?.expertId ? '✓ ' : ''}${s.name}`,
          `ex:as:${c.consultation_id}:${s.id}`,
        ).row()
      return answer(
        'experts-assign-pick',
        { owner: owner?.name ?? deps.i18n.t(desk.defaultLanguage, 'desk-card-unassigned') },
        kb,
      )
    }
    case 'mute':
    case 'unmute':
      await setAlertsMuted(deps, desk, {
        updateId,
        consultationId: route!.consultation_id,
        expertId: who.id,
        muted: cmd.name === 'mute',
      })
      return
    case 's': {
      const name = cmd.args.split(/\s+/)[0]?.toLowerCase() ?? ''
      if (!name) return answer('experts-snippet-send-usage')
      const r = await answerWithSnippet(deps, desk, {
        updateId,
        consultationId: route!.consultation_id,
        staffId: who.id,
        name,
      })
      if (r.status === 'unknown') return answer('experts-snippet-unknown', { name })
      if (r.status === 'sent' && r.result.status !== 'recorded') return answer('experts-snippet-not-sent')
      return
    }
    case 'away':
    case 'back':
      await setAway(deps, desk, {
        updateId,
        userId: who.id,
        name: who.label,
        away: cmd.name === 'away',
        replyTo,
      })
      return
    case 'snippet': {
      const parts = /^(\S+)(?:\s+(\S+))?\s*([\s\S]*)$/.exec(cmd.args)
      const op = parts?.[1]?.toLowerCase()
      if (op === 'list') {
        const list = await listSnippets(deps, desk)
        const t = (k: string) => deps.i18n.t(desk.defaultLanguage, k)
        const text = list.length
          ? [
              t('experts-snippet-list'),
              ...list.map((s) => `• ${s.name}${s.source === 'config' ? ' ⚙️' : ''}: ${short(s.text)}`),
            ].join('\n')
          : t('experts-snippet-list-empty')
        // Read-only: answered directly, in the thread it was asked in.
        await ctx.reply(text, replyTo.threadId ? { message_thread_id: replyTo.threadId } : {})
        return
      }
      if (who.role !== 'admin') return answer('experts-snippet-admins-only')
      const name = (parts?.[2] ?? '').toLowerCase()
      const text = (parts?.[3] ?? '').trim()
      if ((op !== 'add' && op !== 'del') || !name || (op === 'add' && !text))
        return answer('experts-snippet-usage')
      const r = await editSnippet(deps, desk, {
        updateId,
        op,
        name,
        ...(op === 'add' ? { text } : {}),
        by: who.id,
        replyTo,
      })
      if (r === 'bad-name') return answer('experts-snippet-bad-name')
      return
    }
  }
}

function topicConsultation(route: ConsultationTopic) {
  return { id: route.consultation_id, bot_id: route.bot_id }
}

function short(s: string): string {
  const t = s.replace(/\s+/g, ' ').trim()
  return cut(t, 60, { ellipsis: '…' })
}

expertsFeature.callbackQuery(/^ex:as:(\d{1,15}):(\d{1,15})$/, async (ctx) => {
  const { deps, desk } = ctx
  const q = ctx.callbackQuery
  const t = (k: string, p?: Record<string, string | number>) => deps.i18n.t(desk.defaultLanguage, k, p)
  if (!isStaffGroup(desk, q.message?.chat.id)) return ctx.answerCallbackQuery()
  const who = staffOf(ctx, { from: q.from })
  if (!who) return ctx.answerCallbackQuery({ text: t('experts-staff-only'), show_alert: true })
  const r = await handOver(deps, desk, {
    consultationId: Number(ctx.match[1]),
    to: Number(ctx.match[2]),
    by: who.id,
    byLabel: who.label,
  })
  if (r.status === 'handed') {
    const owner = await ownerOf(deps.db, desk, Number(ctx.match[1]))
    return ctx.answerCallbackQuery({ text: t('experts-assign-done', { name: owner?.name ?? String(r.to) }) })
  }
  const key = {
    already: 'experts-assign-already',
    'not-staff': 'experts-assign-not-staff',
    'other-group': 'experts-assign-other-group',
    'not-yours': 'staff-cb-other-group',
    unknown: 'experts-assign-unknown',
  }[r.status]
  return ctx.answerCallbackQuery({ text: t(key), show_alert: r.status !== 'already' })
})
