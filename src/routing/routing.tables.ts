import type { Generated, JSONColumnType } from 'kysely'

export type RouteState = 'active' | 'replaced'
/** in: into the staff topic; out: to the client. */
export type Direction = 'in' | 'out'
/** copy: a person's message (copyMessage/copyMessages); text: bot-authored text; note: a locale key, rendered late. */
export type ItemKind = 'copy' | 'text' | 'note'
export type ItemState = 'pending' | 'sent' | 'failed' | 'blocked' | 'refused' | 'withheld'

/** What we keep of a message: its type and, for text and captions, the text with its entities. */
export interface StoredContent {
  text?: string
  entities?: unknown[]
  caption?: string
  caption_entities?: unknown[]
  /** note: the locale key and its parameters. */
  key?: string
  params?: Record<string, string | number>
  /** note: an inline keyboard sent with it. */
  markup?: unknown
}

export interface RoutingTables {
  /** The desk's side of a consultation (1:1): topic work, client blocked, lane leases. */
  desk_consultation: {
    consultation_id: number
    bot_id: number
    user_id: number
    topic_wanted: Generated<boolean>
    topics_created: Generated<number>
    card_dirty: Generated<boolean>
    title_dirty: Generated<boolean>
    /** A send to the client failed with 403; cleared when the client writes again. */
    client_blocked_at: Date | null
    /** A topic-lane job is queued and has not started draining (see src/consultations/sql/desk_admit.sql). */
    in_queued: Generated<boolean>
    in_lease: string | null
    in_lease_until: Date | null
    out_lease: string | null
    out_lease_until: Date | null
    created_at: Generated<Date>
  }
  /** A forum topic of a staff supergroup and the consultation it belongs to. */
  desk_route: {
    bot_id: number
    support_chat_id: number
    message_thread_id: number
    consultation_id: number
    user_id: number
    state: Generated<RouteState>
    topic_name: string
    card_message_id: number | null
    /** The card Telegram confirmed pinned; differs from card_message_id while the pin is owed. */
    card_pinned_message_id: number | null
    summary_pending: Generated<boolean>
    replaced_reason: string | null
    replaced_at: Date | null
    created_at: Generated<Date>
  }
  /**
   * The message map and the ordered delivery queue in one: a row per message that crosses between a client's chat
   * and a topic (source <-> mirror), plus refused client messages (state refused) and bot-authored items.
   */
  desk_message: {
    id: Generated<number>
    bot_id: number
    consultation_id: number | null
    direction: Direction
    kind: ItemKind
    chat_id: number | null
    message_id: number | null
    from_id: number | null
    media_group_id: string | null
    reply_to_message_id: number | null
    appeal_id: number | null
    content_type: string
    content: JSONColumnType<StoredContent | null, string | null, string | null>
    version: Generated<number>
    mirror_version: Generated<number>
    state: ItemState
    refusal: JSONColumnType<Record<string, unknown> | null, string | null, string | null>
    accepted_at: Date | null
    mirror_chat_id: number | null
    mirror_thread_id: number | null
    mirror_message_id: number | null
    reacted: Generated<boolean>
    attempts: Generated<number>
    error: string | null
    dedupe_key: string | null
    sent_at: Date | null
    created_at: Generated<Date>
  }
}
