import { Composer } from 'grammy'
import { recordInvoiceMessage } from '../../orders/orders.service'
import { createTopUpOrder } from '../../orders/topups'
import { orderPayload } from '../../payments/payload'
import { XTR } from '../../payments/pre-checkout'
import { cut, INVOICE_DESCRIPTION_MAX, INVOICE_TITLE_MAX } from '../../text'
import type { BotContext } from '../context'

/**
 * Top-up inside a consultation: `tu:<consultation>:<index>` (the buttons under "no questions left" and "closes
 * soon") makes a top-up order and sends its Stars invoice. Pre-checkout and the payment go the usual way
 * (src/payments/pre-checkout.ts, successful-payment.ts -> topup.ts).
 */
export const topUpFeature = new Composer<BotContext>()
const priv = topUpFeature.chatType('private')

priv.callbackQuery(/^tu:(\d{1,15}):(\d{1,2})$/, async (ctx) => {
  const r = await createTopUpOrder(ctx.deps, ctx.desk, {
    from: ctx.from,
    consultationId: Number(ctx.match[1]),
    index: Number(ctx.match[2]),
    updateId: ctx.update.update_id,
  })
  if (!r.ok) {
    if (r.code === 'duplicate') return ctx.answerCallbackQuery()
    return ctx.answerCallbackQuery({ text: ctx.t(`topup-refused-${r.code}`), show_alert: true })
  }
  await ctx.answerCallbackQuery()
  const order = r.order
  const title = cut(order.title, INVOICE_TITLE_MAX, { ellipsis: '…' })
  const description = ctx.t(
    r.topUp.kind === 'questions' ? 'topup-invoice-questions' : 'topup-invoice-hours',
    {
      count: r.topUp.kind === 'questions' ? r.topUp.questions : r.topUp.hours,
    },
  )
  const invoice = await ctx.replyWithInvoice(
    title,
    cut(description, INVOICE_DESCRIPTION_MAX),
    orderPayload(order.id),
    XTR,
    [{ label: title, amount: order.price_stars }],
  )
  await recordInvoiceMessage(ctx.deps, order.id, invoice.message_id)
})
