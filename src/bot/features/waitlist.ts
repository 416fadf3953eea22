import { Composer, InlineKeyboard } from 'grammy'
import { clientZone } from '../../clients/clients.service'
import { recordInvoiceMessage } from '../../orders/orders.service'
import { heldOrder, joinWaitlist, leaveWaitlist, myWaitlist, waitlistTitle } from '../../orders/waitlist'
import { invoiceTexts } from '../../payments/offer'
import { orderPayload } from '../../payments/payload'
import { XTR } from '../../payments/pre-checkout'
import { formatHours, formatInstant } from '../../time/format'
import type { BotContext } from '../context'

/**
 * The waitlist of a full start (src/orders/waitlist.ts): wl:join:<tariff>:<epoch s> joins the line,
 * wl:leave:<entry> (on the confirmation, the "place held" notice and /waitlist) leaves it, wl:pay:<entry> sends the
 * invoice of the order holding a freed place for the client; /waitlist lists the client's entries.
 */
export const waitlistFeature = new Composer<BotContext>()
const priv = waitlistFeature.chatType('private')

priv.callbackQuery(/^wl:join:([a-z0-9_-]{1,32}):(\d{1,12})$/, async (ctx) => {
  const r = await joinWaitlist(ctx.deps, ctx.desk, {
    userId: ctx.from.id,
    lang: ctx.lang,
    tariffCode: ctx.match[1]!,
    slot: new Date(Number(ctx.match[2]) * 1000),
  })
  if (!r.ok) return ctx.answerCallbackQuery({ text: ctx.t(`waitlist-refused-${r.code}`), show_alert: true })
  await ctx.answerCallbackQuery()
  const zone = await clientZone(ctx.deps.db, ctx.desk, ctx.from.id)
  await ctx.reply(
    ctx.t(r.already ? 'waitlist-already' : 'waitlist-joined', {
      at: formatInstant(r.at, zone, ctx.lang),
      position: r.position,
      hold: formatHours(ctx.desk.waitlistHoldMinutes, ctx.lang),
    }),
    { reply_markup: new InlineKeyboard().text(ctx.t('waitlist-btn-leave'), `wl:leave:${r.entryId}`) },
  )
})

priv.callbackQuery(/^wl:leave:(\d{1,15})$/, async (ctx) => {
  const r = await leaveWaitlist(ctx.deps, ctx.desk, { userId: ctx.from.id, entryId: Number(ctx.match[1]) })
  if (!r.ok)
    return ctx.answerCallbackQuery({ text: ctx.t(`waitlist-leave-refused-${r.code}`), show_alert: true })
  await ctx.answerCallbackQuery()
  const zone = await clientZone(ctx.deps.db, ctx.desk, ctx.from.id)
  await ctx.reply(ctx.t('waitlist-left', { at: formatInstant(r.at, zone, ctx.lang), title: r.title }))
})

priv.callbackQuery(/^wl:pay:(\d{1,15})$/, async (ctx) => {
  const r = await heldOrder(ctx.deps, ctx.desk, { userId: ctx.from.id, entryId: Number(ctx.match[1]) })
  if (!r.ok)
    return ctx.answerCallbackQuery({ text: ctx.t(`waitlist-pay-refused-${r.code}`), show_alert: true })
  await ctx.answerCallbackQuery()
  const zone = await clientZone(ctx.deps.db, ctx.desk, ctx.from.id)
  const { title, description } = invoiceTexts(
    (lang, key, params) => ctx.deps.i18n.t(lang, key, params),
    r.order,
    r.order.lang,
    zone,
  )
  // Stars: currency XTR, exactly one price item, no provider token; the payload is the order id and nothing else.
  const invoice = await ctx.replyWithInvoice(title, description, orderPayload(r.order.id), XTR, [
    { label: title, amount: r.order.price_stars },
  ])
  await recordInvoiceMessage(ctx.deps, r.order.id, invoice.message_id)
})

priv.command('waitlist', async (ctx) => {
  const entries = await myWaitlist(ctx.deps, ctx.desk, ctx.from.id)
  if (entries.length === 0) return ctx.reply(ctx.t('waitlist-mine-empty'))
  const zone = await clientZone(ctx.deps.db, ctx.desk, ctx.from.id)
  const kb = new InlineKeyboard()
  const lines = [ctx.t('waitlist-mine-title')]
  for (const e of entries.slice(0, 10)) {
    const title = waitlistTitle(ctx.desk, e.tariff_code, ctx.lang)
    const at = formatInstant(e.slot_start, zone, ctx.lang)
    lines.push(
      e.state === 'notified' && e.hold_until
        ? ctx.t('waitlist-mine-held', { title, at, until: formatInstant(e.hold_until, zone, ctx.lang) })
        : ctx.t('waitlist-mine-waiting', { title, at }),
    )
    if (e.state === 'notified')
      kb.text(ctx.t('waitlist-btn-pay-short', { title, at }), `wl:pay:${e.id}`).row()
    kb.text(ctx.t('waitlist-btn-leave-one', { title, at }), `wl:leave:${e.id}`).row()
  }
  await ctx.reply(lines.join('\n'), { reply_markup: kb })
})
