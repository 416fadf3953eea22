import { Composer } from 'grammy'
import { pick } from '../../config/load'
import { policyLines } from '../../payments/offer'
import type { BotContext } from '../context'

/** /terms and /privacy: the texts from config, in the client's language (Telegram requires /privacy). */
export const termsFeature = new Composer<BotContext>()
const priv = termsFeature.chatType('private')

priv.command('terms', (ctx) =>
  ctx.reply(
    [
      ctx.t('terms-title', { version: ctx.desk.terms.version }),
      pick(ctx.desk.terms.text, ctx.lang, ctx.desk.defaultLanguage),
      '',
      ctx.t('terms-tariffs-title'),
      ...ctx.desk.tariffs.map((tariff) => {
        const [refund, late, topUps] = policyLines((l, k, p) => ctx.deps.i18n.t(l, k, p), tariff, ctx.lang)
        const line = ctx.t('terms-tariff', {
          title: pick(tariff.title, ctx.lang, ctx.desk.defaultLanguage),
          refund: refund!,
          late: late!,
        })
        return topUps ? `${line} ${topUps}` : line
      }),
      '',
      ctx.t('terms-footer'),
    ].join('\n'),
  ),
)

priv.command('privacy', (ctx) =>
  ctx.reply(
    [
      ctx.t('privacy-title'),
      pick(ctx.desk.privacy, ctx.lang, ctx.desk.defaultLanguage),
      '',
      ctx.t('privacy-rights'),
    ].join('\n'),
  ),
)
