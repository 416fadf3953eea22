import { commands } from '@grammyjs/commands'
import { conversations } from '@grammyjs/conversations'
import { Bot, type BotConfig, type Composer, type WebhookReplyEnvelope } from 'grammy'
import type { Update, UserFromGetMe } from 'grammy/types'
import type { DeskRuntime } from '../config/load'
import { deskLanguage } from '../config/rules.schema'
import type { Deps } from '../deps'
import { installTransformers } from '../telegram/api'
import type { BotContext } from './context'
import { conversationStorage } from './conversation-storage'
import { adminPaymentsFeature } from './features/admin-payments'
import { adminToolsFeature } from './features/admin-tools'
import { changeStartFeature } from './features/change-start'
import { dashboardFeature } from './features/dashboard'
import { deskFeature } from './features/desk'
import { draftingFeature } from './features/drafting'
import { expertsFeature } from './features/experts'
import { fallbackFeature } from './features/fallback'
import { mineFeature } from './features/mine'
import { answerPreCheckout, paymentsFeature, preCheckoutAnswer } from './features/payments'
import { paysupportFeature } from './features/paysupport'
import { privacyFeature } from './features/privacy'
import { ratingFeature } from './features/rating'
import { reportFeature } from './features/report'
import { settingsFeature } from './features/settings'
import { setupFeature } from './features/setup'
import { severalFeature } from './features/several'
import { staffFeature } from './features/staff'
import { startFeature } from './features/start'
import { statusFeature } from './features/status'
import { subscriptionsFeature } from './features/subscriptions'
import { tariffsFeature } from './features/tariffs'
import { termsFeature } from './features/terms'
import { topUpFeature } from './features/topup'
import { transcriptFeature } from './features/transcript'
import { waitlistFeature } from './features/waitlist'

/**
 * Every update type the bot handles. Passed explicitly to getUpdates and setWebhook: Telegram remembers the last
 * list, and an old one without pre_checkout_query would silently stop payments. my_chat_member: the bot added to a
 * group, its rights changed there, or removed (src/setup: binding staff groups); chat_member (other people's
 * changes) is not needed.
 */
export const ALLOWED_UPDATES = [
  'message',
  'edited_message',
  'callback_query',
  'pre_checkout_query',
  'my_chat_member',
] as const

/** Features in the order they see updates. Later features add their Composer here. */
function features(): Composer<BotContext>[] {
  return [
    paymentsFeature,
    // Before /start, /tariffs and the buy buttons: owner and invite links, and the gate of a desk not open yet.
    setupFeature,
    paysupportFeature,
    settingsFeature,
    ratingFeature,
    topUpFeature,
    changeStartFeature,
    waitlistFeature,
    startFeature,
    tariffsFeature,
    statusFeature,
    severalFeature,
    transcriptFeature,
    subscriptionsFeature,
    termsFeature,
    privacyFeature,
    adminPaymentsFeature,
    draftingFeature,
    reportFeature,
    dashboardFeature,
    mineFeature,
    expertsFeature,
    staffFeature,
    // After the staff feature (a consultation topic's own /ban), before the desk (a command nobody took).
    adminToolsFeature,
    deskFeature,
    // Last: answers what nobody took (a callback whose data matches nothing).
    fallbackFeature,
  ]
}

/**
 * grammY's Bot, with one shortcut: a pre_checkout_query that arrives on a webhook is answered in the webhook
 * response (Telegram executes a method call found there) straight from the update - no Api, context or middleware
 * is built for it, and no request to Telegram is made. Every other update, and a pre-checkout without a webhook
 * response to use (polling), takes the middleware.
 */
class DeskBot extends Bot<BotContext> {
  constructor(
    token: string,
    config: BotConfig<BotContext>,
    private readonly deps: Deps,
    private readonly desk: DeskRuntime,
  ) {
    super(token, config)
  }

  override async handleUpdate(update: Update, envelope?: WebhookReplyEnvelope): Promise<void> {
    const q = update.pre_checkout_query
    if (!q || !envelope?.send) return super.handleUpdate(update, envelope)
    const { deps, desk } = this
    const a = await preCheckoutAnswer(deps, desk, q, () =>
      deps.log.child({ desk: desk.slug, update_id: update.update_id }),
    )
    await envelope.send(
      JSON.stringify({ method: 'answerPreCheckoutQuery', pre_checkout_query_id: q.id, ...a }),
    )
  }
}

export function createBot(deps: Deps, desk: DeskRuntime, botInfo?: UserFromGetMe): Bot<BotContext> {
  const bot = new DeskBot(
    desk.token,
    { client: { apiRoot: deps.config.secrets.telegramApiRoot }, ...(botInfo ? { botInfo } : {}) },
    deps,
    desk,
  )
  installTransformers(bot.api, deps.budget, desk.botId)

  bot.use(async (ctx, next) => {
    ctx.deps = deps
    ctx.desk = desk
    ctx.log = deps.log.child({ desk: desk.slug, update_id: ctx.update.update_id })
    ctx.lang = deskLanguage(desk, ctx.from?.language_code)
    // A pre-checkout query needs nothing below (i18n negotiation, conversation storage) and must be answered
    // within 10 s: it is answered here. It never goes through the inbox (src/intake/README.md).
    if (ctx.update.pre_checkout_query) return answerPreCheckout(ctx)
    await next()
  })
  // No per-chat queue and no bot.catch here: updates come from the inbox (src/intake), which hands them over one
  // chat at a time, in order, across processes, and decides on failures (retry later, or park and tell the user).
  bot.use(deps.i18n.middleware())
  // ctx.getNearestCommand for the answer to an unknown command (src/bot/commands.ts).
  bot.use(commands())
  bot.use(conversations({ storage: conversationStorage(deps.db, desk.botId) }))
  for (const f of features()) bot.use(f)
  return bot
}
