import type { Message } from 'grammy/types'
import { cut } from '../text'
import type { StoredContent } from './routing.tables'

/**
 * What kind of message this is, for the copyable kinds (copyMessage handles every one of them), or undefined for a
 * service message or anything copyMessage refuses (invoices, payments, paid media, giveaways...). Order matters:
 * an animation also carries `document`, a venue also carries `location`.
 */
const COPYABLE = [
  'text',
  'animation',
  'photo',
  'video',
  'video_note',
  'voice',
  'audio',
  'document',
  'sticker',
  'venue',
  'location',
  'contact',
  'poll',
  'dice',
  'story',
] as const
export type ContentType = (typeof COPYABLE)[number]

const UNCOPYABLE = [
  'paid_media',
  'invoice',
  'successful_payment',
  'refunded_payment',
  'giveaway',
  'giveaway_winners',
]

export function contentTypeOf(m: Message): ContentType | undefined {
  const r = m as unknown as Record<string, unknown>
  if (UNCOPYABLE.some((k) => r[k] !== undefined)) return undefined
  return COPYABLE.find((k) => r[k] !== undefined)
}

/** Text with entities, or caption with caption entities: what an edit can change and what summaries quote. */
export function storedContent(m: Message): StoredContent {
  if (m.text !== undefined) return { text: m.text, ...(m.entities?.length ? { entities: m.entities } : {}) }
  if (m.caption !== undefined)
    return {
      caption: m.caption,
      ...(m.caption_entities?.length ? { caption_entities: m.caption_entities } : {}),
    }
  return {}
}

/** Whether an edit really changed what the mirror shows (edited_message also fires for other field changes). */
export function sameContent(a: StoredContent | null, b: StoredContent): boolean {
  const x = a ?? {}
  return (
    (x.text ?? null) === (b.text ?? null) &&
    (x.caption ?? null) === (b.caption ?? null) &&
    JSON.stringify(x.entities ?? []) === JSON.stringify(b.entities ?? []) &&
    JSON.stringify(x.caption_entities ?? []) === JSON.stringify(b.caption_entities ?? [])
  )
}

/**
 * A one-line preview for summaries: the text or caption, shortened, after the kind of message in words ("[фото]
 * caption"; `kindName` reads the locale files' media-kind, in the reader's language).
 */
export function preview(
  type: string,
  c: StoredContent | null,
  kindName: (kind: string) => string,
  max = 80,
): string {
  const t = (c?.text ?? c?.caption ?? '').replace(/\s+/g, ' ').trim()
  if (!t) return `[${kindName(type)}]`
  const short = cut(t, max, { ellipsis: '…' })
  return type === 'text' ? short : `[${kindName(type)}] ${short}`
}

/** preview's `kindName` for a language: the locale files' media-kind. */
export function mediaKind(
  i18n: { t(lang: string, key: string, p?: Record<string, string>): string },
  lang: string,
): (kind: string) => string {
  return (kind) => i18n.t(lang, 'media-kind', { kind })
}

/**
 * The message a topic message really replies to. Every message in a forum topic carries reply_to_message = the
 * topic's creation message unless it is an explicit reply, so that one is not a reply.
 */
export function explicitReplyId(m: Message): number | undefined {
  const r = m.reply_to_message
  if (!r) return undefined
  if (r.forum_topic_created || (m.message_thread_id !== undefined && r.message_id === m.message_thread_id))
    return undefined
  return r.message_id
}
