import { Composer } from 'grammy'
import { clientZone } from '../../clients/clients.service'
import { chooseConsultation, offerSwitch } from '../../consultations/choice'
import { labelParams } from '../../consultations/several'
import type { BotContext } from '../context'

/**
 * Several consultations at once (issue 26): the client's choice of where messages that name no consultation go.
 * sw:<consultation id> is a button of the choice (asked once when a message is ambiguous, or by /switch) and of each
 * receipt while several run; the service checks the consultation is the presser's and live, in its transaction.
 */
export const severalFeature = new Composer<BotContext>()
const priv = severalFeature.chatType('private')

priv.command('switch', async (ctx) => {
  const r = await offerSwitch(ctx.deps, ctx.desk, ctx.from.id, ctx.lang, ctx.update.update_id)
  if (r.kind === 'asked') return
  if (r.kind === 'none') return ctx.reply(ctx.t('several-switch-none'))
  const zone = await clientZone(ctx.deps.db, ctx.desk, ctx.from.id)
  await ctx.reply(ctx.t('several-switch-one', labelParams(r.only, zone, ctx.lang)))
})

priv.callbackQuery(/^sw:(\d{1,15})$/, async (ctx) => {
  const r = await chooseConsultation(ctx.deps, ctx.desk, {
    userId: ctx.from.id,
    consultationId: Number(ctx.match[1]),
    lang: ctx.lang,
    updateId: ctx.update.update_id,
  })
  if (!r.ok) return ctx.answerCallbackQuery({ text: ctx.t('several-chosen-gone'), show_alert: true })
  await ctx.answerCallbackQuery({ text: ctx.t('several-chosen-short', { title: r.chosen.title }) })
})
