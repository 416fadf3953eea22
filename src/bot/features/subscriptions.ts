import { Composer, InlineKeyboard } from 'grammy'
import type { PreCheckoutQuery, SuccessfulPayment } from 'grammy/types'
import type { DeskRuntime } from '../../config/load'
import type { PlanConfig } from '../../config/schema'
import type { Deps } from '../../deps'
import { XTR } from '../../payments/pre-checkout'
import { planView, scheduleDowngrade, setRenewal } from '../../subscriptions/lifecycle'
import { recordPlanPayment } from '../../subscriptions/payment'
import {
  findPlan,
  parsePlanPayload,
  pickText,
  planTermsHash,
  SUBSCRIPTION_PERIOD_SECONDS,
} from '../../subscriptions/plans'
import { createPlanOrder, decidePlanPreCheckout } from '../../subscriptions/purchase'
import { formatDate, formatHours } from '../../time/format'
import type { BotContext } from '../context'
import { supportedLanguage } from '../i18n'

/**
 * Support plans paid by a Stars subscription (src/subscriptions): /plan (the plans with their terms before payment,
 * or the subscriber's period and numbers), Subscribe (an order and a subscription invoice link on a button: Telegram
 * sells subscriptions only through links), Upgrade (a one-off link for the difference), Change plan at renewal,
 * Cancel renewal / Resume. Payments of plan invoices (payload s:/u:) are routed here by the payments feature.
 *
 * Callback data: sub:list | sub:buy:<code>:<terms hash> | sub:cancel | sub:resume | sub:upgrade |
 * sub:up:<code>:<terms hash> | sub:change | sub:down:<code>
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
  const lang = supportedLanguage(q.from.language_code) ?? desk.defaultLanguage
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
    ctx.t('plan-card-title', { title: pickText(p.title, lang, d), price: p.priceStars }),
    pickText(p.description, lang, d),
    ctx.t('plan-card-questions', { questions: p.questions }),
  ]
  if (p.drafts > 0) lines.push(ctx.t('plan-card-drafts', { drafts: p.drafts }))
  lines.push(ctx.t('plan-card-sla', { sla: formatHours(Math.round(p.slaBusinessHours * 60), lang) }))
  const yes = (f: boolean) => (f ? '✅' : '—')
  lines.push(
    ctx.t('plan-card-features', {
      attachments: yes(p.features.attachments),
      priority: yes(p.features.prioritySla),
      transcript: yes(p.features.transcriptExport),
    }),
  )
  lines.push(
    p.carryOver === 'none'
      ? ctx.t('plan-card-carry-none')
      : ctx.t('plan-card-carry-capped', { max: p.carryOver.capped }),
  )
  lines.push(ctx.t(`plan-card-refund-${p.refundPolicy}`))
  lines.push(ctx.t('plan-card-terms', { version: p.terms.version }))
  lines.push(pickText(p.terms.text, lang, d))
  return lines.join('\n')
}

async function showPlans(ctx: BotContext): Promise<void> {
  const plans = ctx.desk.plans.filter((p) => !p.paused)
  if (plans.length === 0) {
    await ctx.reply(ctx.t('plan-none-offered'))
    return
  }
  for (const p of plans) {
    const kb = new InlineKeyboard().text(
      ctx.t('plan-btn-subscribe', { price: p.priceStars }),
      `sub:buy:${p.code}:${planTermsHash(p)}`,
    )
    await ctx.reply(planCard(ctx, p), { reply_markup: kb, link_preview_options: { is_disabled: true } })
  }
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
      ? ctx.t('plan-view-cancelled', { end: formatDate(v.periodEnd, v.zone, ctx.lang) })
      : ctx.t('plan-view-renews', { end: formatDate(v.periodEnd, v.zone, ctx.lang) }),
  ]
  if (v.nextPlanTitle) lines.push(ctx.t('plan-view-next', { title: v.nextPlanTitle }))
  const kb = new InlineKeyboard()
    .text(ctx.t('plan-btn-upgrade'), 'sub:upgrade')
    .row()
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

async function sendLink(ctx: BotContext, kind: 'subscribe' | 'upgrade', code: string, terms: string) {
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
  const title = pickText(r.plan.title, ctx.lang, ctx.desk.defaultLanguage).slice(0, 32)
  const description = ctx
    .t(kind === 'subscribe' ? 'plan-invoice-description' : 'plan-upgrade-description', {
      questions: r.plan.questions,
      terms: r.plan.terms.version,
    })
    .slice(0, 255)
  // Outside any transaction: the order is committed; a link that fails to come is asked for again by the button.
  const link = await ctx.api.createInvoiceLink(
    title,
    description,
    r.payload,
    '',
    XTR,
    [{ label: title, amount: r.amount }],
    {
      ...(kind === 'subscribe' ? { subscription_period: SUBSCRIPTION_PERIOD_SECONDS } : {}),
    },
  )
  await ctx.reply(
    ctx.t(kind === 'subscribe' ? 'plan-link' : 'plan-upgrade-link', { title, price: r.amount }),
    {
      reply_markup: new InlineKeyboard().url(ctx.t('plan-btn-pay', { price: r.amount }), link),
    },
  )
}

priv.callbackQuery(/^sub:buy:([a-z0-9_-]{1,32}):([A-Za-z0-9_-]{8})$/, (ctx) =>
  sendLink(ctx, 'subscribe', ctx.match[1]!, ctx.match[2]!),
)
priv.callbackQuery(/^sub:up:([a-z0-9_-]{1,32}):([A-Za-z0-9_-]{8})$/, (ctx) =>
  sendLink(ctx, 'upgrade', ctx.match[1]!, ctx.match[2]!),
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

priv.callbackQuery(/^sub:(upgrade|change)$/, async (ctx) => {
  await ctx.answerCallbackQuery()
  const v = await planView(ctx.deps, ctx.desk, ctx.from.id, ctx.lang)
  const current = v ? findPlan(ctx.desk, v.subscription.plan_code) : undefined
  if (v?.state !== 'active' || !current) return ctx.reply(ctx.t('plan-refused-not-subscribed'))
  const up = ctx.match[1] === 'upgrade'
  const options = ctx.desk.plans.filter((p) =>
    p.paused
      ? false
      : up
        ? p.questions > current.questions && p.priceStars > current.priceStars
        : p.code !== current.code,
  )
  if (options.length === 0) return ctx.reply(ctx.t(up ? 'plan-no-upgrade' : 'plan-no-change'))
  const kb = new InlineKeyboard()
  for (const p of options)
    kb.text(
      pickText(p.title, ctx.lang, ctx.desk.defaultLanguage),
      up ? `sub:up:${p.code}:${planTermsHash(p)}` : `sub:down:${p.code}`,
    ).row()
  await ctx.reply(ctx.t(up ? 'plan-pick-upgrade' : 'plan-pick-change'), { reply_markup: kb })
})

priv.callbackQuery(/^sub:down:([a-z0-9_-]{1,32})$/, async (ctx) => {
  const r = await scheduleDowngrade(ctx.deps, ctx.desk, ctx.from.id, ctx.match[1]!)
  if (!r.ok) return ctx.answerCallbackQuery({ text: ctx.t(`plan-refused-${r.code}`), show_alert: true })
  await ctx.answerCallbackQuery()
  const p = findPlan(ctx.desk, ctx.match[1]!)!
  await ctx.reply(
    ctx.t('plan-change-scheduled', { title: pickText(p.title, ctx.lang, ctx.desk.defaultLanguage) }),
  )
})
