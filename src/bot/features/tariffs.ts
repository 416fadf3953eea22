import { Composer, InlineKeyboard } from 'grammy'
import { clientZone } from '../../clients/clients.service'
import { pick } from '../../config/load'
import type { TariffConfig } from '../../config/schema'
import { runningBeforePurchase } from '../../consultations/several'
import { freePlaces } from '../../orders/capacity'
import { accountForSlot, createOrder, recordInvoiceMessage, termsHash } from '../../orders/orders.service'
import { findTariff, sellableTariffs, upcomingSlots } from '../../orders/tariffs'
import { closedUntil, closedWarning, invoiceTexts, openingStartText, tariffCard } from '../../payments/offer'
import { orderPayload } from '../../payments/payload'
import { XTR } from '../../payments/pre-checkout'
import { openForSale } from '../../settings/setup'
import { formatInstant, type Zone } from '../../time/format'
import type { BotContext } from '../context'

/**
 * Tariffs: the list, one tariff's card with its terms (shown before payment), start slots for scheduled tariffs,
 * and "Accept terms and pay": an order (a snapshot of the tariff, terms version pinned) and a Stars invoice.
 *
 * The list also names the desk's support plans (sub:show:<code>, answered by the subscriptions feature).
 *
 * Callback data: tf:list | tf:show:<code> | tf:slots:<code> | tf:buy:<code>:<terms hash>[:<start epoch s> | :now]
 * (the start: a scheduled tariff's slot; for an immediate one outside hours, "now" or the desk's next opening).
 */
export const tariffsFeature = new Composer<BotContext>()
const priv = tariffsFeature.chatType('private')

const t = (ctx: BotContext) => (lang: string, key: string, params?: Record<string, string | number | Date>) =>
  ctx.deps.i18n.t(lang, key, params)

function listKeyboard(ctx: BotContext): InlineKeyboard {
  const kb = new InlineKeyboard()
  for (const tariff of sellableTariffs(ctx.desk))
    kb.text(
      ctx.t('tariff-button', {
        title: pick(tariff.title, ctx.lang, ctx.desk.defaultLanguage),
        price: tariff.priceStars,
      }),
      `tf:show:${tariff.code}`,
    ).row()
  // The support plans in the same list, each with its price per 30 days: the button opens the plan's card
  // (its terms and Subscribe, src/bot/features/subscriptions.ts).
  for (const p of (ctx.desk.plans ?? []).filter((p) => !p.paused))
    kb.text(
      ctx.t('plan-list-button', {
        title: pick(p.title, ctx.lang, ctx.desk.defaultLanguage),
        price: p.priceStars,
      }),
      `sub:show:${p.code}`,
    ).row()
  return kb
}

/** Edit the message a button belongs to; a message too old to edit gets a new one instead. */
export async function show(ctx: BotContext, text: string, keyboard: InlineKeyboard): Promise<void> {
  if (ctx.callbackQuery?.message) {
    try {
      await ctx.editMessageText(text, { reply_markup: keyboard, link_preview_options: { is_disabled: true } })
      return
    } catch {
      // fall through: "message is not modified" or too old to edit
    }
  }
  await ctx.reply(text, { reply_markup: keyboard, link_preview_options: { is_disabled: true } })
}

export async function showTariffs(ctx: BotContext): Promise<void> {
  // A desk being set up (src/settings/setup.ts) sells nothing yet: the client is told so, with no buttons.
  const plans = ctx.desk.plans.filter((p) => !p.paused).length
  if (!openForSale(ctx.desk) || sellableTariffs(ctx.desk).length + plans === 0)
    return show(ctx, notOpenText(ctx), new InlineKeyboard())
  await show(ctx, ctx.t(plans > 0 ? 'tariffs-intro-with-plans' : 'tariffs-intro'), listKeyboard(ctx))
}

export function notOpenText(ctx: BotContext): string {
  return ctx.t('desk-not-open', { desk: pick(ctx.desk.name, ctx.lang, ctx.desk.defaultLanguage) })
}

priv.command('tariffs', showTariffs)
priv.callbackQuery('tf:list', async (ctx) => {
  await ctx.answerCallbackQuery()
  await showTariffs(ctx)
})

/**
 * The card's buttons: a scheduled tariff picks a slot; an immediate one while the desk is closed offers two, start
 * now (the window runs from payment) or when the desk opens (the window counts from the opening); otherwise one.
 */
function cardKeyboard(ctx: BotContext, tariff: TariffConfig, zone: Zone, now: Date): InlineKeyboard {
  const kb = new InlineKeyboard()
  const buy = `tf:buy:${tariff.code}:${termsHash(ctx.desk.terms.version)}`
  const opens = closedUntil(ctx.desk, tariff, now)
  if (tariff.startMode === 'scheduled') kb.text(ctx.t('btn-pick-slot'), `tf:slots:${tariff.code}`)
  else if (opens)
    kb.text(ctx.t('btn-pay-start-now', { price: tariff.priceStars }), `${buy}:now`)
      .row()
      .text(
        ctx.t('btn-pay-start-at-opening', {
          price: tariff.priceStars,
          at: formatInstant(opens, zone, ctx.lang),
        }),
        `${buy}:${Math.floor(opens.getTime() / 1000)}`,
      )
  else kb.text(ctx.t('btn-accept-pay', { price: tariff.priceStars }), buy)
  kb.row().text(ctx.t('btn-all-tariffs'), 'tf:list')
  return kb
}

priv.callbackQuery(/^tf:show:([a-z0-9_-]{1,32})$/, async (ctx) => {
  const tariff = findTariff(ctx.desk, ctx.match[1]!)
  if (!openForSale(ctx.desk)) {
    await ctx.answerCallbackQuery()
    return showTariffs(ctx)
  }
  if (!tariff || tariff.paused) {
    await ctx.answerCallbackQuery({
      text: ctx.t(tariff ? 'order-refused-tariff-paused' : 'tariff-gone'),
      show_alert: true,
    })
    return showTariffs(ctx)
  }
  await ctx.answerCallbackQuery()
  const zone = await clientZone(ctx.deps.db, ctx.desk, ctx.from.id)
  const now = new Date()
  // A consultation already running: the card says this one is separate (issue 26).
  const running = await runningBeforePurchase(ctx.deps, ctx.desk, ctx.from.id, ctx.lang)
  const card = tariffCard(t(ctx), ctx.desk, tariff, ctx.lang, now, zone)
  await show(ctx, running ? `${card}\n\n${running}` : card, cardKeyboard(ctx, tariff, zone, now))
})

priv.callbackQuery(/^tf:slots:([a-z0-9_-]{1,32})$/, async (ctx) => {
  const { deps, desk } = ctx
  const tariff = findTariff(desk, ctx.match[1]!)
  if (tariff?.startMode !== 'scheduled') {
    await ctx.answerCallbackQuery({ text: ctx.t('tariff-gone'), show_alert: true })
    return showTariffs(ctx)
  }
  await ctx.answerCallbackQuery()
  const slots = upcomingSlots(tariff, new Date())
  const free = await freePlaces(
    deps.db,
    desk.botId,
    slots.map((s) => accountForSlot(desk, tariff, s)),
  )
  const zone = await clientZone(deps.db, desk, ctx.from.id)
  const kb = new InlineKeyboard()
  const hash = termsHash(desk.terms.version)
  slots.forEach((s, i) => {
    const left = free[i] ?? 0
    // A full start: the client can wait for a place (src/bot/features/waitlist.ts).
    if (left <= 0) {
      kb.text(
        ctx.t('waitlist-btn', { at: formatInstant(s, zone, ctx.lang) }),
        `wl:join:${tariff.code}:${Math.floor(s.getTime() / 1000)}`,
      ).row()
      return
    }
    kb.text(
      ctx.t('btn-slot', { at: formatInstant(s, zone, ctx.lang), left }),
      `tf:buy:${tariff.code}:${hash}:${Math.floor(s.getTime() / 1000)}`,
    ).row()
  })
  kb.text(ctx.t('btn-all-tariffs'), 'tf:list')
  const any = free.some((n) => n > 0)
  await show(
    ctx,
    ctx.t(any ? 'slots-pick' : 'slots-none', { title: pick(tariff.title, ctx.lang, desk.defaultLanguage) }),
    kb,
  )
})

priv.callbackQuery(/^tf:buy:([a-z0-9_-]{1,32}):([A-Za-z0-9_-]{8})(?::(\d{1,12}|now))?$/, async (ctx) => {
  const { deps, desk } = ctx
  const start = ctx.match[3]
  const r = await createOrder(deps, desk, {
    from: ctx.from,
    lang: ctx.lang,
    tariffCode: ctx.match[1]!,
    terms: ctx.match[2]!,
    ...(start === 'now' ? { startNow: true } : start ? { slot: new Date(Number(start) * 1000) } : {}),
    updateId: ctx.update.update_id,
  })
  if (!r.ok) {
    if (r.code === 'duplicate') return ctx.answerCallbackQuery()
    await ctx.answerCallbackQuery({ text: ctx.t(`order-refused-${r.code}`), show_alert: true })
    // The client sees what is current: the list for a removed tariff, the card (new terms, the desk's hours now)
    // otherwise.
    const tariff = findTariff(desk, ctx.match[1]!)
    if (!tariff || tariff.paused || r.code === 'not-open') return showTariffs(ctx)
    const zone = await clientZone(deps.db, desk, ctx.from.id)
    const now = new Date()
    return ctx.reply(tariffCard(t(ctx), desk, tariff, ctx.lang, now, zone), {
      reply_markup: cardKeyboard(ctx, tariff, zone, now),
    })
  }
  await ctx.answerCallbackQuery()
  const order = r.order
  const zone = await clientZone(deps.db, desk, ctx.from.id)
  // Outside hours the client chose: start now (the answer clock waits for the opening) or at the opening.
  if (r.closedUntil) await ctx.reply(closedWarning(t(ctx), r.tariff, ctx.lang, r.closedUntil, zone))
  if (order.start_mode === 'immediate' && order.slot_start)
    await ctx.reply(openingStartText(t(ctx), order, ctx.lang, zone))
  if (order.start_mode === 'scheduled' && order.slot_start)
    await ctx.reply(
      ctx.t('order-slot-chosen', {
        at: formatInstant(order.slot_start, zone, ctx.lang),
        hold: desk.holdMinutes,
      }),
    )
  // Said again right before the invoice: the card may have been drawn before the other consultation was bought.
  const running = await runningBeforePurchase(deps, desk, ctx.from.id, ctx.lang)
  if (running) await ctx.reply(running)
  const { title, description } = invoiceTexts(t(ctx), order, ctx.lang, zone)
  // Stars: currency XTR, exactly one price item, no provider token; the payload is the order id and nothing else.
  const invoice = await ctx.replyWithInvoice(title, description, orderPayload(order.id), XTR, [
    { label: title, amount: order.price_stars },
  ])
  await recordInvoiceMessage(deps, order.id, invoice.message_id)
})
