import type { MessageEntity } from 'grammy/types'
import type { DeskRuntime } from '../config/load'
import { clockNow } from '../db/clock'
import type { Db } from '../db/database'
import { businessMinutesLeft, formatDuration } from '../time/instants'
import { topicLink } from './alerts'
import { openQuestions } from './experts.repository'
import { staffNames } from './names'

/**
 * A staff member's queue (/mine in private, the dashboard's "Open now"): the open questions they must answer, by
 * due time. An expert's are those of the consultations they own now (src/experts: assigned, answered or not); an
 * admin's are all open questions of the desk. Business time left (or past due) is measured in the desk's schedule.
 */

export const QUEUE_LIMIT = 20

export interface QueueItem {
  appealId: number
  number: number
  consultationId: number
  title: string
  dueAt: Date
  /** Business minutes to the due time; 0 when past it. */
  minutesLeft: number
  /** Business minutes since the due time; 0 when not past it. */
  minutesOver: number
  overdue: boolean
  ownerId: number | null
  ownerName: string | null
  /** t.me link into the consultation's topic; null while it has none. */
  link: string | null
}

export interface Queue {
  items: QueueItem[]
  /** Open questions beyond the list. */
  more: number
}

/** The viewer's queue at `at` (default: the database's clock). */
export async function queueOf(
  db: Db,
  desk: DeskRuntime,
  viewer: { userId: number; admin: boolean },
  at?: Date,
  limit = QUEUE_LIMIT,
): Promise<Queue> {
  const now = at ?? (await clockNow(db))
  const rows = await openQuestions(db, desk.botId, { owner: viewer.admin ? undefined : viewer.userId, limit })
  const names = await staffNames(
    db,
    desk,
    rows.flatMap((r) => (r.ownerId === null ? [] : [r.ownerId])),
  )
  const items = rows.map((r) => ({
    appealId: r.appealId,
    number: r.number,
    consultationId: r.consultationId,
    title: r.title,
    dueAt: r.dueAt,
    minutesLeft: businessMinutesLeft(desk, now, r.dueAt),
    minutesOver: businessMinutesLeft(desk, r.dueAt, now),
    overdue: r.dueAt.getTime() <= now.getTime(),
    ownerId: r.ownerId,
    ownerName: r.ownerId === null ? null : (names.get(r.ownerId) ?? `id ${r.ownerId}`),
    link: r.chatId !== null && r.threadId !== null ? topicLink(r.chatId, r.threadId) : null,
  }))
  return { items, more: Math.max(0, (rows[0]?.total ?? 0) - rows.length) }
}

type T = (key: string, p?: Record<string, string | number>) => string

/**
 * The queue as a private message: a line per question, its "consultation #N, question #M" a text_link into the
 * topic (entities, so a title needs no escaping; offsets in UTF-16 code units, as JavaScript strings count).
 */
export function renderQueue(
  t: T,
  lang: string,
  q: Queue,
  admin: boolean,
): { text: string; entities: MessageEntity[] } {
  const count = q.items.length + q.more
  if (count === 0) return { text: t(admin ? 'mine-empty-admin' : 'mine-empty'), entities: [] }
  let text = t(admin ? 'mine-title-admin' : 'mine-title', { count })
  const entities: MessageEntity[] = []
  for (const i of q.items) {
    text += '\n• '
    const label = t('mine-question', { consultation: String(i.consultationId), number: i.number })
    if (i.link) entities.push({ type: 'text_link', offset: text.length, length: label.length, url: i.link })
    text += label
    const when = i.overdue
      ? t('mine-overdue', { over: formatDuration(i.minutesOver, lang) })
      : t('mine-left', { left: formatDuration(i.minutesLeft, lang) })
    text += ` ${t('mine-line', { title: i.title, when })}`
    if (admin) text += ` ${t('mine-owner', { name: i.ownerName ?? t('mine-owner-none') })}`
  }
  if (q.more > 0) text += `\n${t('mine-more', { count: q.more })}`
  return { text, entities }
}
