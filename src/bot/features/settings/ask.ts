import { type Conversation, createConversation } from '@grammyjs/conversations'
import { Composer, type Context, InlineKeyboard } from 'grammy'
import { addPlan, addTariff, PLAN_STEPS, readStep, type Step, TARIFF_STEPS } from '../../../settings/create'
import { type EditOutcome, editDesk } from '../../../settings/edit'
import { currentValue, editFor, fieldOf, parseAnswer, type Target } from '../../../settings/fields'
import { readDesk } from '../../../settings/settings'
import type { BotContext } from '../../context'
import { outcomeText, refusalText } from './say'

/**
 * The typed steps of /settings (@grammyjs/conversations, state in PostgreSQL through the bot's conversation storage,
 * every read and write inside conversation.external): one field (`st-edit`) and a new tariff step by step
 * (`st-new-tariff`). A refused answer names the field and asks again; Cancel (or /cancel) ends with nothing changed;
 * another command or a settings button goes on to its own handler.
 */
export const askFeature = new Composer<BotContext>()
type Conv = Conversation<BotContext, Context>

const WAIT_MS = 30 * 60_000
const CANCEL = 'st:cancel'

/** The next answer: its text, or null when the editor cancelled. */
async function answer(conversation: Conv): Promise<string | null> {
  const c = await conversation.waitUntil(
    (u) => u.message?.text !== undefined || u.callbackQuery?.data === CANCEL,
    {
      maxMilliseconds: WAIT_MS,
      next: true,
    },
  )
  if (c.callbackQuery) {
    await c.answerCallbackQuery()
    return null
  }
  const text = c.message!.text!
  if (/^\/cancel(@\w+)?$/.test(text.trim())) return null
  // Another command: the editor moved on; it goes to its own handler.
  if (text.startsWith('/')) await conversation.halt({ next: true })
  return text
}

const say = (conversation: Conv, key: string, params?: Record<string, string | number>) =>
  conversation.external((o: BotContext) => o.t(key, params))

async function editField(conversation: Conv, ctx: Context, target: Target, version: number): Promise<void> {
  const intro = await conversation.external(async (o: BotContext) => {
    const s = await readDesk(o.deps.db, o.desk.botId)
    const now = s && currentValue(target, s.doc, o.lang)
    return {
      ask: o.t(
        target.kind === 'plan' && target.field === 'refundPolicy'
          ? 'st-ask-planRefundPolicy'
          : `st-ask-${fieldOf(target)}`,
        { current: now ?? '—' },
      ),
      cancel: o.t('st-btn-cancel'),
      cancelled: o.t('st-cancelled'),
    }
  })
  const kb = new InlineKeyboard().text(intro.cancel, CANCEL)
  await ctx.reply(intro.ask, { reply_markup: kb })
  for (;;) {
    const text = await answer(conversation)
    if (text === null) {
      await ctx.reply(intro.cancelled)
      return
    }
    const r = await conversation.external(async (o: BotContext) => {
      const parsed = parseAnswer(target, text)
      if (!parsed.ok) return { retry: true, text: refusalText(o, parsed) }
      const out: EditOutcome = await editDesk(
        o.deps.db,
        o.desk.botId,
        o.from!.id,
        version,
        editFor(target, parsed, o.lang),
      )
      return { retry: out.status === 'invalid', text: outcomeText(o, out, target) }
    })
    await ctx.reply(r.text, r.retry ? { reply_markup: kb } : {})
    if (!r.retry) return
  }
}

/** Asks each step in turn (a refused answer names its field and asks again); undefined when cancelled. */
async function askSteps(
  conversation: Conv,
  ctx: Context,
  kind: 'tariff' | 'plan',
): Promise<Partial<Record<Step, string | number>> | undefined> {
  const kb = new InlineKeyboard().text(await say(conversation, 'st-btn-cancel'), CANCEL)
  const got: Partial<Record<Step, string | number>> = {}
  for (const step of kind === 'tariff' ? TARIFF_STEPS : PLAN_STEPS) {
    await ctx.reply(await say(conversation, kind === 'tariff' ? `st-new-${step}` : `st-newplan-${step}`), {
      reply_markup: kb,
    })
    for (;;) {
      const text = await answer(conversation)
      if (text === null) {
        await ctx.reply(await say(conversation, 'st-cancelled'))
        return undefined
      }
      const r = await conversation.external(async (o: BotContext) => {
        const v = readStep(kind, step, text)
        if (!v.ok) return { ok: false as const, text: refusalText(o, { field: step, reason: v.reason }) }
        const taken = kind === 'tariff' ? o.desk.tariffs : o.desk.plans
        if (step === 'code' && taken.some((x) => x.code === v.value))
          return { ok: false as const, text: refusalText(o, { field: 'code', reason: 'already used' }) }
        return { ok: true as const, value: v.value }
      })
      if (r.ok) {
        got[step] = r.value
        break
      }
      await ctx.reply(r.text, { reply_markup: kb })
    }
  }
  return got
}

async function newTariff(conversation: Conv, ctx: Context, version: number): Promise<void> {
  const got = await askSteps(conversation, ctx, 'tariff')
  if (!got) return
  const modes = new InlineKeyboard()
    .text(await say(conversation, 'st-mode-immediate'), 'st:sm:immediate')
    .text(await say(conversation, 'st-mode-on_request'), 'st:sm:on_request')
    .row()
    .text(await say(conversation, 'st-btn-cancel'), CANCEL)
  await ctx.reply(await say(conversation, 'st-new-startMode'), { reply_markup: modes })
  const m = await conversation.waitUntil(
    (u) => /^st:(sm:(immediate|on_request)|cancel)$/.test(u.callbackQuery?.data ?? ''),
    {
      maxMilliseconds: WAIT_MS,
      next: true,
    },
  )
  await m.answerCallbackQuery()
  const data = m.callbackQuery!.data!
  if (data === CANCEL) {
    await ctx.reply(await say(conversation, 'st-cancelled'))
    return
  }
  const text = await conversation.external(async (o: BotContext) => {
    const mode = data.slice('st:sm:'.length) as 'immediate' | 'on_request'
    const out = await editDesk(o.deps.db, o.desk.botId, o.from!.id, version, addTariff(got, mode, o.lang))
    return outcomeText(o, out, { kind: 'tariff', code: String(got.code), field: 'priceStars' }, 'st-created')
  })
  await ctx.reply(text)
}

/** A new plan step by step: code, title, price per 30 days, questions per period, answer time (src/settings/create.ts). */
async function newPlan(conversation: Conv, ctx: Context, version: number): Promise<void> {
  const got = await askSteps(conversation, ctx, 'plan')
  if (!got) return
  const text = await conversation.external(async (o: BotContext) => {
    const out = await editDesk(o.deps.db, o.desk.botId, o.from!.id, version, addPlan(got, o.lang, version))
    return outcomeText(
      o,
      out,
      { kind: 'plan', code: String(got.code), field: 'priceStars' },
      'st-plan-created',
    )
  })
  await ctx.reply(text)
}

askFeature.use(createConversation(editField, { id: 'st-edit', maxMillisecondsToWait: WAIT_MS }))
askFeature.use(createConversation(newTariff, { id: 'st-new-tariff', maxMillisecondsToWait: WAIT_MS }))
askFeature.use(createConversation(newPlan, { id: 'st-new-plan', maxMillisecondsToWait: WAIT_MS }))
