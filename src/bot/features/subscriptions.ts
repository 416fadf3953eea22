import { Composer, InlineKeyboard } from 'grammy'
import type { PreCheckoutQuery, SuccessfulPayment } from 'grammy/types'
import type { DeskRuntime } from '../../config/load'
import { pick } from '../../config/load'
import { deskLanguage } from '../../config/rules.schema'
import type { PlanConfig } from '../../config/schema'
import { runningBeforePurchase } from '../../consultations/several'
import type { Deps } from '../../deps'
import { planSlaMinutes } from '../../orders/plan-features'
import { XTR } from '../../payments/pre-checkout'
import { planView, setRenewal } from '../../subscriptions/lifecycle'
import { recordPlanPayment } from '../../subscriptions/payment'
import {
  findPlan,
  parsePlanPayload,
  periodEnd,
  planTermsHash,
  SUBSCRIPTION_PERIOD_SECONDS,
} from '../../subscriptions/plans'
import { createPlanOrder, decidePlanPreCheckout } from '../../subscriptions/purchase'
import { cut, INVOICE_DESCRIPTION_MAX, INVOICE_TITLE_MAX } from '../../text'
import { formatDate, formatHours } from '../../time/format'
import type { BotContext } from '../context'
import { show, showTariffs } from './tariffs'

/**
 * Support plans paid by a Stars subscription (src/subscriptions): /plan (the plans with their terms before payment,
 * or the subscriber's period and numbers), Subscribe (an order and a subscription invoice link on a button: Telegram
 * sells subscriptions only through links), Change plan (a new subscription at the other plan's price, offered with
 * its start and the rule before its link; src/subscriptions/plans.ts changeStartsAt), Cancel renewal / Resume (also
 * on the renewal reminder). Payments of plan links (payload s:) are routed here by the payments feature.
 *
 * Callback data: sub:list | sub:show:<code> (a card from the tariffs list) | sub:buy:<code>:<terms hash> |
 * sub:cancel | sub:resume | sub:change | sub:chg:<code>:<terms hash>
 */
export const subscriptionsFeature = new Composer<BotContext>()
const priv = subscriptionsFeature.chatType('private')

/** True for the payload of a plan's invoice (the payments feature hands these over). */
export function isPlanPayload(payload: string): boolean {
  return parsePlanPayload(payload) !== undefined
}

export async function planPreCheckoutAnswer(
  deps: Deps,
  desk: DeskRuntime,
  q: PreCheckoutQuery,
): Promise<{ ok: true } | { ok: false; error_message: string }> {
  let d: Awaited<ReturnType<typeof decidePlanPreCheckout>>
  try {
    d = await decidePlanPreCheckout(deps, desk, {
      fromId: q.from.id,
      currency: q.currency,
      totalAmount: q.total_amount,
      payload: q.invoice_payload,
    })
  } catch {
    d = { ok: false, code: 'unavailable' }
  }
  if (d.ok) return { ok: true }
  const lang = deskLanguage(desk, q.from.language_code)
  return { ok: false, error_message: deps.i18n.t(lang, `precheckout-${d.code}`, d.params ?? {}) }
}

export async function handlePlanPayment(ctx: BotContext, payment: SuccessfulPayment): Promise<void> {
  const r = await recordPlanPayment(ctx.deps, ctx.desk, { userId: ctx.from!.id, lang: ctx.lang, payment })
  ctx.log.info({ status: r.status }, 'successful_payment (plan)')
}

function planCard(ctx: BotContext, p: PlanConfig): string {
  const lang = ctx.lang
  const d = ctx.desk.defaultLanguage
  const lines = [
    ctx.t('plan-card-title', { title: pick(p.title, lang, d), price: p.priceStars }),
    pick(p.description, lang, d),
    ctx.t('plan-card-questions', { questions: p.questions }),
  ]
  if (p.drafts > 0) lines.push(ctx.t('plan-card-drafts', { drafts: p.drafts }))
  // The features in words (src/orders/plan-features.ts enforces them): a priority plan's shorter SLA with the usual
  // one beside it, and what is not included said as such.
  const standard = formatHours(Math.round(p.slaBusinessHours * 60), lang)
  lines.push(
    p.features.prioritySla
      ? ctx.t('plan-card-sla-priority', { sla: formatHours(planSlaMinutes(p), lang), standard })
      : ctx.t('plan-card-sla', { sla: standard }),
  )
  lines.push(ctx.t(p.features.attachments ? 'plan-card-attachments-yes' : 'plan-card-attachments-no'))
  lines.push(ctx.t(p.features.transcriptExport ? 'plan-card-transcript-yes' : 'plan-card-transcript-no'))
  lines.push(
    p.carryOver === 'none'
      ? ctx.t('plan-card-carry-none')
      : ctx.t('plan-card-carry-capped', { max: p.carryOver.capped }),
  )
  lines.push(ctx.t(`plan-card-refund-${p.refundPolicy}`))
  lines.push(ctx.t('plan-card-change'))
  lines.push(ctx.t('plan-card-terms', { version: p.terms.version }))
  lines.push(pick(p.terms.text, lang, d))
  return lines.join('\n')
}

function subscribeKeyboard(ctx: BotContext, p: PlanConfig): InlineKeyboard {
  return new InlineKeyboard().text(
    ctx.t('plan-btn-subscribe', { price: p.priceStars }),
    `sub:buy:${p.code}:${planTermsHash(p)}`,
  )
}

async function showPlans(ctx: BotContext): Promise<void> {
  const plans = ctx.desk.plans.filter((p) => !p.paused)
  if (plans.length === 0) {
    await ctx.reply(ctx.t('plan-none-offered'))
    return
  }
  for (const p of plans)
    await ctx.reply(planCard(ctx, p), {
      reply_markup: subscribeKeyboard(ctx, p),
      link_preview_options: { is_disabled: true },
    })
}

async function showPlan(ctx: BotContext): Promise<void> {
  const v = await planView(ctx.deps, ctx.desk, ctx.from!.id, ctx.lang)
  if (v?.state !== 'active') {
    if (v)
      await ctx.reply(ctx.t('plan-ended', { title: v.title, end: formatDate(v.periodEnd, v.zone, ctx.lang) }))
    await showPlans(ctx)
    return
  }
  const lines = [
    ctx.t('plan-view', {
      title: v.title,
      number: v.periodNumber,
      start: formatDate(v.periodStart, v.zone, ctx.lang),
      end: formatDate(v.periodEnd, v.zone, ctx.lang),
      used: v.used,
      held: v.held,
      left: v.left,
      total: v.granted,
    }),
    v.renewalCancelled
      ? ctx.t('plan-view-cancelled', { end: formatDate(v.paidUntil, v.zone, ctx.lang) })
      : ctx.t('plan-view-renews', {
          end: formatDate(v.nextCharge, v.zone, ctx.lang),
          price: v.subscription.price_stars,
        }),
  ]
  if (v.next)
    lines.push(
      ctx.t('plan-view-next', {
        title: v.next.title,
        start: formatDate(v.next.start, v.zone, ctx.lang),
        price: v.next.price,
      }),
    )
  const kb = new InlineKeyboard()
    .text(ctx.t('plan-btn-change'), 'sub:change')
    .row()
    .text(
      ctx.t(v.renewalCancelled ? 'plan-btn-resume' : 'plan-btn-cancel'),
      v.renewalCancelled ? 'sub:resume' : 'sub:cancel',
    )
  await ctx.reply(lines.join('\n'), { reply_markup: kb })
}

priv.command('plan', showPlan)
priv.callbackQuery('sub:list', async (ctx) => {
  await ctx.answerCallbackQuery()
  await showPlans(ctx)
})

/** One plan's card from the list of tariffs and plans (tf:list): its terms, Subscribe, and back to the list. */
priv.callbackQuery(/^sub:show:([a-z0-9_-]{1,32})$/, async (ctx) => {
  const p = findPlan(ctx.desk, ctx.match[1]!)
  if (!p) {
    await ctx.answerCallbackQuery({ text: ctx.t('plan-refused-plan-unknown'), show_alert: true })
    return showTariffs(ctx)
  }
  await ctx.answerCallbackQuery()
  // A consultation already running: the card says the plan is a separate one (issue 26).
  const running = await runningBeforePurchase(ctx.deps, ctx.desk, ctx.from.id, ctx.lang)
  await show(
    ctx,
    running ? `${planCard(ctx, p)}\n\n${running}` : planCard(ctx, p),
    subscribeKeyboard(ctx, p).row().text(ctx.t('btn-all-tariffs-and-plans'), 'tf:list'),
  )
})

async function sendLink(ctx: BotContext, kind: 'subscribe' | 'change', code: string, terms: string) {
  const r = await createPlanOrder(ctx.deps, ctx.desk, {
    from: ctx.from!,
    planCode: code,
    terms,
    lang: ctx.lang,
    updateId: ctx.update.update_id,
    kind,
  })
  if (!r.ok) {
    if (r.code === 'duplicate') return ctx.answerCallbackQuery()
    await ctx.answerCallbackQuery({ text: ctx.t(`plan-refused-${r.code}`), show_alert: true })
    return
  }
  await ctx.answerCallbackQuery()
  const lang = ctx.lang
  const d = ctx.desk.defaultLanguage
  const title = cut(pick(r.plan.title, lang, d), INVOICE_TITLE_MAX)
  const zone = (await planView(ctx.deps, ctx.desk, ctx.from!.id, lang))?.zone ?? ctx.desk.schedule.timezone
  const start = r.change ? formatDate(r.change.startsAt, zone, lang) : ''
  const description = cut(
    r.change
      ? ctx.t('plan-change-description', { questions: r.plan.questions, start, terms: r.plan.terms.version })
      : ctx.t('plan-invoice-description', { questions: r.plan.questions, terms: r.plan.terms.version }),
    INVOICE_DESCRIPTION_MAX,
  )
  // Outside any transaction: the order is committed; a link that fails to come is asked for again by the button.
  // Every plan link is a subscription (30 days, the price fixed here: what each renewal charges).
  const link = await ctx.api.createInvoiceLink(
    title,
    description,
    r.payload,
    '',
    XTR,
    [{ label: title, amount: r.amount }],
    { subscription_period: SUBSCRIPTION_PERIOD_SECONDS },
  )
  const text = r.change
    ? ctx.t('plan-change-offer', {
        title,
        price: r.amount,
        from: pick(r.change.from.title, lang, d),
        start,
        end: formatDate(periodEnd(r.change.startsAt), zone, lang),
        carry: r.plan.carryOver === 'none' ? 0 : r.plan.carryOver.capped,
      })
    : ctx.t('plan-link', { title, price: r.amount })
  await ctx.reply(text, {
    reply_markup: new InlineKeyboard().url(ctx.t('plan-btn-pay', { price: r.amount }), link),
  })
}

priv.callbackQuery(/^sub:buy:([a-z0-9_-]{1,32}):([A-Za-z0-9_-]{8})$/, (ctx) =>
  sendLink(ctx, 'subscribe', ctx.match[1]!, ctx.match[2]!),
)
priv.callbackQuery(/^sub:chg:([a-z0-9_-]{1,32}):([A-Za-z0-9_-]{8})$/, (ctx) =>
  sendLink(ctx, 'change', ctx.match[1]!, ctx.match[2]!),
)

priv.callbackQuery(/^sub:(cancel|resume)$/, async (ctx) => {
  const cancel = ctx.match[1] === 'cancel'
  const r = await setRenewal(ctx.deps, ctx.desk, ctx.from.id, cancel)
  if (!r.ok) return ctx.answerCallbackQuery({ text: ctx.t(`plan-refused-${r.code}`), show_alert: true })
  await ctx.answerCallbackQuery()
  const v = await planView(ctx.deps, ctx.desk, ctx.from.id, ctx.lang)
  const end = v ? formatDate(r.accessUntil, v.zone, ctx.lang) : '—'
  await ctx.reply(ctx.t(cancel ? 'plan-cancelled' : 'plan-resumed', { end }))
})

priv.callbackQuery('sub:change', async (ctx) => {
  await ctx.answerCallbackQuery()
  const v = await planView(ctx.deps, ctx.desk, ctx.from.id, ctx.lang)
  if (v?.state !== 'active') return ctx.reply(ctx.t('plan-refused-not-subscribed'))
  const options = ctx.desk.plans.filter((p) => p.code !== v.planCode && !p.paused)
  if (options.length === 0) return ctx.reply(ctx.t('plan-no-change'))
  const kb = new InlineKeyboard()
  for (const p of options)
    kb.text(
      `${pick(p.title, ctx.lang, ctx.desk.defaultLanguage)} — ${ctx.t('plan-btn-subscribe-price', { price: p.priceStars })}`,
      `sub:chg:${p.code}:${planTermsHash(p)}`,
    ).row()
  const start = formatDate(v.changeStartsAt, v.zone, ctx.lang)
  await ctx.reply(ctx.t('plan-pick-change', { start }), { reply_markup: kb })
})
