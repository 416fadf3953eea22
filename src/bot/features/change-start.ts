import { Composer, InlineKeyboard } from 'grammy'
import { clientZone } from '../../clients/clients.service'
import {
  type ChangeRefusal,
  cancelBeforeStart,
  cancelCheck,
  moveOptions,
  moveStart,
} from '../../payments/change-start'
import { formatInstant } from '../../time/format'
import type { BotContext } from '../context'

/**
 * A start the client moves or cancels before it begins (src/payments/change-start.ts; a move only for a scheduled
 * start, a cancel also for an on_request one not started and an immediate one waiting for the desk's opening):
 * ord:mv:<order> (the free slots), ord:mvto:<order>:<epoch s> (move there), ord:cx:<order> (confirm),
 * ord:cxy:<order> (cancel with a refund). After the cut-off each answers why it is no longer possible.
 */
export const changeStartFeature = new Composer<BotContext>()
const priv = changeStartFeature.chatType('private')

async function refused(ctx: BotContext, r: { code: ChangeRefusal | string; deadline?: Date }) {
  const zone = await clientZone(ctx.deps.db, ctx.desk, ctx.from!.id)
  // A start with no fixed instant (an on_request one the client started) has no "possible until" to name.
  const key = r.code === 'started' && !r.deadline ? 'change-refused-started-now' : `change-refused-${r.code}`
  const deadline = r.deadline ? formatInstant(r.deadline, zone, ctx.lang) : '—'
  return ctx.answerCallbackQuery({ text: ctx.t(key, { deadline }), show_alert: true })
}

priv.callbackQuery(/^ord:mv:(\d{1,15})$/, async (ctx) => {
  const r = await moveOptions(ctx.deps, ctx.desk, ctx.from.id, Number(ctx.match[1]))
  if (!r.ok) return refused(ctx, r)
  await ctx.answerCallbackQuery()
  const zone = await clientZone(ctx.deps.db, ctx.desk, ctx.from.id)
  if (r.slots.length === 0) return ctx.reply(ctx.t('change-no-slots', { title: r.order.title }))
  const kb = new InlineKeyboard()
  for (const s of r.slots.slice(0, 10))
    kb.text(
      ctx.t('btn-slot', { at: formatInstant(s.at, zone, ctx.lang), left: s.left }),
      `ord:mvto:${r.order.id}:${Math.floor(s.at.getTime() / 1000)}`,
    ).row()
  await ctx.reply(
    ctx.t('change-pick', {
      title: r.order.title,
      at: formatInstant(r.order.slot_start!, zone, ctx.lang),
      deadline: formatInstant(r.deadline, zone, ctx.lang),
    }),
    { reply_markup: kb },
  )
})

priv.callbackQuery(/^ord:mvto:(\d{1,15}):(\d{1,12})$/, async (ctx) => {
  const r = await moveStart(ctx.deps, ctx.desk, {
    orderId: Number(ctx.match[1]),
    userId: ctx.from.id,
    to: new Date(Number(ctx.match[2]) * 1000),
    updateId: ctx.update.update_id,
  })
  if (!r.ok) {
    if (r.code === 'duplicate') return ctx.answerCallbackQuery()
    return refused(ctx, r)
  }
  // The confirmation with the new start leaves through the outbox with the move.
  await ctx.answerCallbackQuery()
})

priv.callbackQuery(/^ord:cx:(\d{1,15})$/, async (ctx) => {
  const id = Number(ctx.match[1])
  const r = await cancelCheck(ctx.deps, ctx.desk, ctx.from.id, id)
  if (!r.ok) return refused(ctx, r)
  await ctx.answerCallbackQuery()
  await ctx.reply(ctx.t('change-cancel-confirm', { title: r.order.title, amount: r.order.price_stars }), {
    reply_markup: new InlineKeyboard().text(ctx.t('btn-cancel-start-yes'), `ord:cxy:${id}`),
  })
})

priv.callbackQuery(/^ord:cxy:(\d{1,15})$/, async (ctx) => {
  const r = await cancelBeforeStart(ctx.deps, ctx.desk, {
    orderId: Number(ctx.match[1]),
    userId: ctx.from.id,
  })
  if (!r.ok) return refused(ctx, r)
  await ctx.answerCallbackQuery()
  const s = r.refund.status
  // The refund's own message ("↩️ … refunded") leaves through the outbox with the refund.
  if (s === 'failed' || s === 'unknown-payment') await ctx.reply(ctx.t('change-cancel-failed'))
  else if (s === 'in-progress') await ctx.reply(ctx.t('change-cancel-in-progress'))
})
