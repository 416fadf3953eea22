import { Composer, InlineKeyboard } from 'grammy'
import { chooseClientZone, clientZone } from '../../clients/clients.service'
import { clientOrders, consultationStatusLines } from '../../lifecycle/status'
import { changeDeadline } from '../../payments/change-start'
import { OFFERED_ZONES } from '../../time/client-time'
import { formatInstant, zoneIn, zoneName } from '../../time/format'
import type { BotContext } from '../context'

/**
 * /status: the client's orders and consultations with their state and window (in the client's time zone; for a
 * started one also time left, appeals used and left, open appeals with their due times), with a Start button where
 * one applies, a transcript button for a finished one; the time zone choice (tz:menu, tz:set:<index>, /timezone).
 */
export const statusFeature = new Composer<BotContext>()
const priv = statusFeature.chatType('private')

priv.command('status', async (ctx) => {
  const { deps, desk } = ctx
  const orders = await clientOrders(deps, desk, ctx.from.id, 10)
  if (orders.length === 0)
    return ctx.reply(ctx.t('status-empty'), {
      reply_markup: new InlineKeyboard().text(ctx.t('btn-all-tariffs'), 'tf:list'),
    })
  const zone = await clientZone(deps.db, desk, ctx.from.id)
  // The title says the zone once; the dates below leave it out.
  const at = (d: Date | null) => (d ? formatInstant(d, zone, ctx.lang, { zone: false }) : '—')
  const kb = new InlineKeyboard()
  const lines = [ctx.t('status-title', { zone: zoneIn(zone, ctx.lang) })]
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
  await ctx.reply(lines.join('\n\n'), { reply_markup: kb })
})

function zonesKeyboard(ctx: BotContext): InlineKeyboard {
  const kb = new InlineKeyboard()
  OFFERED_ZONES.forEach((z, i) => {
    kb.text(ctx.t('tz-city', { zone: z.replaceAll('/', '-'), name: z }), `tz:set:${i}`)
    if (i % 2 === 1) kb.row()
  })
  return kb
}

async function showZones(ctx: BotContext) {
  const zone = await clientZone(ctx.deps.db, ctx.desk, ctx.from!.id)
  await ctx.reply(ctx.t('tz-pick', { zone: zoneIn(zone, ctx.lang) }), { reply_markup: zonesKeyboard(ctx) })
}

priv.command('timezone', showZones)
priv.callbackQuery('tz:menu', async (ctx) => {
  await ctx.answerCallbackQuery()
  await showZones(ctx)
})

priv.callbackQuery(/^tz:set:(\d{1,3})$/, async (ctx) => {
  const zone = OFFERED_ZONES[Number(ctx.match[1])]
  if (!zone) return ctx.answerCallbackQuery({ text: ctx.t('button-outdated'), show_alert: true })
  await chooseClientZone(ctx.deps.db, ctx.desk.botId, ctx.from, zone)
  const name = zoneName(zone, ctx.lang)
  await ctx.answerCallbackQuery({ text: ctx.t('tz-set', { zone: name }) })
  await ctx.editMessageText(ctx.t('tz-set', { zone: name })).catch(() => {})
})
