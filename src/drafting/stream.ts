import { InlineKeyboard } from 'grammy'
import type { Deps } from '../deps'
import { errorSummary } from '../jobs/jobs'
import { isBlocked } from '../telegram/api'
import { unlessBusy } from '../telegram/budget'
import { cut, MESSAGE_TEXT_MAX } from '../text'
import type { Draft } from './drafting.repository'
import { stopRequested, updateDraft } from './drafting.repository'

/**
 * A draft streamed while the model writes it (issue 25): into the requesting expert's private chat with the bot
 * (Bot API sendMessageDraft works in private chats only), while the topic keeps the draft's Send / Edit / Discard.
 *
 * No call here ever waits for the private chat's budget (`unlessBusy`): the job holds its worker for the provider
 * call, never for one chat's window.
 * - First a message with a Stop button goes into that private chat, if the chat has room now. A 403 (the expert
 *   never opened the chat, or blocked the bot) or no room: no stream, quietly; the draft still lands in the topic.
 * - During the stream an update goes only when the chat's budget has room right now and no earlier update is still
 *   on its way; otherwise it is skipped and a later one carries the text.
 * - The final text always goes: a streamed draft is a preview that disappears, so the settle's transaction writes
 *   the whole text (or the part written until a Stop) as a message to that chat through the outbox (run.ts), which
 *   waits for the chat's window as every notification does, without holding a worker. The Stop button then leaves
 *   the first message (best effort: a later press is told the draft is finished).
 * - Stop: the job polls the draft's stop flag (`stop_requested_at`, set by whichever process took the press) while
 *   the call runs and aborts it (watchStop; run.ts).
 */

/** How often the running job looks at the draft's stop flag. */
export const STOP_POLL_MS = 250
/** A skipped update is looked at again after this long (a timer; the stream never waits for it). */
const RETRY_MS = 400

export interface Streamer {
  /** The text so far (not awaited: skipped when the budget or an earlier update is in the way). */
  update(text: string): void
  /** After the settle: waits for an update on its way, then takes Stop off the first message. */
  finish(): Promise<void>
}

export async function startStream(deps: Deps, d: Draft): Promise<Streamer | null> {
  const desk = deps.desk(d.bot_id)
  const api = deps.api(d.bot_id)
  const chatId = d.requested_by
  const lane = `draft:${d.id}`
  const t = (key: string, p?: Record<string, string | number>) => deps.i18n.t(desk.defaultLanguage, key, p)
  const log = deps.log.child({ draft_id: d.id })
  let header: number
  try {
    const m = await unlessBusy(lane, () =>
      api.sendMessage(chatId, t('drafting-stream-header', { id: String(d.id) }), {
        reply_markup: new InlineKeyboard().text(t('drafting-btn-stop'), `dr:x:${d.id}`),
      }),
    )
    if (m === 'skipped') return null
    header = m.message_id
  } catch (err) {
    // A staff member who never opened a private chat with the bot (403): no stream.
    if (!isBlocked(err)) log.info({ err: errorSummary(err) }, 'draft: not streamed')
    return null
  }
  await updateDraft(deps.db, d.id, { stream_chat_id: chatId, stream_message_id: header })

  let live = true
  let inFlight: Promise<unknown> | null = null
  let shown = ''
  let latest = ''
  let retry: NodeJS.Timeout | null = null
  const failed = (err: unknown) => {
    if (isBlocked(err)) live = false
    else log.warn({ err: errorSummary(err) }, 'draft: stream update failed')
  }
  // The newest text, if the chat has room now and no update is on its way; else it is skipped, and looked at again
  // a moment later (a timer, not a wait: the stream goes on), so a model that pauses still shows its latest text.
  const push = () => {
    if (!live || inFlight || latest.trim() === '' || latest === shown) return
    const text = latest
    inFlight = unlessBusy(lane, () =>
      api.sendMessageDraft(chatId, d.id, cut(text, MESSAGE_TEXT_MAX, { ellipsis: '…' })),
    )
      .then((r) => {
        if (r !== 'skipped') shown = text
      }, failed)
      .finally(() => {
        inFlight = null
        if (live && latest !== shown && !retry)
          retry = setTimeout(() => {
            retry = null
            push()
          }, RETRY_MS)
      })
  }

  return {
    update(text) {
      latest = text
      push()
    },
    async finish() {
      live = false
      if (retry) clearTimeout(retry)
      await inFlight
      await unlessBusy(lane, () =>
        api.editMessageReplyMarkup(chatId, header, { reply_markup: { inline_keyboard: [] } }),
      ).catch(() => {})
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
