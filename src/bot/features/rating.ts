import { type Conversation, createConversation } from '@grammyjs/conversations'
import { Composer, type Context, InlineKeyboard } from 'grammy'
import { commentRating, RATING_EDIT_DAYS, rateConsultation } from '../../consultations/ratings'
import type { BotContext } from '../context'

/**
 * The client's rating of a closed consultation: the 1-5 buttons under the "closed" message (`rate:<id>:<score>`),
 * then an optional comment (`rate:cm:<id>`, a short conversation that takes the next text message). Pressing another
 * score within the edit period changes the rating; src/consultations/ratings.ts decides.
 */
export const ratingFeature = new Composer<BotContext>()

/** A wait longer than this ends the conversation; the update then goes on to the other handlers. */
const WAIT_MS = 30 * 60_000

async function ratingComment(conversation: Conversation<BotContext, Context>, ctx: Context, id: number) {
  const texts = await conversation.external((o: BotContext) => ({
    ask: o.t('rating-comment-ask'),
    cancelled: o.t('rating-comment-cancelled'),
  }))
  await ctx.reply(texts.ask)
  const m = await conversation.waitFor('message:text', { maxMilliseconds: WAIT_MS, next: true })
  const text = m.message.text.trim()
  if (/^\/cancel(@\w+)?$/.test(text)) {
    await m.reply(texts.cancelled)
    return
  }
  // Another command: the client moved on; it goes to its own handler.
  if (text.startsWith('/')) await conversation.halt({ next: true })
  const reply = await conversation.external(async (o: BotContext) => {
    const r = await commentRating(o.deps, o.desk, {
      consultationId: id,
      userId: o.from!.id,
      comment: text,
      updateId: m.update.update_id,
    })
    if (r.status === 'saved') return o.t('rating-comment-saved')
    return o.t(r.status === 'too-late' ? 'rating-too-late' : 'rating-unknown', { days: RATING_EDIT_DAYS })
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
    return ctx.answerCallbackQuery({ text: ctx.t(key, { days: RATING_EDIT_DAYS }), show_alert: true })
  }
  await ctx.answerCallbackQuery({ text: ctx.t('rating-saved-short', { score: r.score }) })
  const kb = new InlineKeyboard().text(ctx.t('rating-comment-button'), `rate:cm:${consultationId}`)
  await ctx.reply(
    ctx.t(r.previous === null ? 'rating-thanks' : 'rating-changed', {
      score: r.score,
      days: RATING_EDIT_DAYS,
    }),
    { reply_markup: kb },
  )
})

priv.callbackQuery(/^rate:cm:(\d{1,15})$/, async (ctx) => {
  await ctx.answerCallbackQuery()
  await ctx.conversation.exitAll()
  await ctx.conversation.enter('rating-comment', Number(ctx.match[1]))
})
