import { Composer } from 'grammy'
import { requestExport } from '../../privacy/export'
import { forgetClient } from '../../privacy/forget'
import type { BotContext } from '../context'

/**
 * Data rights (issue 18), private chat only: /mydata sends a JSON file of everything this desk holds about the client
 * (built and sent by a job); /forget asks for a confirmation (pv:forget:yes / pv:forget:no), then erases or
 * anonymises their personal data and message contents (src/privacy/forget.ts says what is kept and why).
 */
export const privacyFeature = new Composer<BotContext>()
const priv = privacyFeature.chatType('private')

priv.command('mydata', async (ctx) => {
  const r = await requestExport(ctx.deps, ctx.desk, {
    userId: ctx.from.id,
    lang: ctx.lang,
    updateId: ctx.update.update_id,
  })
  if (r.status === 'queued') await ctx.reply(ctx.t('privacy-mydata-queued'))
  // One export per client every few minutes (src/privacy/export.ts): say when they can ask again.
  if (r.status === 'too-soon') {
    const minutes = Math.max(1, Math.ceil((r.nextAt.getTime() - Date.now()) / 60_000))
    await ctx.reply(ctx.t('privacy-mydata-too-soon', { minutes }))
  }
})

priv.command('forget', (ctx) =>
  ctx.reply(ctx.t('privacy-forget-confirm'), {
    reply_markup: {
      inline_keyboard: [
        [
          { text: ctx.t('privacy-forget-yes'), callback_data: 'pv:forget:yes' },
          { text: ctx.t('privacy-forget-no'), callback_data: 'pv:forget:no' },
        ],
      ],
    },
  }),
)

priv.callbackQuery('pv:forget:no', async (ctx) => {
  await ctx.answerCallbackQuery()
  await ctx.editMessageText(ctx.t('privacy-forget-cancelled')).catch(() => {})
})

priv.callbackQuery('pv:forget:yes', async (ctx) => {
  const r = await forgetClient(ctx.deps, ctx.desk, { userId: ctx.from.id, updateId: ctx.update.update_id })
  if (r.status === 'busy') {
    await ctx.answerCallbackQuery({ text: ctx.t(`privacy-forget-busy-${r.reason}`), show_alert: true })
    return
  }
  await ctx.answerCallbackQuery()
  if (r.status === 'done') {
    ctx.log.info(
      { user_id: ctx.from.id, consultations: r.consultations, topics: r.topics },
      'client forgotten',
    )
    await ctx.editMessageText(ctx.t('privacy-forget-done')).catch(() => {})
  }
})
