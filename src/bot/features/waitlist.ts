import { Composer } from 'grammy'
import { clientZone } from '../../clients/clients.service'
import { joinWaitlist } from '../../orders/waitlist'
import { formatInstant } from '../../time/format'
import type { BotContext } from '../context'

/** wl:join:<tariff>:<epoch s>: the client joins the waitlist of a full start (src/orders/waitlist.ts). */
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
    }),
  )
})
