import { type Bot, webhookCallback } from 'grammy'
import type { Update } from 'grammy/types'
import type { BotContext } from '../bot/context'
import type { RouteHandler } from '../server/http'

/**
 * The webhook endpoint of one desk: grammY's webhookCallback (secret token check, body parsing, timeout) over a
 * bot that stores instead of handling. The 200 goes out only after the update is committed in the inbox; a failure
 * or a store slower than the timeout answers 500, and Telegram delivers the update again (a duplicate is a no-op
 * in the inbox). A pre-checkout query is not stored: it is answered at once, in the webhook response.
 */
export function webhookHandler(
  bot: Bot<BotContext>,
  store: (update: Update) => Promise<void>,
  secretToken: string,
): RouteHandler {
  const storing = {
    isRunning: () => false,
    init: () => bot.init(),
    async handleUpdate(update: Update, envelope?: Parameters<Bot<BotContext>['handleUpdate']>[1]) {
      if (update.pre_checkout_query) return bot.handleUpdate(update, envelope)
      await store(update)
    },
  }
  // webhookCallback uses only these members of a Bot (and replaces `start`, which polling would need).
  return webhookCallback(storing as unknown as Bot<BotContext>, 'http', { secretToken, onTimeout: 'throw' })
}
