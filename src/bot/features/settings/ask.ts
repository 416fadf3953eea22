import { type Conversation, createConversation } from '@grammyjs/conversations'
import { Composer, type Context, InlineKeyboard } from 'grammy'
import { type TariffConfig, tariffSchema } from '../../../config/schema'
import { type EditOutcome, editDesk } from '../../../settings/edit'
import { currentValue, editFor, fieldOf, parseAnswer, type Target } from '../../../settings/fields'
import { readDesk, SettingsInvalid } from '../../../settings/settings'
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
      ask: o.t(`st-ask-${fieldOf(target)}`, { current: now ?? '—' }),
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

type Step = 'code' | 'title' | 'priceStars' | 'windowHours' | 'appeals' | 'slaBusinessHours'
const STEPS: Step[] = ['code', 'title', 'priceStars', 'windowHours', 'appeals', 'slaBusinessHours']

function readStep(
  step: Step,
  text: string,
): { ok: true; value: string | number } | { ok: false; reason: string } {
  const s = text.trim()
  if (step === 'title')
    return s && [...s].length <= 100
      ? { ok: true, value: s }
      : { ok: false, reason: 'expected 1 to 100 characters' }
  let value: string | number = s
  if (step !== 'code') {
    const n = s.replace(',', '.')
    if (!/^\d+(\.\d+)?$/.test(n)) return { ok: false, reason: 'expected a number' }
    value = Number(n)
  }
  const r = (tariffSchema.shape[step] as { safeParse(v: unknown): any }).safeParse(value)
  return r.success ? { ok: true, value } : { ok: false, reason: r.error.issues[0]?.message ?? 'invalid' }
}

async function newTariff(conversation: Conv, ctx: Context, version: number): Promise<void> {
  const kb = new InlineKeyboard().text(await say(conversation, 'st-btn-cancel'), CANCEL)
  const got: Partial<Record<Step, string | number>> = {}
  for (const step of STEPS) {
    await ctx.reply(await say(conversation, `st-new-${step}`), { reply_markup: kb })
    for (;;) {
      const text = await answer(conversation)
      if (text === null) {
        await ctx.reply(await say(conversation, 'st-cancelled'))
        return
      }
      const r = await conversation.external(async (o: BotContext) => {
        const v = readStep(step, text)
        if (!v.ok) return { ok: false as const, text: refusalText(o, { field: step, reason: v.reason }) }
        if (step === 'code' && o.desk.tariffs.some((x) => x.code === v.value))
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
    const name = String(got.title)
    const titled = { [o.desk.defaultLanguage]: name, [o.lang]: name }
    const tariff: TariffConfig = tariffSchema.parse({
      code: got.code,
      title: titled,
      description: titled,
      priceStars: got.priceStars,
      windowHours: got.windowHours,
      appeals: got.appeals,
      slaBusinessHours: got.slaBusinessHours,
      startMode: data.slice('st:sm:'.length),
    })
    const out = await editDesk(o.deps.db, o.desk.botId, o.from!.id, version, (doc) => {
      if (doc.tariffs.some((x) => x.code === tariff.code))
        throw new SettingsInvalid([{ path: 'code', message: 'already used' }])
      doc.tariffs.push(tariff)
    })
    return outcomeText(o, out, { kind: 'tariff', code: tariff.code, field: 'priceStars' }, 'st-created')
  })
  await ctx.reply(text)
}

askFeature.use(createConversation(editField, { id: 'st-edit', maxMillisecondsToWait: WAIT_MS }))
askFeature.use(createConversation(newTariff, { id: 'st-new-tariff', maxMillisecondsToWait: WAIT_MS }))
