import { GrammyError } from 'grammy'
import { clientZone } from '../clients/clients.service'
import type { Deps } from '../deps'
import { defineQueue } from '../jobs/queue'
import { notifyNow } from '../telegram/notify'
import { cut } from '../text'
import { formatDate } from '../time/format'

/**
 * A consultation's own topic in the client's private chat (issue 26), when the bot has topics in private chats
 * (Bot API 9.3+: getMe's has_topics_enabled, createForumTopic with the user's chat, message_thread_id on messages
 * there). Its messages to the client go into it and the client's messages written in it go to it
 * (src/telegram/client-threads.ts, desk_admit). Written by the activation, worked here; asked of getMe each time,
 * since the owner can switch topics on or off in @BotFather while the desk runs.
 *
 * Telegram has broken private-chat topics in rollouts (createForumTopic refused with BOT_FORUM_CREATE_FORBIDDEN, sends
 * with message_thread_id refused with "message thread not found"): a refused creation marks the topic broken and
 * the consultation lives in the plain chat, where replies and the choice of consultation route the messages.
 */
export const clientTopicQueue = defineQueue<{ consultationId: number }>('consultation.client-topic')

export async function handleClientTopic(deps: Deps, consultationId: number): Promise<void> {
  const c = await deps.db
    .selectFrom('consultation as c')
    .innerJoin('orders as o', 'o.id', 'c.order_id')
    .select(['c.id', 'c.bot_id', 'c.user_id', 'c.state', 'c.created_at', 'o.title', 'o.lang'])
    .where('c.id', '=', consultationId)
    .executeTakeFirst()
  if (c?.state !== 'active') return
  await deps.db
    .insertInto('client_topic')
    .values({ consultation_id: c.id, bot_id: c.bot_id, user_id: c.user_id })
    .onConflict((oc) => oc.doNothing())
    .execute()
  const row = await deps.db
    .selectFrom('client_topic')
    .select('state')
    .where('consultation_id', '=', c.id)
    .executeTakeFirstOrThrow()
  if (row.state !== 'wanted') return
  const api = deps.api(c.bot_id)
  const me = await api.getMe()
  const set = (state: 'open' | 'broken' | 'off', threadId: number | null = null) =>
    deps.db
      .updateTable('client_topic')
      .set({ state, thread_id: threadId, updated_at: new Date() })
      .where('consultation_id', '=', c.id)
      .where('state', '=', 'wanted')
      .execute()
  if (!me.has_topics_enabled) {
    await set('off')
    return
  }
  const desk = deps.desk(c.bot_id)
  const zone = await clientZone(deps.db, desk, c.user_id)
  // Topic names are 1-128 characters: the tariff's title and the day it was bought, as the client knows them.
  const name = cut(
    deps.i18n.t(c.lang, 'several-topic-name', {
      title: c.title,
      bought: formatDate(c.created_at, zone, c.lang),
    }),
    128,
  )
  let thread: number
  try {
    thread = (await api.createForumTopic(c.user_id, name)).message_thread_id
  } catch (err) {
    // A client who blocked the bot (403) or a refused topic (400): the plain chat it is, for this consultation.
    if (!(err instanceof GrammyError) || (err.error_code !== 400 && err.error_code !== 403)) throw err
    deps.log.warn(
      { consultation_id: c.id, err: err.description },
      'private-chat topic refused; plain chat used',
    )
    await set('broken')
    return
  }
  await set('open', thread)
  await notifyNow(deps, {
    botId: c.bot_id,
    chatId: c.user_id,
    lang: c.lang,
    key: 'several-topic-welcome',
    params: { title: c.title },
    consultationId: c.id,
    dedupeKey: `several:topic:${c.id}:welcome`,
  })
}
