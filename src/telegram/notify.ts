import type { InlineKeyboardMarkup, MessageEntity } from 'grammy/types'
import { markBlocked } from '../clients/clients.repository'
import type { Deps } from '../deps'
import type { Outbox } from '../jobs/jobs'
import { defineQueue, jobId } from '../jobs/queue'
import { metrics } from '../metrics'
import { isBlocked } from './api'
import { recordConsultationMessage, sendForConsultation } from './client-threads'
import { recordSent, sentBefore } from './outbound'

/**
 * A notification to a user or a topic, rendered when it is sent (so it uses the i18n files of the running version)
 * from a message key and parameters fixed when the state change committed.
 */
export interface Notification {
  botId: number
  chatId: number
  threadId?: number
  lang: string
  key: string
  params?: Record<string, string | number>
  /**
   * Parameters that hold a date (formatInstant's text) -> its instant in Unix seconds: the text is sent with a
   * `date_time` entity over it, so Telegram shows the instant in the reader's own zone and format, and the text is
   * what clients without date entities read.
   */
  dates?: Record<string, number>
  /** Extra lines rendered after the main text, each a key with parameters. */
  more?: { key: string; params?: Record<string, string | number> }[]
  replyMarkup?: InlineKeyboardMarkup
  /**
   * Buttons whose labels are message keys, rendered with the text when it is sent (for a caller that has no
   * translator at hand, e.g. inside the refund's transaction); rows added after replyMarkup's.
   */
  buttons?: { key: string; params?: Record<string, string | number>; data: string }[][]
  /** Idempotency key: one message per key, however often the job runs. */
  dedupeKey: string
  /** 'payment': a payment or activation confirmation, sent by a queue of its own (notifyPaymentQueue). */
  lane?: 'payment'
  /**
   * A message to a client sent for one consultation (its receipt, its activation, and every notice about it: closes
   * soon, closed, answer delayed, top-ups, a plan's renewals, start reminders): handleNotify sends it into the
   * consultation's topic in the client's chat when there is one (the plain chat when Telegram refuses the topic) and
   * records it as the consultation's, so a reply to it goes to that consultation (client-threads.ts). A client
   * notice about one consultation names it here; the sending and recording are handleNotify's alone.
   */
  consultationId?: number
}

/**
 * Two queues because the limits differ: a private chat takes about a message a second, while the staff group takes
 * 20 a minute for all its topics together. Workers waiting in the throttler for the group's budget must never hold
 * up a client's confirmation, so group sends have their own queue and workers.
 */
export const notifyQueue = defineQueue<Notification>('tg.notify', {}, 2)
export const notifyGroupQueue = defineQueue<Notification>('tg.notify.group', { expireInSeconds: 600 }, 1)
/**
 * A client's payment and activation confirmations ("✅ Your consultation … is active", top-ups, plans): their own
 * queue and workers, so they never queue behind notifications anyone else can cause (a stranger's refusals, other
 * clients' receipts). No job of any queue waits in its worker for one chat's window (BudgetWait, src/workers.ts).
 */
export const notifyPaymentQueue = defineQueue<Notification>('tg.notify.payment', {}, 2)

/**
 * Enqueue in the caller's transaction. One message per dedupe key: the job's id is made from the key, so a second
 * notification under a key whose job is still kept (a retried job, a state change replayed) is not written at all,
 * and two workers never send one key side by side; the handler also skips a key already sent (outbound_message),
 * for one written again after pg-boss archived the first. A notice to the staff group of a desk that has none yet
 * (`chatId` undefined: being set up) is dropped: nobody to tell.
 */
export function notify(outbox: Outbox, n: Omit<Notification, 'chatId'> & { chatId: number | undefined }) {
  if (n.chatId === undefined) return Promise.resolve(null)
  const queue = n.chatId < 0 ? notifyGroupQueue : n.lane === 'payment' ? notifyPaymentQueue : notifyQueue
  return outbox.send(queue, { ...n, chatId: n.chatId }, { id: jobId(`${queue.name}:${n.dedupeKey}`) })
}

/** A notification on its own (a reply with nothing else to commit): the outbox in a transaction of its own. */
export function notifyNow(deps: Pick<Deps, 'db' | 'jobs'>, n: Parameters<typeof notify>[1]) {
  return deps.jobs.transaction(deps.db, (_trx, outbox) => notify(outbox, n))
}

export function renderNotification(deps: Deps, n: Notification): string {
  const parts = [deps.i18n.t(n.lang, n.key, n.params)]
  for (const m of n.more ?? []) parts.push(deps.i18n.t(n.lang, m.key, m.params))
  return parts.join('\n\n')
}

/** replyMarkup with the `buttons` rows rendered in the notification's language (undefined when there are none). */
export function renderKeyboard(deps: Deps, n: Notification): InlineKeyboardMarkup | undefined {
  if (!n.buttons?.length) return n.replyMarkup
  return {
    inline_keyboard: [
      ...(n.replyMarkup?.inline_keyboard ?? []),
      ...n.buttons.map((row) =>
        row.map((b) => ({ text: deps.i18n.t(n.lang, b.key, b.params), callback_data: b.data })),
      ),
    ],
  }
}

/** The `date_time` entities of a rendered notification (offsets in UTF-16 code units, as JS strings count). */
export function dateEntities(text: string, n: Pick<Notification, 'params' | 'dates'>): MessageEntity[] {
  const out: MessageEntity[] = []
  for (const [name, unix] of Object.entries(n.dates ?? {})) {
    const shown = n.params?.[name]
    const offset = typeof shown === 'string' && shown ? text.indexOf(shown) : -1
    if (offset < 0) continue
    out.push({
      type: 'date_time',
      offset,
      length: String(shown).length,
      unix_time: unix,
      date_time_format: 'Dt',
    })
  }
  return out.sort((a, b) => a.offset - b.offset)
}

export async function handleNotify(deps: Deps, n: Notification): Promise<void> {
  if (await sentBefore(deps.db, n.dedupeKey)) return
  const replyMarkup = renderKeyboard(deps, n)
  let messageId: number | null = null
  let outcome = 'sent'
  try {
    const text = renderNotification(deps, n)
    const entities = dateEntities(text, n)
    const send = (thread: number | undefined) =>
      deps.api(n.botId).sendMessage(n.chatId, text, {
        ...(entities.length ? { entities } : {}),
        ...(thread ? { message_thread_id: thread } : {}),
        ...(replyMarkup ? { reply_markup: replyMarkup } : {}),
        link_preview_options: { is_disabled: true },
      })
    const forClient = n.consultationId !== undefined && n.chatId > 0
    const m = forClient ? await sendForConsultation(deps.db, n.consultationId!, send) : await send(n.threadId)
    messageId = m.message_id
    if (forClient)
      await recordConsultationMessage(deps.db, {
        botId: n.botId,
        chatId: n.chatId,
        messageId,
        consultationId: n.consultationId!,
      })
  } catch (err) {
    // A client who blocked the bot: record it once and stop; retrying would loop forever.
    if (!isBlocked(err) || n.chatId < 0) {
      metrics.notifications.inc({ result: 'failed' })
      throw err
    }
    outcome = 'blocked'
    await markBlocked(deps.db, n.botId, n.chatId)
  }
  await recordSent(deps.db, { key: n.dedupeKey, botId: n.botId, chatId: n.chatId, messageId, outcome })
  metrics.notifications.inc({ result: outcome })
}
