import { type Conversation, createConversation } from '@grammyjs/conversations'
import { Composer, type Context, InlineKeyboard } from 'grammy'
import type { Message } from 'grammy/types'
import { clientZone } from '../../clients/clients.service'
import { hasActiveConsultation } from '../../consultations/admission'
import {
  awaitDeclineReason,
  closeDispute,
  declineDispute,
  findDisputeByThread,
  MAX_REASON_LENGTH,
  openDispute,
  paymentsToDispute,
  relayStaffMessage,
} from '../../disputes/disputes.service'
import { refundDispute } from '../../payments/refunds'
import { cut, PLACEHOLDER_MAX } from '../../text'
import { formatDate } from '../../time/format'
import { actorIdOf, isAdminHere, isStaffHere } from '../access'
import type { BotContext } from '../context'
import { refundOutcomeText, say } from './admin-payments'

/**
 * /paysupport, the dispute desk Telegram requires of every selling bot.
 *
 * The client side is a short conversation (@grammyjs/conversations, state in Postgres via the conversation storage,
 * every side effect inside conversation.external): which payment (their recent ones by date and tariff, or "not in
 * the list"), then the reason (a reply to the prompt; while the client has an active consultation, other texts go on
 * to their expert; Cancel or /cancel leaves); a ticket is opened (or the text is added to the one already open for that payment)
 * and the client gets its number and when to expect an answer.
 *
 * The staff side is the ticket's topic in the staff group: the client card with Refund / Decline / Close (admins
 * only); staff messages in the topic are copied to the client like an expert's; messages starting with the internal
 * note prefix stay in the topic. After Decline, the admin's next message in the topic is the reason.
 */
export const paysupportFeature = new Composer<BotContext>()

/** A wait longer than this ends the conversation; the update then goes on to the other handlers. */
const WAIT_MS = 30 * 60_000

type PsConversation = Conversation<BotContext, Context>

async function paysupport(conversation: PsConversation, ctx: Context): Promise<void> {
  const start = await conversation.external(async (o: BotContext) => {
    const payments = await paymentsToDispute(o.deps, o.desk, o.from!.id, 8)
    const zone = await clientZone(o.deps.db, o.desk, o.from!.id)
    return {
      intro: o.t(payments.length ? 'ps-ask-payment' : 'ps-no-payments'),
      payments: payments.map((p) => ({
        id: p.id,
        label: o.t(p.refunded_at ? 'ps-payment-button-refunded' : 'ps-payment-button', {
          date: formatDate(p.created_at, zone, o.lang),
          title: p.title ?? '—',
          amount: p.total_amount,
        }),
      })),
      other: o.t('ps-other'),
      cancel: o.t('ps-cancel'),
      askReason: o.t('ps-ask-reason'),
      pickButton: o.t('ps-pick-button'),
      cancelled: o.t('ps-cancelled'),
      tooShort: o.t('ps-too-short'),
      placeholder: o.t('ps-reason-placeholder'),
    }
  })
  const kb = new InlineKeyboard()
  for (const p of start.payments) kb.text(p.label, `ps:pay:${p.id}`).row()
  kb.text(start.other, 'ps:other').row().text(start.cancel, 'ps:cancel')
  await ctx.reply(start.intro, { reply_markup: kb })

  // Anything but a button of this question goes on to the other handlers (a payment, a question to the expert).
  const choice = await conversation.waitForCallbackQuery(/^ps:(pay:\d{1,15}|other|cancel)$/, {
    maxMilliseconds: WAIT_MS,
    next: true,
  })
  await choice.answerCallbackQuery()
  const data = choice.callbackQuery.data
  if (data === 'ps:cancel') {
    await choice.reply(start.cancelled)
    return
  }
  const paymentId = data.startsWith('ps:pay:') ? Number(data.slice('ps:pay:'.length)) : null
  // The prompt says what it waits for (a reply to it, which force_reply opens in the client's app) and how to leave:
  // the question's message keeps only its Cancel button (an edit, no new message), and /cancel.
  await choice
    .editMessageReplyMarkup({ reply_markup: new InlineKeyboard().text(start.cancel, 'ps:cancel') })
    .catch(() => {})
  const ask = await choice.reply(start.askReason, {
    reply_markup: { force_reply: true, input_field_placeholder: cut(start.placeholder, PLACEHOLDER_MAX) },
  })

  let reason: string
  for (;;) {
    const m = await conversation.waitUntil(
      (c) => c.callbackQuery?.data === 'ps:cancel' || typeof c.message?.text === 'string',
      { maxMilliseconds: WAIT_MS, next: true },
    )
    if (m.callbackQuery) {
      await m.answerCallbackQuery({ text: start.cancelled })
      return
    }
    const message = m.message!
    const text = message.text!.trim()
    if (/^\/cancel(@\w+)?$/.test(text)) {
      await m.reply(start.cancelled)
      return
    }
    // Another command: the client moved on; it goes to its own handler.
    if (text.startsWith('/')) await conversation.halt({ next: true })
    // Not a reply to the prompt, from a client with an active consultation: a question for their expert, which
    // goes on to the desk as if the conversation had not seen it (it keeps waiting for the reason).
    if (message.reply_to_message?.message_id !== ask.message_id) {
      const active = await conversation.external((o: BotContext) =>
        hasActiveConsultation(o.deps, o.desk, o.from!.id),
      )
      if (active) await conversation.skip({ next: true })
    }
    if (text.length < 5) {
      await m.reply(start.tooShort)
      continue
    }
    reason = cut(text, MAX_REASON_LENGTH)
    break
  }

  const opened = await conversation.external(async (o: BotContext) => {
    const r = await openDispute(o.deps, o.desk, { userId: o.from!.id, lang: o.lang, paymentId, reason })
    return r.status === 'payment-unknown'
      ? { ok: false, text: o.t('ps-payment-unknown') }
      : { ok: true, text: '' }
  })
  // The ticket number and the promised answer time go out through the outbox with the ticket itself.
  if (!opened.ok) await ctx.reply(opened.text)
}

paysupportFeature.use(createConversation(paysupport, { id: 'paysupport', maxMillisecondsToWait: WAIT_MS }))

const priv = paysupportFeature.chatType('private')
priv.command('paysupport', async (ctx) => {
  await ctx.conversation.exitAll()
  await ctx.conversation.enter('paysupport')
})
// A button of a /paysupport question that is no longer open.
priv.callbackQuery(/^ps:/, (ctx) =>
  ctx.answerCallbackQuery({ text: ctx.t('button-outdated'), show_alert: true }),
)

// ---------------------------------------------------------------------------------------------------------------
// Staff side

const staff = paysupportFeature.filter((ctx) => ctx.chat?.id === ctx.desk.staffChatId)

async function adminsOnly(ctx: BotContext): Promise<boolean> {
  if (isAdminHere(ctx)) return true
  await ctx.answerCallbackQuery({ text: ctx.t('admin-only'), show_alert: true })
  return false
}

staff.callbackQuery(/^dp:refund:(\d{1,15})$/, async (ctx) => {
  if (!(await adminsOnly(ctx))) return
  await ctx.answerCallbackQuery()
  const id = Number(ctx.match[1])
  await ctx.reply(say(ctx)('dispute-refund-confirm', { ticket: String(id) }), {
    ...threadOf(ctx),
    reply_markup: new InlineKeyboard()
      .text(say(ctx)('btn-refund-yes'), `dp:refund-yes:${id}`)
      .text(say(ctx)('btn-cancel'), 'rf:no'),
  })
})

staff.callbackQuery(/^dp:refund-yes:(\d{1,15})$/, async (ctx) => {
  if (!(await adminsOnly(ctx))) return
  await ctx.answerCallbackQuery()
  const id = Number(ctx.match[1])
  const r = await refundDispute(ctx.deps, ctx.desk, { disputeId: id, adminId: actorIdOf(ctx) })
  let text: string
  if (r.status === 'no-payment') text = say(ctx)('dispute-refund-no-payment', { ticket: String(id) })
  else if (r.status === 'unknown') text = say(ctx)('dispute-unknown', { ticket: String(id) })
  else if (r.status === 'not-open')
    text = say(ctx)('dispute-not-open', { ticket: String(id), state: r.dispute.state })
  else text = refundOutcomeText(ctx, r)
  await ctx.editMessageText(text).catch(() => ctx.reply(text, threadOf(ctx)))
})

// The staff group has 20 messages a minute for everything (all topics, edits, topic changes): answers to a button
// are pop-ups for the admin who pressed it; what everyone must see is posted once by the topic jobs.
staff.callbackQuery(/^dp:decline:(\d{1,15})$/, async (ctx) => {
  if (!(await adminsOnly(ctx))) return
  const r = await awaitDeclineReason(ctx.deps, ctx.desk, {
    disputeId: Number(ctx.match[1]),
    adminId: actorIdOf(ctx),
  })
  const text =
    r.status === 'done'
      ? ctx.t('dispute-decline-ask', { ticket: String(r.dispute.id) })
      : r.status === 'not-open'
        ? ctx.t('dispute-not-open', { ticket: String(r.dispute.id), state: r.dispute.state })
        : ctx.t('dispute-unknown', { ticket: ctx.match[1]! })
  await ctx.answerCallbackQuery({ text, show_alert: true })
})

staff.callbackQuery(/^dp:close:(\d{1,15})$/, async (ctx) => {
  if (!(await adminsOnly(ctx))) return
  const r = await closeDispute(ctx.deps, ctx.desk, {
    disputeId: Number(ctx.match[1]),
    adminId: actorIdOf(ctx),
  })
  if (r.status === 'done') return ctx.answerCallbackQuery()
  const text =
    r.status === 'not-open'
      ? ctx.t('dispute-not-open', { ticket: String(r.dispute.id), state: r.dispute.state })
      : ctx.t('dispute-unknown', { ticket: ctx.match[1]! })
  await ctx.answerCallbackQuery({ text, show_alert: true })
})

function threadOf(ctx: BotContext): { message_thread_id?: number } {
  const m = ctx.msg ?? ctx.callbackQuery?.message
  const thread = m && 'message_thread_id' in m ? m.message_thread_id : undefined
  return thread ? { message_thread_id: thread } : {}
}

function hasContent(m: Message): boolean {
  return !!(
    m.text ||
    m.caption ||
    m.photo ||
    m.document ||
    m.voice ||
    m.video ||
    m.audio ||
    m.sticker ||
    m.animation ||
    m.video_note ||
    m.location ||
    m.contact
  )
}

// Messages in a ticket's topic. Other topics (consultations) are not ours: next().
staff.on('message', async (ctx, next) => {
  const m = ctx.message
  if (!m.message_thread_id || !m.is_topic_message) return next()
  const d = await findDisputeByThread(ctx.deps.db, ctx.desk.botId, m.message_thread_id)
  if (!d) return next()
  if (!isStaffHere(ctx) || !hasContent(m)) return
  const text = m.text ?? m.caption ?? ''
  // Commands (/refund, ...) go on to their handlers; internal notes stay in the topic.
  if (text.startsWith('/')) return next()
  if (text.startsWith(ctx.desk.internalNotePrefix)) return
  if (d.state !== 'open') {
    await ctx.reply(say(ctx)('dispute-not-open', { ticket: String(d.id), state: d.state }), threadOf(ctx))
    return
  }
  if (d.decline_pending_by === actorIdOf(ctx) && m.text) {
    const r = await declineDispute(ctx.deps, ctx.desk, {
      disputeId: d.id,
      adminId: actorIdOf(ctx),
      reason: m.text,
    })
    // The topic job posts the outcome ("declined by …: reason") and closes the topic.
    if (r.status === 'not-open')
      await ctx.reply(
        say(ctx)('dispute-not-open', { ticket: String(d.id), state: r.dispute.state }),
        threadOf(ctx),
      )
    return
  }
  await relayStaffMessage(ctx.deps, ctx.desk, { dispute: d, fromId: actorIdOf(ctx), messageId: m.message_id })
})
