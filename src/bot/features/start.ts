import { Composer, InlineKeyboard } from 'grammy'
import { recordStart } from '../../clients/clients.service'
import { pick } from '../../config/load'
import { sellableTariffs } from '../../orders/tariffs'
import { openForSale } from '../../settings/setup'
import type { BotContext } from '../context'
import { notOpenText } from './tariffs'

export const startFeature = new Composer<BotContext>()
const priv = startFeature.chatType('private')

priv.command('start', async (ctx) => {
  const { deps, desk } = ctx
  const first = await recordStart(deps.db, desk.botId, ctx.update.update_id, ctx.from)
  if (!first) return
  const welcome = ctx.t('welcome', {
    name: ctx.from.first_name,
    desk: pick(desk.name, ctx.lang, desk.defaultLanguage),
  })
  // A desk being set up (src/settings/setup.ts) sells nothing yet.
  const onSale = sellableTariffs(desk)
  if (!openForSale(desk) || onSale.length + desk.plans.filter((p) => !p.paused).length === 0)
    return void (await ctx.reply([welcome, '', notOpenText(ctx)].join('\n')))
  const lines = onSale.map((t) =>
    ctx.t('tariff-line', { title: pick(t.title, ctx.lang, desk.defaultLanguage), price: t.priceStars }),
  )
  // Support plans (src/subscriptions) are offered next to the one-off tariffs, with their price per 30 days.
  const plans = (desk.plans ?? [])
    .filter((p) => !p.paused)
    .map((p) =>
      ctx.t('welcome-plan-line', {
        title: pick(p.title, ctx.lang, desk.defaultLanguage),
        price: p.priceStars,
      }),
    )
  await ctx.reply(
    [
      welcome,
      '',
      ctx.t('welcome-tariffs'),
      ...lines,
      ...(plans.length ? ['', ctx.t('welcome-plans'), ...plans] : []),
    ].join('\n'),
    {
      reply_markup: new InlineKeyboard().text(
        ctx.t(plans.length ? 'btn-tariffs-and-plans' : 'btn-tariffs'),
        'tf:list',
      ),
    },
  )
})

/** /help: every client command; /plan only where the desk sells a plan. */
priv.command('help', (ctx) =>
  ctx.reply(
    [
      ctx.t('help'),
      ...((ctx.desk.plans?.length ?? 0) > 0 ? [ctx.t('help-plan')] : []),
      ctx.t('help-data'),
    ].join('\n'),
  ),
)
