import { InlineKeyboard } from 'grammy'
import type { Deps } from '../deps'
import { errorSummary } from '../jobs/jobs'
import { isBlocked } from '../telegram/api'
import { unlessBusy, withSendContext } from '../telegram/budget'
import { cut, MESSAGE_TEXT_MAX } from '../text'
import type { Draft } from './drafting.repository'
import { stopRequested, updateDraft } from './drafting.repository'

/**
 * A draft streamed while the model writes it (issue 25): into the requesting expert's private chat with the bot
 * (Bot API sendMessageDraft works in private chats only), while the topic keeps the draft's Send / Edit / Discard.
 *
 * - First a message with a Stop button goes into that private chat (it may wait up to one private-chat window, before
 *   the provider is called). A 403 (the expert never opened the chat, or blocked the bot) or no room: no stream, quietly;
 *   the draft still lands in the topic.
 * - During the stream an update goes only when the chat's budget has room right now (`unlessBusy`: never a wait
 *   inside the stream) and no earlier update is still on its way; otherwise it is skipped, the next one carries the
 *   text. The final text always goes (after the stream, waiting for its turn), and the Stop message is edited into the
 *   final text, which keeps it in the chat (a streamed draft alone is a preview that disappears).
 * - Stop: the job polls the draft's stop flag (`stop_requested_at`, set by whichever process took the press) while
 *   the call runs and aborts it; see run.ts.
 */

/** How often the running job looks at the draft's stop flag. */
export const STOP_POLL_MS = 250

export interface Streamer {
  /** The text so far (not awaited: skipped when the budget or an earlier update is in the way). */
  update(text: string): void
  /** The final text (the whole draft, or the part written until a Stop), then the Stop message edited into it. */
  finish(final: { text: string; note: string }): Promise<void>
}

export async function startStream(deps: Deps, d: Draft): Promise<Streamer | null> {
  const desk = deps.desk(d.bot_id)
  const api = deps.api(d.bot_id)
  const chatId = d.requested_by
  const lane = `draft:${d.id}`
  const t = (key: string, p?: Record<string, string | number>) => deps.i18n.t(desk.defaultLanguage, key, p)
  const log = deps.log.child({ draft_id: d.id })
  const scale = Math.min(1, deps.config.telegramLimits.windowScale)
  const chatWindow = deps.config.telegramLimits.chat.seconds * scale
  let header: number
  try {
    const m = await withSendContext({ lane, priority: 2, maxWaitSeconds: chatWindow }, () =>
      api.sendMessage(chatId, t('drafting-stream-header', { id: String(d.id) }), {
        reply_markup: new InlineKeyboard().text(t('drafting-btn-stop'), `dr:x:${d.id}`),
      }),
    )
    header = m.message_id
  } catch (err) {
    // A staff member who never opened a private chat with the bot (403), or no room now: no stream.
    if (!isBlocked(err)) log.info({ err: errorSummary(err) }, 'draft: not streamed')
    return null
  }
  await updateDraft(deps.db, d.id, { stream_chat_id: chatId, stream_message_id: header })

  let live = true
  let inFlight: Promise<unknown> | null = null
  let shown = ''
  const draftText = (text: string) => cut(text, MESSAGE_TEXT_MAX, { ellipsis: '…' })
  const send = (text: string) => api.sendMessageDraft(chatId, d.id, draftText(text))
  const failed = (err: unknown) => {
    if (isBlocked(err)) live = false
    else log.warn({ err: errorSummary(err) }, 'draft: stream update failed')
  }

  return {
    update(text) {
      if (!live || inFlight || text.trim() === '' || text === shown) return
      inFlight = unlessBusy(lane, () => send(text))
        .then((r) => {
          if (r !== 'skipped') shown = text
        }, failed)
        .finally(() => {
          inFlight = null
        })
    },
    async finish(final) {
      await inFlight
      if (!live) return
      const text = final.text.trim()
      try {
        await withSendContext({ lane, priority: 2 }, async () => {
          if (text && text !== shown) await send(text)
          await api.editMessageText(chatId, header, draftText(`${final.note}\n\n${text}`.trim()), {
            reply_markup: { inline_keyboard: [] },
          })
        })
      } catch (err) {
        failed(err)
      }
    },
  }
}

/**
 * Calls `onStop` once the draft's Stop is pressed (in any process: the flag is in its row), polling every
 * STOP_POLL_MS; returns the function that ends the polling.
 */
export function watchStop(deps: Deps, draftId: number, onStop: () => void): () => void {
  let busy = false
  let done = false
  const timer = setInterval(() => {
    if (busy || done) return
    busy = true
    stopRequested(deps.db, draftId)
      .then((stopped) => {
        if (stopped && !done) {
          done = true
          onStop()
        }
      })
      .catch(() => {})
      .finally(() => {
        busy = false
      })
  }, STOP_POLL_MS)
  return () => {
    done = true
    clearInterval(timer)
  }
}
