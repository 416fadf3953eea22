import { Composer } from 'grammy'
import { cut } from '../../text'
import type { BotContext } from '../context'

/**
 * The last feature: a callback query no earlier feature took (an old keyboard, foreign or forged data) is answered
 * with a short localized text, so the button stops spinning. Nothing else happens.
 */
export const fallbackFeature = new Composer<BotContext>()

fallbackFeature.on('callback_query', async (ctx) => {
  ctx.log.info({ data: cut(ctx.callbackQuery.data ?? '', 64) }, 'callback matched nothing')
  await ctx.answerCallbackQuery({ text: ctx.t('callback-unknown') })
})
