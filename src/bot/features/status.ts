import { Composer, InlineKeyboard } from 'grammy'
import { chooseClientZone, clientZone } from '../../clients/clients.service'
import { pick } from '../../config/load'
import type { Db } from '../../db/database'
import {
  clientOrders,
  clientPayments,
  clientPlanPeriods,
  consultationStatusLines,
} from '../../lifecycle/status'
import { changeDeadline } from '../../payments/change-start'
import { findPlan } from '../../subscriptions/plans'
import { cut, MESSAGE_TEXT_MAX } from '../../text'
import { OFFERED_ZONES } from '../../time/client-time'
import { formatDate, formatInstant, type ReaderZone, zoneIn, zoneName } from '../../time/format'
import type { BotContext } from '../context'

/**
 * /status: the client's orders and consultations with their state and window (in the client's time zone; for a
 * started one also time left, appeals used and left, open appeals with their due times), with a Start button where
 * one applies, a Cancel button for a start not begun (src/payments/change-start.ts), a transcript button for a
 * finished one; then, in a second message, the client's payments with their amounts and refunds and a support
 * plan's periods, past ones included (issue 26); the time zone choice (tz:menu, tz:z:<zone>, /timezone).
 */
export const statusFeature = new Composer<BotContext>()
const priv = statusFeature.chatType('private')

priv.command('status', async (ctx) => {
  const { deps, desk } = ctx
  const orders = await clientOrders(deps, desk, ctx.from.id, 10)
  const money = await moneyLines(ctx)
  if (orders.length === 0 && money.length === 0)
    return ctx.reply(ctx.t('status-empty'), {
      reply_markup: new InlineKeyboard().text(ctx.t('btn-all-tariffs'), 'tf:list'),
    })
  const zone = await clientZone(deps.db, desk, ctx.from.id)
  // The title says the zone once (none when it is the client's own); the dates below leave it out.
  const at = (d: Date | null) => (d ? formatInstant(d, zone, ctx.lang, { zone: false }) : '—')
  const kb = new InlineKeyboard()
  const lines = [ctx.t('status-title', titleZone(zone, ctx.lang))]
  for (const o of orders) {
    let key: string
    if (o.state === 'active' && o.consultation_state === 'active') key = 'status-active'
    else if (o.state === 'paid_waiting' && o.needs_start_date) key = 'status-needs-start'
    else if (o.state === 'paid_waiting' && o.start_mode === 'on_request') key = 'status-waiting-start'
    else if (o.state === 'paid_waiting') key = 'status-scheduled'
    else key = `status-${o.state}`
    const block = [
      ctx.t(key, {
        order: String(o.id),
        title: o.title,
        start: at(o.starts_at ?? o.slot_start),
        end: at(o.access_until),
        startBy: at(o.start_by),
        price: o.price_stars,
      }),
    ]
    // Time left, appeals used/left, open appeals with their due times (src/lifecycle/status.ts).
    if (o.consultation_id && o.consultation_state && o.consultation_state !== 'waiting')
      block.push(
        ...(await consultationStatusLines(
          deps,
          {
            id: o.consultation_id,
            state: o.consultation_state,
            starts_at: o.starts_at,
            access_until: o.access_until,
          },
          zone,
          ctx.lang,
        )),
      )
    lines.push(block.join('\n'))
    if (o.consultation_id && (o.consultation_state === 'closed' || o.consultation_state === 'revoked'))
      kb.text(ctx.t('transcript-button-order', { order: String(o.id) }), `tr:get:${o.consultation_id}`).row()
    if (o.state === 'paid_waiting' && o.start_mode === 'on_request' && !o.needs_start_date)
      kb.text(ctx.t('btn-start-order', { order: String(o.id) }), `ord:start:${o.id}`).row()
    if (o.state === 'paid_waiting' && o.needs_start_date)
      kb.text(ctx.t('btn-pick-start-order', { order: String(o.id) }), `ord:opts:${o.id}`).row()
    // An on_request start not pressed yet, or an immediate one waiting for the desk's opening: cancel until it
    // starts (the same refund path; checked again under the order's lock).
    if (
      o.state === 'paid_waiting' &&
      !o.needs_start_date &&
      ((o.start_mode === 'on_request' && !o.capacity_key) ||
        (o.start_mode === 'immediate' && o.slot_start && Date.now() < o.slot_start.getTime()))
    )
      kb.text(ctx.t('btn-cancel-start', { order: String(o.id) }), `ord:cx:${o.id}`).row()
    // A scheduled start: move or cancel it until the cut-off; after it, the line says why the buttons are gone.
    if (o.state === 'paid_waiting' && o.start_mode === 'scheduled' && !o.needs_start_date && o.slot_start) {
      const deadline = changeDeadline(desk, o)!
      if (Date.now() < deadline.getTime())
        kb.text(ctx.t('btn-move-start', { order: String(o.id) }), `ord:mv:${o.id}`)
          .text(ctx.t('btn-cancel-start', { order: String(o.id) }), `ord:cx:${o.id}`)
          .row()
      else lines[lines.length - 1] += `\n${ctx.t('status-change-closed', { deadline: at(deadline) })}`
    }
  }
  kb.text(ctx.t('tz-change-button'), 'tz:menu')
  if (orders.length > 0)
    await ctx.reply(cut(lines.join('\n\n'), MESSAGE_TEXT_MAX, { ellipsis: '…' }), { reply_markup: kb })
  if (money.length > 0) await ctx.reply(cut(money.join('\n\n'), MESSAGE_TEXT_MAX, { ellipsis: '…' }))
})

/** A title's zone: in words, or `own` (no zone) when the client picked it. */
function titleZone(zone: ReaderZone, lang: string): { own: 'yes' | 'no'; zone: string } {
  return { own: zone.own ? 'yes' : 'no', zone: zoneIn(zone.id, lang) }
}

/** The payments block and the plan's periods block of /status (empty when the client has neither). */
async function moneyLines(ctx: BotContext & { from: { id: number } }): Promise<string[]> {
  const { deps, desk } = ctx
  const db: Db = deps.db
  const [payments, periods] = await Promise.all([
    clientPayments({ db }, desk, ctx.from.id, 10),
    clientPlanPeriods({ db }, desk, ctx.from.id, 12),
  ])
  if (payments.length === 0 && periods.length === 0) return []
  const zone = await clientZone(db, desk, ctx.from.id)
  // The title says the zone once; the dates below leave it out (as the orders above).
  const at = (d: Date) => formatInstant(d, zone, ctx.lang, { zone: false })
  const day = (d: Date) => formatDate(d, zone, ctx.lang)
  const out: string[] = []
  if (payments.length > 0) {
    const rows = [ctx.t('status-payments-title', titleZone(zone, ctx.lang))]
    for (const p of payments) {
      const what =
        p.kind === 'unmatched' || !p.title
          ? ctx.t('status-payment-for-unknown')
          : ctx.t(`status-payment-for-${p.order_kind ?? 'consultation'}`, { title: p.title })
      rows.push(
        ctx.t(p.kind === 'overpayment' ? 'status-payment-over' : 'status-payment', {
          at: at(p.created_at),
          amount: p.total_amount,
          what,
        }),
      )
      if (p.refunded_at)
        rows.push(ctx.t('status-payment-refunded', { at: at(p.refunded_at), amount: p.total_amount }))
    }
    out.push(rows.join('\n'))
  }
  if (periods.length > 0) {
    const now = Date.now()
    const rows = [ctx.t('status-periods-title')]
    for (const p of periods) {
      const plan = findPlan(desk, p.plan_code)
      const title = plan ? pick(plan.title, ctx.lang, desk.defaultLanguage) : p.plan_code
      const current =
        p.subscription_state === 'active' && p.period_start.getTime() <= now && now < p.period_end.getTime()
      rows.push(
        ctx.t(current ? 'status-period-current' : 'status-period-past', {
          number: p.number,
          title,
          start: day(p.period_start),
          end: day(p.period_end),
          questions: p.granted,
          carried: p.carried,
        }),
      )
    }
    out.push(rows.join('\n'))
  }
  return out
}

/** The desk's offered zones (rules.zones), a button each; the zone itself in the data, so a list changed since still
 * names what the client saw. */
function zonesKeyboard(ctx: BotContext): InlineKeyboard {
  const kb = new InlineKeyboard()
  ctx.desk.rules.zones.forEach((z, i) => {
    kb.text(ctx.t('tz-city', { zone: z.replaceAll('/', '-'), name: z }), `tz:z:${z}`)
    if (i % 2 === 1) kb.row()
  })
  return kb
}

async function showZones(ctx: BotContext) {
  const zone = await clientZone(ctx.deps.db, ctx.desk, ctx.from!.id)
  await ctx.reply(ctx.t('tz-pick', { zone: zoneIn(zone.id, ctx.lang) }), { reply_markup: zonesKeyboard(ctx) })
}

priv.command('timezone', showZones)
priv.callbackQuery('tz:menu', async (ctx) => {
  await ctx.answerCallbackQuery()
  await showZones(ctx)
})

// tz:z:<zone>; tz:set:<i> is a button of an older keyboard (an index into the list offered before issue 27).
priv.callbackQuery(/^tz:(?:z:([A-Za-z0-9_+\-/]{1,40})|set:(\d{1,3}))$/, async (ctx) => {
  const zone = ctx.match[1] ?? OFFERED_ZONES[Number(ctx.match[2])]
  // Only a zone the desk offers now (its rules.zones may have changed since the keyboard was drawn).
  if (!zone || !ctx.desk.rules.zones.includes(zone))
    return ctx.answerCallbackQuery({ text: ctx.t('button-outdated'), show_alert: true })
  await chooseClientZone(ctx.deps.db, ctx.desk.botId, ctx.from, zone)
  const name = zoneName(zone, ctx.lang)
  await ctx.answerCallbackQuery({ text: ctx.t('tz-set', { zone: name }) })
  await ctx.editMessageText(ctx.t('tz-set', { zone: name })).catch(() => {})
})
