import type { CommandsFlavor } from '@grammyjs/commands'
import type { ConversationFlavor } from '@grammyjs/conversations'
import type { I18nFlavor } from '@grammyjs/i18n'
import type { Context } from 'grammy'
import type { DeskRuntime } from '../config/load'
import type { Language } from '../config/schema'
import type { Deps } from '../deps'
import type { Logger } from '../log'

interface AppFlavor {
  deps: Deps
  desk: DeskRuntime
  /** Child logger carrying the update id and desk. */
  log: Logger
  /** The language we answer this user in: their Telegram language if we speak it, else the desk default. */
  lang: Language
}

/** The one Context type of the bot: grammY's plus plugin flavours plus our dependencies. */
export type BotContext = ConversationFlavor<Context & I18nFlavor & AppFlavor & CommandsFlavor>
