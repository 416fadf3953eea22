import { type Conversation, createConversation } from '@grammyjs/conversations'
import { Composer, type Context, InlineKeyboard } from 'grammy'
import { hasActiveConsultation } from '../../consultations/admission'
import { commentCheck, commentRating, rateConsultation } from '../../consultations/ratings'
import { cut, PLACEHOLDER_MAX } from '../../text'
import type { BotContext } from '../context'

/**
 * The client's rating of a closed consultation: the 1-5 buttons under the "closed" message (`rate:<id>:<score>`),
 * then an optional comment (`rate:cm:<id>`, a short conversation on the client's own rated consultation that takes
 * a reply to its prompt, or the next text when no consultation is active; Cancel is `rate:cx:<id>`). Pressing another
 * score within the edit period changes the rating; src/consultations/ratings.ts decides.
 */
export const ratingFeature = new Composer<BotContext>()

/** A wait longer than this ends the conversation; the update then goes on to the other handlers. */
const WAIT_MS = 30 * 60_000

/**
 * The comment conversation. It says what it waits for (the comment, as a reply to its prompt) and how to leave it
 * (Cancel, /cancel). A text that does not reply to the prompt, from a client with an active consultation, is a
 * question for their expert: it goes on to the desk untouched (the conversation keeps waiting); without an active
 * consultation any text is the comment. Commands, other messages and other buttons pass on as well.
 */
async function ratingComment(conversation: Conversation<BotContext, Context>, ctx: Context, id: number) {
  const texts = await conversation.external((o: BotContext) => ({
    ask: o.t('rating-comment-ask'),
    cancel: o.t('rating-comment-cancel'),
    cancelled: o.t('rating-comment-cancelled'),
    placeholder: o.t('rating-comment-placeholder'),
  }))
  const cancelData = `rate:cx:${id}`
  // The way out: the message whose button was pressed now carries Cancel (an edit, no new message); the prompt
  // opens the reply to itself in the client's app (force_reply), so the comment naturally replies to it.
  await ctx
    .editMessageReplyMarkup({ reply_markup: new InlineKeyboard().text(texts.cancel, cancelData) })
    .catch(() => {})
  const prompt = await ctx.reply(texts.ask, {
    reply_markup: { force_reply: true, input_field_placeholder: cut(texts.placeholder, PLACEHOLDER_MAX) },
  })
  const m = await conversation.waitUntil(
    (c) => c.callbackQuery?.data === cancelData || typeof c.message?.text === 'string',
    { maxMilliseconds: WAIT_MS, next: true },
  )
  if (m.callbackQuery) {
    await m.answerCallbackQuery({ text: texts.cancelled })
    return
  }
  const message = m.message!
  const text = message.text!.trim()
  if (/^\/cancel(@\w+)?$/.test(text)) {
    await m.reply(texts.cancelled)
    return
  }
  // Another command: the client moved on; it goes to its own handler.
  if (text.startsWith('/')) await conversation.halt({ next: true })
  if (message.reply_to_message?.message_id !== prompt.message_id) {
    const active = await conversation.external((o: BotContext) =>
      hasActiveConsultation(o.deps, o.desk, o.from!.id),
    )
    // As if this update never reached the conversation: the desk admits it as a question.
    if (active) await conversation.skip({ next: true })
  }
  const reply = await conversation.external(async (o: BotContext) => {
    const r = await commentRating(o.deps, o.desk, {
      consultationId: id,
      userId: o.from!.id,
      comment: text,
      updateId: m.update.update_id,
    })
    if (r.status === 'saved') return o.t('rating-comment-saved')
    return o.t(r.status === 'too-late' ? 'rating-too-late' : 'rating-unknown', {
      days: o.desk.rules.ratingEditDays,
    })
  })
  await m.reply(reply)
}

ratingFeature.use(createConversation(ratingComment, { id: 'rating-comment', maxMillisecondsToWait: WAIT_MS }))

const priv = ratingFeature.chatType('private')

priv.callbackQuery(/^rate:(\d{1,15}):([1-5])$/, async (ctx) => {
  const consultationId = Number(ctx.match[1])
  const r = await rateConsultation(ctx.deps, ctx.desk, {
    consultationId,
    userId: ctx.from.id,
    score: Number(ctx.match[2]),
  })
  if (r.status !== 'rated') {
    const key = {
      unknown: 'rating-unknown',
      'not-closed': 'rating-not-closed',
      'too-late': 'rating-too-late',
    }[r.status]
    return ctx.answerCallbackQuery({
      text: ctx.t(key, { days: ctx.desk.rules.ratingEditDays }),
      show_alert: true,
    })
  }
  await ctx.answerCallbackQuery({ text: ctx.t('rating-saved-short', { score: r.score }) })
  const kb = new InlineKeyboard().text(ctx.t('rating-comment-button'), `rate:cm:${consultationId}`)
  await ctx.reply(
    ctx.t(r.previous === null ? 'rating-thanks' : 'rating-changed', {
      score: r.score,
      days: ctx.desk.rules.ratingEditDays,
    }),
    { reply_markup: kb },
  )
})

// The comment conversation starts only on the client's own rated consultation, still within the edit period.
priv.callbackQuery(/^rate:cm:(\d{1,15})$/, async (ctx) => {
  const consultationId = Number(ctx.match[1])
  const r = await commentCheck(ctx.deps, ctx.desk, { consultationId, userId: ctx.from.id })
  if (r.status !== 'open') {
    const key = r.status === 'too-late' ? 'rating-too-late' : 'rating-unknown'
    return ctx.answerCallbackQuery({
      text: ctx.t(key, { days: ctx.desk.rules.ratingEditDays }),
      show_alert: true,
    })
  }
  await ctx.answerCallbackQuery()
  await ctx.conversation.exitAll()
  await ctx.conversation.enter('rating-comment', consultationId)
})

// The Cancel button of a comment prompt no longer waiting (saved, cancelled or timed out).
priv.callbackQuery(/^rate:cx:\d{1,15}$/, (ctx) =>
  ctx.answerCallbackQuery({ text: ctx.t('button-outdated'), show_alert: true }),
)
