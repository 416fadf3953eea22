import { Composer, InlineKeyboard } from 'grammy'
import { isStaffGroup } from '../../config/staff-groups'
import { requestReconciliation } from '../../payments/reconciliation'
import { refundPreview, refundWithTopUps } from '../../payments/refund-with-topups'
import { findDeskPayment, type RefundOutcome, refundPayment, refundsWaiting } from '../../payments/refunds'
import type { PaidTopUp } from '../../payments/topup-refund'
import { cut } from '../../text'
import { actorIdOf, isAdminHere } from '../access'
import type { BotContext } from '../context'

/**
 * Admin payment tools (in the staff group or a private chat with the bot; the owner and admins only):
 *
 * - Refund buttons (rf:ask:<payment>) on payment alerts, and `/refund <charge id | #payment id>`: a confirmation
 *   (rf:yes:<payment> / rf:no) first, then refundStarPayment. Telegram's error description is shown as it is. A
 *   consultation's payment with paid top-ups lists them (amount, what each bought) and offers "the consultation
 *   only" (rf:yes) or "with its top-ups" (rf:all:<payment>:<last top-up payment shown>); a top-up's own payment
 *   names its consultation.
 * - `/refunds`: what waits for an admin (overpayments, unmatched payments, paid orders without a start date).
 * - `/reconcile`: runs the reconciliation with Telegram's transaction list now.
 */
export const adminPaymentsFeature = new Composer<BotContext>()

/** The owner and admins (src/config/access.ts; an anonymous admin too, in a staff group that allows them). */
const isAdmin = isAdminHere

const where = (ctx: BotContext) => {
  const m = ctx.msg ?? ctx.callbackQuery?.message
  const thread = m && 'message_thread_id' in m ? m.message_thread_id : undefined
  return thread ? { message_thread_id: thread } : {}
}

/**
 * Text posted in the staff group speaks the desk's language (the group is shared, like the alerts the jobs post
 * there); in a private chat, the reader's. Pop-up alerts always use the presser's language.
 */
export function say(ctx: BotContext) {
  return (key: string, params?: Record<string, string | number>) =>
    isStaffGroup(ctx.desk, ctx.chat?.id)
      ? ctx.deps.i18n.t(ctx.desk.defaultLanguage, key, params)
      : ctx.t(key, params)
}

/** Admin-facing text for a refund outcome: precise, with Telegram's own description on failure. */
export function refundOutcomeText(ctx: BotContext, r: RefundOutcome): string {
  switch (r.status) {
    case 'refunded':
      return say(ctx)(r.alreadyAtTelegram ? 'refund-ok-already-at-telegram' : 'refund-ok', {
        payment: String(r.payment.id),
        charge: r.payment.telegram_payment_charge_id,
        amount: r.payment.total_amount,
        user: String(r.payment.user_id),
      })
    case 'already-refunded':
      return say(ctx)('refund-already', {
        payment: String(r.payment.id),
        charge: r.payment.telegram_payment_charge_id,
      })
    case 'in-progress':
      return say(ctx)('refund-in-progress', { payment: String(r.payment.id) })
    case 'unknown-payment':
      return say(ctx)('refund-unknown')
    case 'failed':
      return say(ctx)('refund-failed', {
        payment: String(r.payment.id),
        charge: r.payment.telegram_payment_charge_id,
        description: r.description,
      })
  }
}

/** "+2 questions", "+3 h": what a top-up bought. */
function topUpWhat(ctx: BotContext, t: PaidTopUp): string {
  return t.questions > 0
    ? say(ctx)('topup-title-questions', { count: t.questions })
    : say(ctx)('topup-title-hours', { count: t.hours })
}

async function askConfirmation(ctx: BotContext, paymentId: number): Promise<void> {
  const preview = await refundPreview(ctx.deps, ctx.desk, paymentId)
  const p = preview?.payment
  if (!preview || !p) {
    await ctx.reply(say(ctx)('refund-unknown-id', { payment: String(paymentId) }), where(ctx))
    return
  }
  if (p.refunded_at) {
    await ctx.reply(
      say(ctx)('refund-already', { payment: String(p.id), charge: p.telegram_payment_charge_id }),
      where(ctx),
    )
    return
  }
  const lines = [
    say(ctx)('refund-confirm', {
      payment: String(p.id),
      charge: p.telegram_payment_charge_id,
      amount: p.total_amount,
      user: String(p.user_id),
      kind: p.kind,
    }),
  ]
  const kb = new InlineKeyboard()
  const { topUps, topUpOf } = preview
  if (topUpOf)
    lines.push(
      say(ctx)('refund-confirm-is-topup', {
        consultation: String(topUpOf.consultationId),
        what: topUpWhat(ctx, topUpOf),
      }),
    )
  if (topUps.length > 0) {
    // A consultation with paid top-ups: the admin sees each and chooses, in this one step, with them or without.
    lines.push(
      '',
      say(ctx)('refund-confirm-topups', {
        consultation: String(preview.consultationId),
        count: topUps.length,
      }),
      ...topUps.map((t) =>
        say(ctx)('refund-confirm-topup-line', {
          payment: String(t.paymentId),
          amount: t.amount,
          what: topUpWhat(ctx, t),
        }),
      ),
      say(ctx)('refund-confirm-topup-rule'),
    )
    const total = p.total_amount + topUps.reduce((n, t) => n + t.amount, 0)
    const upTo = Math.max(...topUps.map((t) => t.paymentId))
    kb.text(say(ctx)('btn-refund-consultation-only', { amount: p.total_amount }), `rf:yes:${p.id}`)
      .row()
      .text(
        say(ctx)('btn-refund-with-topups', { count: topUps.length, amount: total }),
        `rf:all:${p.id}:${upTo}`,
      )
      .row()
      .text(say(ctx)('btn-cancel'), 'rf:no')
  } else kb.text(say(ctx)('btn-refund-yes'), `rf:yes:${p.id}`).text(say(ctx)('btn-cancel'), 'rf:no')
  await ctx.reply(lines.join('\n'), { ...where(ctx), reply_markup: kb })
}

adminPaymentsFeature.callbackQuery(/^rf:(ask|yes):(\d{1,15})$/, async (ctx) => {
  if (!isAdmin(ctx)) return ctx.answerCallbackQuery({ text: ctx.t('admin-only'), show_alert: true })
  await ctx.answerCallbackQuery()
  const paymentId = Number(ctx.match[2])
  if (ctx.match[1] === 'ask') return askConfirmation(ctx, paymentId)
  const r = await refundPayment(ctx.deps, ctx.desk, { paymentId }, { id: actorIdOf(ctx), source: 'admin' })
  const text = refundOutcomeText(ctx, r)
  await ctx.editMessageText(text).catch(() => ctx.reply(text, where(ctx)))
})

// The consultation with the top-ups listed in its confirmation (those up to the payment id on the button; one
// paid later is named, not refunded). A second press, another admin or a refunded_payment meanwhile: each payment
// is still refunded once (its own claim), and the answer says which were refunded before.
adminPaymentsFeature.callbackQuery(/^rf:all:(\d{1,15}):(\d{1,15})$/, async (ctx) => {
  if (!isAdmin(ctx)) return ctx.answerCallbackQuery({ text: ctx.t('admin-only'), show_alert: true })
  await ctx.answerCallbackQuery()
  const paymentId = Number(ctx.match[1])
  const r = await refundWithTopUps(
    ctx.deps,
    ctx.desk,
    paymentId,
    { upTo: Number(ctx.match[2]) },
    { id: actorIdOf(ctx), source: 'admin' },
  )
  const text =
    r.status === 'done'
      ? [
          refundOutcomeText(ctx, r.main),
          ...r.topUps.map((t) => refundOutcomeText(ctx, t.outcome)),
          ...(r.later.length
            ? [
                say(ctx)('refund-topups-later', {
                  count: r.later.length,
                  payments: r.later.map((t) => String(t.paymentId)).join(', '),
                }),
              ]
            : []),
        ].join('\n')
      : r.status === 'unknown-payment'
        ? say(ctx)('refund-unknown-id', { payment: String(paymentId) })
        : r.status === 'not-a-consultation'
          ? say(ctx)('refund-not-a-consultation', { payment: String(paymentId) })
          : say(ctx)('refund-topup-not-its', { payment: String(r.paymentId) })
  await ctx.editMessageText(text).catch(() => ctx.reply(text, where(ctx)))
})

adminPaymentsFeature.callbackQuery('rf:no', async (ctx) => {
  await ctx.answerCallbackQuery()
  await ctx.editMessageText(say(ctx)('refund-cancelled')).catch(() => {})
})

const admin = adminPaymentsFeature.filter(isAdmin)

admin.command('refund', async (ctx) => {
  const arg = ctx.match.trim()
  if (!arg) return ctx.reply(say(ctx)('refund-usage'), where(ctx))
  const byId = /^#(\d{1,15})$/.exec(arg)
  if (byId) return askConfirmation(ctx, Number(byId[1]))
  const p = await findDeskPayment(ctx.deps, ctx.desk, { chargeId: arg })
  if (!p) return ctx.reply(say(ctx)('refund-unknown-charge', { charge: cut(arg, 200) }), where(ctx))
  return askConfirmation(ctx, p.id)
})

admin.command('refunds', async (ctx) => {
  const q = await refundsWaiting(ctx.deps, ctx.desk)
  if (q.payments.length === 0 && q.waiting.length === 0) return ctx.reply(say(ctx)('queue-empty'), where(ctx))
  const kb = new InlineKeyboard()
  const lines = [say(ctx)('queue-title')]
  for (const p of q.payments.slice(0, 20)) {
    lines.push(
      say(ctx)('queue-payment', {
        payment: String(p.id),
        kind: p.kind,
        amount: p.total_amount,
        user: String(p.user_id),
        order: String(p.order_id ?? '—'),
        charge: p.telegram_payment_charge_id,
      }),
    )
    kb.text(say(ctx)('btn-refund-payment', { payment: String(p.id) }), `rf:ask:${p.id}`).row()
  }
  for (const w of q.waiting.slice(0, 20)) {
    lines.push(
      say(ctx)('queue-waiting', {
        order: String(w.order_id),
        title: w.title,
        amount: w.price_stars,
        user: String(w.user_id),
        payment: String(w.payment_id),
      }),
    )
    kb.text(say(ctx)('btn-refund-payment', { payment: String(w.payment_id) }), `rf:ask:${w.payment_id}`).row()
  }
  await ctx.reply(lines.join('\n'), { ...where(ctx), reply_markup: kb })
})

admin.command('reconcile', async (ctx) => {
  await requestReconciliation(ctx.deps, ctx.desk, actorIdOf(ctx))
  await ctx.reply(say(ctx)('reconcile-started'), where(ctx))
})

// Non-admins get a plain refusal for admin commands instead of silence.
adminPaymentsFeature.command(['refund', 'refunds', 'reconcile'], (ctx) =>
  ctx.reply(say(ctx)('admin-only'), where(ctx)),
)
