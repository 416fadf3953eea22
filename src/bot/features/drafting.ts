import { Composer } from 'grammy'
import type { Message } from 'grammy/types'
import { DateTime } from 'luxon'
import { isStaffGroup } from '../../config/staff-groups'
import { consultationOfTopic } from '../../consultations/desk.service'
import {
  captureEdit,
  discardDraft,
  isEditingDraft,
  sendDraft,
  startEdit,
  stopDraft,
} from '../../drafting/actions'
import type { ActionResult, ReconcileResult } from '../../drafting/drafting.model'
import { reconcileDraft, unknownDrafts } from '../../drafting/reconcile'
import { refusalNote, requestDraft } from '../../drafting/request'
import { notifyNow } from '../../telegram/notify'
import { leadingCommand } from '../commands'
import type { BotContext } from '../context'
import { staffOf } from './staff'

/**
 * AI drafts in the staff supergroup (issue 7). Runs before the desk's staff feature: /draft and the admins'
 * reconciliation commands are handled here, and a staff member's text while they are editing a draft becomes the
 * draft's next version instead of going to the client. Everything else passes on untouched.
 *
 * Handlers only unpack the update and call one service function; the service writes the topic notes and the job
 * through the outbox in its own transaction. Idempotency: /draft by its message (the draft's request id), buttons
 * by the draft's state under its row lock, a new draft from a button by the message it is on plus who pressed it,
 * an edit by its message (draft_edit), admin replies by the command's message (notify dedupe key).
 */
export const draftingFeature = new Composer<BotContext>()
const group = draftingFeature.filter((ctx) => isStaffGroup(ctx.desk, ctx.chat?.id))

const ADMIN_COMMANDS = new Set(['drafts', 'draft_commit', 'draft_release'])

/** "/draft model:gpt-x shorter, with a code example" -> model and instruction. */
export function parseDraftArgs(args: string): { model: string | null; instruction: string | null } {
  const m = /^model:(\S+)\s*/i.exec(args)
  const rest = (m ? args.slice(m[0].length) : args).trim()
  return { model: m?.[1] ?? null, instruction: rest || null }
}

// grammY's command() matches `/name` and `/name@this_bot` at the start of a text; the rest is ctx.match.
for (const name of ADMIN_COMMANDS)
  group.command(name, (ctx, next) =>
    ctx.message?.text ? adminCommand(ctx, ctx.message, { name, args: ctx.match.trim() }) : next(),
  )

group.command('draft', async (ctx, next) => {
  const m = ctx.message
  if (!m?.text) return next()
  const inTopic = m.is_topic_message && m.message_thread_id !== undefined
  const who = staffOf(ctx, m)
  // Non-staff /draft is ignored, as is /draft outside a consultation topic.
  if (!who || !inTopic) return
  const route = await consultationOfTopic(ctx.deps.db, ctx.desk.botId, m.chat.id, m.message_thread_id!)
  if (!route) return
  const { model, instruction } = parseDraftArgs(ctx.match.trim())
  // A database failure goes up to the inbox, which runs the command again later (nothing was reserved or
  // queued); the expert is not asked to repeat it.
  const r = await requestDraft(ctx.deps, ctx.desk, {
    consultationId: route.consultation_id,
    staffId: who.id,
    source: 'command',
    chatId: m.chat.id,
    messageId: m.message_id,
    model,
    instruction,
  })
  ctx.log.info(
    {
      consultation_id: route.consultation_id,
      status: r.status,
      ...('refusal' in r ? { reason: r.refusal.reason } : {}),
    },
    'draft requested',
  )
})

group.on('message', async (ctx, next) => {
  const m = ctx.message
  const inTopic = m.is_topic_message && m.message_thread_id !== undefined
  // A staff member's text while they edit a draft: the draft's next version, not a message to the client.
  if (!leadingCommand(m) && inTopic && m.text && !m.text.startsWith(ctx.desk.internalNotePrefix)) {
    const who = staffOf(ctx, m)
    if (who && (await hasEditingDraftOrEdit(ctx, who.id, m))) {
      const route = await consultationOfTopic(ctx.deps.db, ctx.desk.botId, m.chat.id, m.message_thread_id!)
      if (route) {
        const r = await captureEdit(ctx.deps, ctx.desk, {
          consultationId: route.consultation_id,
          staffId: who.id,
          chatId: m.chat.id,
          messageId: m.message_id,
          text: m.text,
        })
        if (r !== 'none') return
      }
    }
  }
  return next()
})

function hasEditingDraftOrEdit(ctx: BotContext, staffId: number, m: Message): Promise<boolean> {
  return isEditingDraft(ctx.deps, ctx.desk, { staffId, chatId: m.chat.id, messageId: m.message_id })
}

// ---------------------------------------------------------------------------------------------------------------
// Buttons

/** "Draft answer" / "Try again": a new draft, keyed by the message the button is on and who pressed it. */
group.callbackQuery(/^dr:new:(\d{1,15})$/, async (ctx) => {
  const q = ctx.callbackQuery
  const t = (key: string, p?: Record<string, string | number>) =>
    ctx.deps.i18n.t(ctx.desk.defaultLanguage, key, p)
  const who = staffOf(ctx, { from: q.from })
  if (!who) return ctx.answerCallbackQuery({ text: t('drafting-cb-staff-only'), show_alert: true })
  const msg = q.message
  if (!msg) return ctx.answerCallbackQuery()
  const r = await requestDraft(ctx.deps, ctx.desk, {
    consultationId: Number(ctx.match[1]),
    staffId: who.id,
    source: 'button',
    chatId: msg.chat.id,
    messageId: msg.message_id,
  })
  if (r.status === 'other-group')
    return ctx.answerCallbackQuery({ text: t('staff-cb-other-group'), show_alert: true })
  if (r.status === 'refused') {
    const n = refusalNote(r.refusal)
    return ctx.answerCallbackQuery({ text: t(n.key, n.params), show_alert: true })
  }
  return ctx.answerCallbackQuery({
    text: t(r.status === 'queued' ? 'drafting-cb-queued' : 'drafting-cb-duplicate'),
  })
})

/** Send / Edit / Discard on a posted draft version. */
group.callbackQuery(/^dr:([sed]):(\d{1,15}):(\d{1,6})$/, async (ctx) => {
  const q = ctx.callbackQuery
  const t = (key: string, p?: Record<string, string | number>) =>
    ctx.deps.i18n.t(ctx.desk.defaultLanguage, key, p)
  const who = staffOf(ctx, { from: q.from })
  if (!who) return ctx.answerCallbackQuery({ text: t('drafting-cb-staff-only'), show_alert: true })
  const action = { draftId: Number(ctx.match[2]), version: Number(ctx.match[3]), staffId: who.id }
  const op = ctx.match[1]
  const r =
    op === 's'
      ? await sendDraft(ctx.deps, ctx.desk, action)
      : op === 'd'
        ? await discardDraft(ctx.deps, ctx.desk, action)
        : await startEdit(ctx.deps, ctx.desk, action)
  const done = op === 's' ? 'drafting-cb-sent' : op === 'd' ? 'drafting-cb-discarded' : 'drafting-cb-edit'
  await ctx.answerCallbackQuery({
    text: actionText(t, r, done),
    ...(r.status === 'done' ? {} : { show_alert: true }),
  })
  // The used draft loses its buttons (cosmetic: the state already refuses a second use).
  if (
    ((r.status === 'done' || r.status === 'withheld') && op !== 'e') ||
    (r.status === 'already' && r.state !== 'editing')
  )
    await ctx.editMessageReplyMarkup({ reply_markup: { inline_keyboard: [] } }).catch(() => {})
})

/**
 * Stop on a draft being written: in the topic (the "Drafting #n" note) and in the requesting expert's private chat
 * (the streamed draft's message). Only staff who may act on the draft's consultation; the service checks again under
 * the draft's lock.
 */
draftingFeature.callbackQuery(/^dr:x:(\d{1,15})$/, async (ctx) => {
  const t = (key: string, p?: Record<string, string | number>) =>
    ctx.deps.i18n.t(ctx.desk.defaultLanguage, key, p)
  const chat = ctx.chat
  if (chat?.type !== 'private' && !isStaffGroup(ctx.desk, chat?.id)) return ctx.answerCallbackQuery()
  const who = staffOf(ctx, { from: ctx.callbackQuery.from })
  if (!who) return ctx.answerCallbackQuery({ text: t('drafting-cb-staff-only'), show_alert: true })
  const r = await stopDraft(ctx.deps, ctx.desk, { draftId: Number(ctx.match[1]), staffId: who.id })
  ctx.log.info({ draft_id: Number(ctx.match[1]), status: r.status }, 'draft stop')
  const text =
    r.status === 'done'
      ? t('drafting-cb-stopped')
      : r.status === 'already'
        ? t(r.state === 'stopped' ? 'drafting-cb-already-stopped' : 'drafting-cb-finished')
        : actionText(t, r, 'drafting-cb-stopped')
  return ctx.answerCallbackQuery({ text, ...(r.status === 'done' ? {} : { show_alert: true }) })
})

function actionText(
  t: (key: string, p?: Record<string, string | number>) => string,
  r: ActionResult,
  done: string,
): string {
  switch (r.status) {
    case 'done':
      return t(done)
    case 'withheld':
      return t('drafting-cb-withheld')
    case 'already':
      return t(
        r.state === 'sent'
          ? 'drafting-cb-already-sent'
          : r.state === 'discarded'
            ? 'drafting-cb-already-discarded'
            : 'drafting-cb-already-editing',
      )
    case 'stale':
      return t('drafting-cb-stale', { version: r.version })
    case 'other-group':
      return t('staff-cb-other-group')
    case 'not_ready':
      return t('drafting-cb-not-ready', { state: r.state })
    default:
      return t('drafting-cb-not-found')
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Admins: drafts whose outcome is unknown

async function adminCommand(ctx: BotContext, m: Message, cmd: { name: string; args: string }): Promise<void> {
  const { deps, desk } = ctx
  const who = staffOf(ctx, m)
  if (!who) return
  const lang = desk.defaultLanguage
  const reply = (key: string, params: Record<string, string | number> = {}) =>
    notifyNow(deps, {
      botId: desk.botId,
      chatId: m.chat.id,
      ...(m.is_topic_message && m.message_thread_id ? { threadId: m.message_thread_id } : {}),
      lang,
      key,
      params,
      dedupeKey: `drafting:admin:${desk.botId}:${m.chat.id}:${m.message_id}`,
    })
  if (who.role !== 'admin') {
    await reply('drafting-admin-only')
    return
  }
  if (cmd.name === 'drafts') {
    const list = await unknownDrafts(deps, desk)
    if (list.length === 0) {
      await reply('drafting-unknown-none')
      return
    }
    const lines = list.map((d) =>
      deps.i18n.t(lang, 'drafting-unknown-item', {
        id: String(d.id),
        consultation: String(d.consultationId),
        by: String(d.requestedBy),
        age: DateTime.fromJSDate(d.createdAt, { zone: desk.schedule.timezone }).toFormat('dd.MM HH:mm'),
        held: d.held,
        reason: d.reason ?? '?',
      }),
    )
    await reply('drafting-unknown-list', { list: lines.join('\n') })
    return
  }
  const parts = cmd.args.split(/\s+/).filter(Boolean)
  const id = Number(parts[0])
  const nums = parts.slice(1).map(Number)
  const validUsage = nums.length === 2 && nums.every((n) => Number.isSafeInteger(n) && n >= 0)
  if (
    !Number.isSafeInteger(id) ||
    id <= 0 ||
    (cmd.name === 'draft_commit' && nums.length !== 0 && !validUsage) ||
    (cmd.name === 'draft_release' && nums.length !== 0)
  ) {
    await reply('drafting-reconcile-usage')
    return
  }
  const r = await reconcileDraft(deps, desk, {
    draftId: id,
    adminId: who.id,
    action: cmd.name === 'draft_commit' ? 'commit' : 'release',
    ...(validUsage ? { usage: { input: nums[0]!, output: nums[1]! } } : {}),
  })
  ctx.log.info({ draft_id: id, action: cmd.name, status: r.status }, 'draft reconciliation')
  const [key, params] = reconcileReply(id, r)
  await reply(key, params)
}

function reconcileReply(id: number, r: ReconcileResult): [string, Record<string, string | number>] {
  const base = { id: String(id) }
  switch (r.status) {
    case 'committed':
      return ['drafting-reconcile-committed', { ...base, charged: r.charged }]
    case 'released':
      return ['drafting-reconcile-released', base]
    case 'not_unknown':
      return [
        'drafting-reconcile-not-unknown',
        { ...base, state: r.state, reconciliation: r.reconciliation ?? 'none' },
      ]
    case 'ledger_refused':
      return ['drafting-reconcile-refused', { ...base, reason: r.reason }]
    default:
      return ['drafting-reconcile-not-found', base]
  }
}
