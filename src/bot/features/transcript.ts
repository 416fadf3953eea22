import { Composer } from 'grammy'
import { pick } from '../../config/load'
import { requestTranscript, type TranscriptRequest } from '../../lifecycle/transcript'
import type { BotContext } from '../context'

/**
 * The transcript of a finished consultation, for the client: the button on the "consultation ended" message and in
 * /status (tr:get:<consultation id>), or /transcript for the latest one. The file is built and sent by a job.
 */
export const transcriptFeature = new Composer<BotContext>()
const priv = transcriptFeature.chatType('private')

function answerKey(r: TranscriptRequest): string | undefined {
  switch (r.status) {
    case 'not-in-plan':
      return 'transcript-not-in-plan'
    case 'queued':
      return 'transcript-queued'
    case 'none':
      return 'transcript-none'
    case 'not-closed':
      return 'transcript-not-closed'
    default:
      return undefined // a redelivered update: answered the first time
  }
}

/** The plan's title for a refusal by plan. */
function answerParams(ctx: BotContext, r: TranscriptRequest): Record<string, string> {
  return r.status === 'not-in-plan' ? { plan: pick(r.plan.title, ctx.lang, ctx.desk.defaultLanguage) } : {}
}

priv.command('transcript', async (ctx) => {
  const r = await requestTranscript(ctx.deps, ctx.desk, {
    userId: ctx.from.id,
    lang: ctx.lang,
    updateId: ctx.update.update_id,
  })
  const key = answerKey(r)
  if (key) await ctx.reply(ctx.t(key, answerParams(ctx, r)))
})

priv.callbackQuery(/^tr:get:(\d{1,15})$/, async (ctx) => {
  const r = await requestTranscript(ctx.deps, ctx.desk, {
    userId: ctx.from.id,
    consultationId: Number(ctx.match[1]),
    lang: ctx.lang,
    updateId: ctx.update.update_id,
  })
  const key = answerKey(r)
  await ctx.answerCallbackQuery(
    key ? { text: ctx.t(key, answerParams(ctx, r)), show_alert: r.status === 'not-in-plan' } : {},
  )
})
