import { InlineKeyboard } from 'grammy'
import type { InlineKeyboardMarkup } from 'grammy/types'
import type { DeskRuntime } from '../config/load'
import type { Deps } from '../deps'

/**
 * The "Draft answer" button, put on each client message copied into the topic (and on "Try again"). Its request id
 * is derived from the message it is on and the expert who pressed it, so a double tap drafts once.
 */
export function draftButtonMarkup(
  deps: Pick<Deps, 'i18n'>,
  desk: Pick<DeskRuntime, 'defaultLanguage'>,
  consultationId: number,
): InlineKeyboardMarkup {
  return new InlineKeyboard().text(
    deps.i18n.t(desk.defaultLanguage, 'drafting-btn-draft'),
    `dr:new:${consultationId}`,
  )
}
