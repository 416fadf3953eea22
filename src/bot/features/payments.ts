import { Composer, InlineKeyboard } from 'grammy'
import type { PreCheckoutQuery } from 'grammy/types'
import { clientZone } from '../../clients/clients.service'
import type { DeskRuntime } from '../../config/load'
import { deskLanguage } from '../../config/rules.schema'
import { agreeStart, type StartResult, startOnRequest } from '../../consultations/start.service'
import type { Deps } from '../../deps'
import { openDispute } from '../../disputes/disputes.service'
import { errorSummary } from '../../jobs/jobs'
import type { Logger } from '../../log'
import { paidOrderOf, startOptions } from '../../orders/orders.service'
import { decidePreCheckout } from '../../payments/pre-checkout'
import { recordExternalRefund } from '../../payments/refunds'
import { recordSuccessfulPayment } from '../../payments/successful-payment'
import { sellingClosedNow } from '../../setup/gate'
import { formatInstant } from '../../time/format'
import type { BotContext } from '../context'
import { handlePlanPayment, isPlanPayload, planPreCheckoutAnswer } from './subscriptions'

/**
 * Payment updates and the buttons that follow a payment.
 *
 * - pre_checkout_query: one statement (checks + capacity hold), then answerPreCheckoutQuery (answerPreCheckout,
 *   run by bot.ts ahead of the per-chat queue and the other middleware, so it never waits behind a chat's updates).
 * - successful_payment / refunded_payment: one transaction each, idempotent by the charge id; every message to the
 *   client leaves through the outbox.
 * - ord:start:<order> (Start, on_request), ord:opts:<order> and ord:at:<order>:<epoch s> (a start for an order
 *   that waits for one), ord:refund:<order> (the client asks for a refund: a /paysupport ticket).
 */
export const paymentsFeature = new Composer<BotContext>()

export type PreCheckoutAnswer = { ok: true } | { ok: false; error_message: string }

/**
 * The answer to a pre_checkout_query: the decision (src/payments/pre-checkout.ts), as answerPreCheckoutQuery's
 * parameters: ok, or a refusal in the client's language. A failure to decide is a refusal too (fail closed: nothing
 * held, nothing charged; the client may try again). A redelivered query gets the same answer (the hold is keyed by
 * the order and the query), so a lost answer costs nothing but a second decision.
 */
export async function preCheckoutAnswer(
  deps: Deps,
  desk: DeskRuntime,
  q: PreCheckoutQuery,
  log: () => Logger,
): Promise<PreCheckoutAnswer> {
  // A desk not open (no owner or staff group yet, or a staff group broken: src/setup/gate.ts) takes no payment for
  // anything new, whatever invoice the client still has. No query: the last look of this process (<= ~2 s old).
  if (sellingClosedNow(deps.db, deps.desk(desk.botId)).length > 0) {
    const lang = deskLanguage(desk, q.from.language_code)
    return { ok: false, error_message: deps.i18n.t(lang, 'precheckout-not-open') }
  }
  // A plan's invoice (src/subscriptions): its own checks, no capacity hold.
  if (isPlanPayload(q.invoice_payload)) return planPreCheckoutAnswer(deps, desk, q)
  let decision: Awaited<ReturnType<typeof decidePreCheckout>>
  try {
    decision = await decidePreCheckout(deps, desk, {
      queryId: q.id,
      fromId: q.from.id,
      currency: q.currency,
      totalAmount: q.total_amount,
      payload: q.invoice_payload,
    })
  } catch (err) {
    log().error({ err: errorSummary(err) }, 'pre-checkout failed')
    decision = { ok: false, code: 'unavailable' }
  }
  if (decision.ok) return { ok: true }
  log().info({ code: decision.code, order: decision.orderId }, 'pre-checkout refused')
  const lang = deskLanguage(desk, q.from.language_code)
  return {
    ok: false,
    error_message: deps.i18n.t(lang, `precheckout-${decision.code}`, decision.params ?? {}),
  }
}

/**
 * Answers a pre_checkout_query from the middleware (polling): bot.ts runs this before the rest of the middleware
 * (the per-chat queue, i18n, conversations and their storage reads), which a pre-checkout does not need. On a
 * webhook, bot.ts answers in the webhook response without a context at all.
 */
export async function answerPreCheckout(ctx: BotContext): Promise<void> {
  const a = await preCheckoutAnswer(ctx.deps, ctx.desk, ctx.preCheckoutQuery!, () => ctx.log)
  await ctx.answerPreCheckoutQuery(a.ok, a.ok ? undefined : { error_message: a.error_message })
}

const priv = paymentsFeature.chatType('private')

priv.on('message:successful_payment', async (ctx) => {
  if (isPlanPayload(ctx.message.successful_payment.invoice_payload))
    return handlePlanPayment(ctx, ctx.message.successful_payment)
  const r = await recordSuccessfulPayment(ctx.deps, ctx.desk, {
    userId: ctx.from.id,
    lang: ctx.lang,
    payment: ctx.message.successful_payment,
  })
  ctx.log.info(
    {
      status: r.status,
      charge_id: ctx.message.successful_payment.telegram_payment_charge_id,
      ...('orderId' in r ? { order_id: r.orderId } : {}),
    },
    'successful_payment',
  )
})

priv.on('message:refunded_payment', async (ctx) => {
  const rp = ctx.message.refunded_payment
  const r = await recordExternalRefund(ctx.deps, ctx.desk, {
    userId: ctx.from.id,
    chargeId: rp.telegram_payment_charge_id,
    amount: rp.total_amount,
  })
  ctx.log.info({ status: r.status }, 'refunded_payment')
})

async function answerStart(ctx: BotContext, r: StartResult): Promise<void> {
  if (r.ok) {
    await ctx.answerCallbackQuery(
      r.status === 'scheduled' ? { text: ctx.t('start-scheduled-ok') } : undefined,
    )
    return
  }
  const zone = await clientZone(ctx.deps.db, ctx.desk, ctx.from!.id)
  const at = typeof r.params?.at === 'string' ? formatInstant(new Date(r.params.at), zone, ctx.lang) : '—'
  await ctx.answerCallbackQuery({ text: ctx.t(`start-refused-${r.code}`, { at }), show_alert: true })
}

priv.callbackQuery(/^ord:start:(\d{1,15})$/, async (ctx) => {
  const r = await startOnRequest(ctx.deps, ctx.desk, {
    orderId: Number(ctx.match[1]),
    userId: ctx.from.id,
    updateId: ctx.update.update_id,
  })
  await answerStart(ctx, r)
})

priv.callbackQuery(/^ord:at:(\d{1,15}):(\d{1,12})$/, async (ctx) => {
  const r = await agreeStart(ctx.deps, ctx.desk, {
    orderId: Number(ctx.match[1]),
    actorId: ctx.from.id,
    asAdmin: false,
    at: new Date(Number(ctx.match[2]) * 1000),
    attempt: `u${ctx.update.update_id}`,
  })
  await answerStart(ctx, r)
})

priv.callbackQuery(/^ord:opts:(\d{1,15})$/, async (ctx) => {
  const { deps, desk } = ctx
  const r = await startOptions(deps, desk, { orderId: Number(ctx.match[1]), userId: ctx.from.id })
  if (!r.ok) return ctx.answerCallbackQuery({ text: ctx.t(`start-refused-${r.code}`), show_alert: true })
  const { order, options } = r
  await ctx.answerCallbackQuery()
  const zone = await clientZone(deps.db, desk, ctx.from.id)
  const kb = new InlineKeyboard()
  for (const o of options)
    kb.text(
      ctx.t('btn-start-at', { at: formatInstant(o.at, zone, ctx.lang) }),
      `ord:at:${order.id}:${Math.floor(o.at.getTime() / 1000)}`,
    ).row()
  kb.text(ctx.t('btn-ask-refund'), `ord:refund:${order.id}`)
  await ctx.reply(ctx.t(options.length ? 'start-options' : 'start-options-none', { title: order.title }), {
    reply_markup: kb,
  })
})

priv.callbackQuery(/^ord:refund:(\d{1,15})$/, async (ctx) => {
  const { deps, desk } = ctx
  const paid = await paidOrderOf(deps, desk, { orderId: Number(ctx.match[1]), userId: ctx.from.id })
  if (!paid) return ctx.answerCallbackQuery({ text: ctx.t('start-refused-order-unknown'), show_alert: true })
  const { order, payment } = paid
  await ctx.answerCallbackQuery()
  await openDispute(deps, desk, {
    userId: ctx.from.id,
    lang: ctx.lang,
    paymentId: payment.id,
    reason: ctx.t('dispute-reason-refund-request', { order: String(order.id), title: order.title }),
    updateId: ctx.update.update_id,
  })
})
