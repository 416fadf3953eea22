// One file on purpose, far over the house's ~400 lines: the stand-in is one fake server whose every method reads and
// writes the same state (chats, message ids, topics, payments, update queues, webhooks, recorded calls), as Telegram
// does; its helpers (parse_mode parsers, multipart, media builders) serve only it. Tests import it as one module.

/**
 * A fake Telegram Bot API server for end-to-end tests and benchmarks.
 *
 * A real HTTP server on 127.0.0.1 (random port) that a grammY bot reaches through `client.apiRoot`
 * (`${root}/bot${token}/${method}`, JSON or multipart/form-data). It keeps enough state to answer like Telegram:
 * message ids per chat, forum topics (closed / deleted), blocked users, update queues with long polling, webhooks,
 * Stars transactions and refunds, parse_mode errors. Every call is recorded and can be awaited without sleeping.
 *
 * ```ts
 * const tg = await startBotApi()
 * const bot = new Bot(TOKEN, { client: { apiRoot: tg.root } })
 * const alice = tg.user({ language_code: 'ru' })
 * await tg.push(TOKEN, tg.command(alice, '/start'))
 * const reply = await tg.waitFor('sendMessage', { chat_id: alice.id })
 * expect(tg.texts(alice.id)).toEqual(['Привет!'])
 * await tg.close()
 * ```
 *
 * Deliberate behaviours worth knowing (all as Telegram does them):
 * - Incoming messages and the bot's own sends share one message-id counter per chat; a forum topic's
 *   message_thread_id is the id of its `forum_topic_created` service message, so it comes from the same counter.
 * - Topic messages built with `groupTopicMessage` carry `reply_to_message` = the topic's service message (unless
 *   `topicReply: false` or an explicit `replyTo`), exactly like real forum messages do.
 * - Only inline keyboards are echoed in the returned Message's reply_markup; `sentTo()` exposes whatever was sent.
 * - Two concurrent getUpdates: the one already waiting is terminated with 409 (telegram-bot-api behaviour); pass
 *   `pollConflict: 'reject-newer'` to reject the newcomer instead.
 */
import { EventEmitter } from 'node:events'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type {
  BotCommand,
  CallbackQuery,
  Chat,
  ChatFullInfo,
  ChatMember,
  ForumTopic,
  Message,
  MessageEntity,
  MessageId,
  PhotoSize,
  PreCheckoutQuery,
  ReactionType,
  ResponseParameters,
  StarTransaction,
  Update,
  User,
  UserFromGetMe,
} from 'grammy/types'
import { Agent as UndiciAgent, request as undiciRequest } from 'undici'
import { type LimitsOptions, TelegramLimiter } from './telegram-limits'

// ───────────────────────────── public types ─────────────────────────────

/** A bot id, or a full token `<digits>:<secret>` (the digits are the id). */
export type BotRef = number | string

/** The error part of a Bot API response. */
export interface ApiErrorSpec {
  error_code: number
  description: string
  parameters?: ResponseParameters
}

/** A file received in a multipart upload. `data` is non-enumerable so printed payloads stay short. */
export interface RecordedFile {
  filename: string
  size: number
  contentType?: string
  readonly data?: Buffer
}

/** One request the bot made. `ok`/`result`/`error` are filled once the answer is decided. */
export interface RecordedCall {
  /** Increasing across the server; use with `since`. */
  seq: number
  botId: number
  method: string
  /** JSON body, or parsed form fields (numbers/booleans/JSON decoded, files as {filename,size}). */
  payload: Record<string, any>
  /** Date.now() at arrival. */
  at: number
  ok?: boolean
  result?: any
  error?: ApiErrorSpec
  /** A getUpdates the client gave up on (abort) before it was answered. */
  aborted?: boolean
  /** The call arrived as the body of a webhook response. */
  viaWebhookReply?: boolean
}

/**
 * Selects calls: a predicate on (payload, call), or a partial payload to match: nested objects match partially,
 * RegExp values test strings, functions test values, numbers and numeric strings compare equal.
 */
export type CallFilter =
  | ((payload: Record<string, any>, call: RecordedCall) => boolean)
  | Record<string, unknown>

export interface CallQuery {
  /** Only calls of this bot. */
  botId?: BotRef
  /** Only calls after this one (a call, or a seq number from `tg.mark()`). */
  since?: number | RecordedCall
  /** true: only successful calls; false: only failed ones. */
  ok?: boolean
}

export interface WaitOptions extends CallQuery {
  /** Default: `defaultWaitTimeoutMs` of startBotApi (5000). */
  timeoutMs?: number
}

export interface RuleOptions {
  /** How many calls the rule applies to (default 1; Infinity for all). */
  times?: number
  /** Apply only when this returns true. */
  when?: (payload: Record<string, any>, call: RecordedCall) => boolean
  /** Apply only to this bot. */
  botId?: BotRef
  /** Answer after this many milliseconds. */
  delayMs?: number
}

export interface RuleHandle {
  /** Calls the rule has been applied to so far. */
  readonly hits: number
  readonly remaining: number
  cancel(): void
}

/** An administrator's rights the stand-in's setBotMember sets (the ones a staff group needs, and the rest). */
export type AdminRight =
  | 'can_manage_topics'
  | 'can_pin_messages'
  | 'can_delete_messages'
  | 'can_invite_users'
  | 'can_change_info'
  | 'can_restrict_members'

/** An update without its id; `push` assigns one. */
export type UpdateDraft = Omit<Update, 'update_id'> & { update_id?: number }
/** A built incoming message update (message is always present). */
export type MessageUpdateDraft = UpdateDraft & { message: NonNullable<Update['message']> }

export interface PushResult {
  update: Update
  mode: 'polling' | 'webhook'
  /** Webhook mode: the HTTP status the bot's server answered with (0 when the request failed). */
  status?: number
  /** Webhook mode: the response body. */
  body?: string
  /** The update type is not in the bot's allowed_updates (webhook mode decides at once; polling at delivery). */
  dropped: boolean
}

export interface WebhookPostResult {
  status: number
  body: string
}

/** A message the bot sent, copied or forwarded into a chat. */
export interface SentMessage {
  message_id: number
  chat_id: number
  thread_id?: number
  botId: number
  /** sendMessage, copyMessage, forwardMessage, sendPhoto, ... */
  method: string
  /** Current text or caption (after parse_mode); copies show the source's text/caption when known. */
  text?: string
  /** The message as it is now (edits applied). */
  message: Message
  payload: Record<string, any>
  /** Whatever reply_markup was sent (also reply keyboards, which a Message never echoes). */
  reply_markup?: any
  /** For copies and forwards. */
  source?: { chat_id: number; message_id: number }
  edited: boolean
  deleted: boolean
  /** seq of the call that produced it. */
  seq: number
}

export interface SentQuery {
  /** Only messages in this forum topic. */
  threadId?: number
  botId?: BotRef
  since?: number | RecordedCall
  includeDeleted?: boolean
}

export type SentFilter = string | RegExp | ((m: SentMessage) => boolean)

export interface StartOptions {
  host?: string
  port?: number
  /** getMe overrides per bot id. */
  bots?: Record<number, Partial<UserFromGetMe>>
  pollConflict?: 'terminate-older' | 'reject-newer'
  /** answerPreCheckoutQuery later than this after the push fails like Telegram's (default 10 000). */
  preCheckoutTimeoutMs?: number
  defaultWaitTimeoutMs?: number
  /** Enforce Telegram's flood limits (429 + retry_after past them): see test/support/telegram-limits.ts. */
  limits?: LimitsOptions
}

export interface UserInit {
  id?: number
  first_name?: string
  last_name?: string
  username?: string
  language_code?: string
  is_premium?: true
}

/** Extra fields for built messages; `replyTo` makes it a reply (a message, update, sent message or id). */
export type MessageExtra = Partial<Message> & { replyTo?: ReplyRef }
export type ReplyRef = number | Message | UpdateDraft | SentMessage

export interface TopicMessageOptions {
  /** Post as an anonymous admin: from = GroupAnonymousBot, sender_chat = the group (or the given chat). */
  senderChat?: boolean | Chat
  replyTo?: ReplyRef
  /** Default true: reply_to_message = the topic's service message, like Telegram. */
  topicReply?: boolean
  extra?: Partial<Message>
}

export interface PaymentInit {
  currency?: string
  total_amount: number
  invoice_payload: string
  telegram_payment_charge_id?: string
  provider_payment_charge_id?: string
  /** Stars subscriptions: unix seconds the period paid for ends; set on the first and every renewal payment. */
  subscription_expiration_date?: number
  is_recurring?: true
  is_first_recurring?: true
}

// ───────────────────────────── errors ─────────────────────────────

const err = (error_code: number, description: string, parameters?: ResponseParameters): ApiErrorSpec =>
  parameters ? { error_code, description, parameters } : { error_code, description }

/** Error responses Telegram gives, for `tg.fail(...)` and assertions. */
export const TgErrors = {
  unauthorized: err(401, 'Unauthorized'),
  notFound: err(404, 'Not Found: method not found'),
  blocked: err(403, 'Forbidden: bot was blocked by the user'),
  userDeactivated: err(403, 'Forbidden: user is deactivated'),
  kicked: err(403, 'Forbidden: bot was kicked from the supergroup chat'),
  chatNotFound: err(400, 'Bad Request: chat not found'),
  threadNotFound: err(400, 'Bad Request: message thread not found'),
  botForumCreateForbidden: err(400, 'Bad Request: BOT_FORUM_CREATE_FORBIDDEN'),
  topicClosed: err(400, 'Bad Request: TOPIC_CLOSED'),
  topicDeleted: err(400, 'Bad Request: TOPIC_DELETED'),
  topicNotModified: err(400, 'Bad Request: TOPIC_NOT_MODIFIED'),
  topicIdInvalid: err(400, 'Bad Request: TOPIC_ID_INVALID'),
  notAForum: err(400, 'Bad Request: the chat is not a forum'),
  textEmpty: err(400, 'Bad Request: message text is empty'),
  textTooLong: err(400, 'Bad Request: message is too long'),
  captionTooLong: err(400, 'Bad Request: message caption is too long'),
  notModified: err(
    400,
    'Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message',
  ),
  messageToEditNotFound: err(400, 'Bad Request: message to edit not found'),
  messageCantBeEdited: err(400, "Bad Request: message can't be edited"),
  messageToDeleteNotFound: err(400, 'Bad Request: message to delete not found'),
  messageToCopyNotFound: err(400, 'Bad Request: message to copy not found'),
  messageToForwardNotFound: err(400, 'Bad Request: message to forward not found'),
  messageCantBeCopied: err(400, "Bad Request: message can't be copied"),
  protectedContent: err(400, "Bad Request: message has protected content and can't be forwarded"),
  replyNotFound: err(400, 'Bad Request: message to be replied not found'),
  idsNotIncreasing: err(400, 'Bad Request: message identifiers must be in strictly increasing order'),
  queryTooOld: err(400, 'Bad Request: query is too old and response timeout expired or query ID is invalid'),
  chargeAlreadyRefunded: err(400, 'Bad Request: CHARGE_ALREADY_REFUNDED'),
  chargeNotFound: err(400, 'Bad Request: CHARGE_NOT_FOUND'),
  starsInvoiceInvalid: err(400, 'Bad Request: STARS_INVOICE_INVALID'),
  invoicePayloadInvalid: err(400, 'Bad Request: INVOICE_PAYLOAD_INVALID'),
  webhookActive: err(
    409,
    "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first",
  ),
  pollConflict: err(
    409,
    'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running',
  ),
  tooManyRequests: (retryAfterSeconds: number) =>
    err(429, `Too Many Requests: retry after ${retryAfterSeconds}`, { retry_after: retryAfterSeconds }),
  internal: err(500, 'Internal Server Error'),
  badGateway: err(502, 'Bad Gateway'),
} as const

class ApiFail extends Error {
  constructor(readonly spec: ApiErrorSpec) {
    super(spec.description)
  }
}
const fail = (spec: ApiErrorSpec): never => {
  throw new ApiFail(spec)
}
const badRequest = (what: string): never => fail(err(400, `Bad Request: ${what}`))

// ───────────────────────────── media helpers ─────────────────────────────

let fileCounter = 0
function newFileIds(prefix: string): { file_id: string; file_unique_id: string } {
  const n = ++fileCounter
  const rnd = Math.random().toString(36).slice(2, 10)
  return { file_id: `${prefix}${n}_${rnd}`, file_unique_id: `U${prefix}${n}` }
}

/** Fake media objects for incoming messages: `tg.privateMessage(u, { photo: media.photo() })`. */
export const media = {
  photo(init: { width?: number; height?: number } = {}): PhotoSize[] {
    const w = init.width ?? 1280
    const h = init.height ?? 960
    const base = newFileIds('AgAC')
    return [
      {
        file_id: `${base.file_id}_s`,
        file_unique_id: `${base.file_unique_id}s`,
        width: 90,
        height: Math.round((90 * h) / w),
        file_size: 1_200,
      },
      {
        file_id: `${base.file_id}_m`,
        file_unique_id: `${base.file_unique_id}m`,
        width: 320,
        height: Math.round((320 * h) / w),
        file_size: 15_000,
      },
      { file_id: base.file_id, file_unique_id: base.file_unique_id, width: w, height: h, file_size: 120_000 },
    ]
  },
  document(init: { file_name?: string; mime_type?: string; file_size?: number } = {}) {
    return {
      ...newFileIds('BQAC'),
      file_name: init.file_name ?? 'file.pdf',
      mime_type: init.mime_type ?? 'application/pdf',
      file_size: init.file_size ?? 34_567,
    }
  },
  voice(init: { duration?: number } = {}) {
    return { ...newFileIds('AwAC'), duration: init.duration ?? 3, mime_type: 'audio/ogg', file_size: 9_000 }
  },
  audio(init: { duration?: number; title?: string } = {}) {
    return {
      ...newFileIds('CQAC'),
      duration: init.duration ?? 120,
      title: init.title,
      mime_type: 'audio/mpeg',
    }
  },
  video(init: { duration?: number; width?: number; height?: number } = {}) {
    return {
      ...newFileIds('BAAC'),
      width: init.width ?? 1280,
      height: init.height ?? 720,
      duration: init.duration ?? 10,
      mime_type: 'video/mp4',
    }
  },
  videoNote(init: { duration?: number } = {}) {
    return { ...newFileIds('DQAC'), length: 240, duration: init.duration ?? 5 }
  },
  animation() {
    return { ...newFileIds('CgAC'), width: 320, height: 240, duration: 2, mime_type: 'video/mp4' }
  },
  sticker(init: { emoji?: string } = {}) {
    return {
      ...newFileIds('CAAC'),
      type: 'regular' as const,
      width: 512,
      height: 512,
      is_animated: false,
      is_video: false,
      emoji: init.emoji ?? '👍',
    }
  },
  location(latitude = 55.7558, longitude = 37.6173) {
    return { latitude, longitude }
  },
  contact(init: { phone_number?: string; first_name?: string; user_id?: number } = {}) {
    return {
      phone_number: init.phone_number ?? '+10000000000',
      first_name: init.first_name ?? 'Contact',
      user_id: init.user_id,
    }
  },
  poll(question = 'Question?', options: string[] = ['Yes', 'No']) {
    return {
      id: `${Date.now()}${++fileCounter}`,
      question,
      options: options.map((text) => ({ text, voter_count: 0, persistent_id: text })),
      total_voter_count: 0,
      is_closed: false,
      is_anonymous: true,
      type: 'regular' as const,
      allows_multiple_answers: false,
    }
  },
}

// ───────────────────────────── internal state ─────────────────────────────

interface StoredMessage {
  message: Message
  outgoing: boolean
  botId?: number
  method?: string
  seq?: number
  payload?: Record<string, any>
  source?: { chat_id: number; message_id: number }
  deleted: boolean
  edited: boolean
}

interface TopicState {
  message_thread_id: number
  name: string
  icon_color: number
  icon_custom_emoji_id?: string
  closed: boolean
  deleted: boolean
}

interface ChatState {
  id: number
  chat: Chat
  lastMessageId: number
  messages: Map<number, StoredMessage>
  topics: Map<number, TopicState>
  /** Bot ids that are blocked here, or '*' for every bot. */
  blocked: Set<number | '*'>
  members: Map<number, ChatMember>
}

interface Poller {
  bot: BotState
  res: ServerResponse
  call: RecordedCall
  limit: number
  timer?: ReturnType<typeof setTimeout>
  done: boolean
}

interface WebhookState {
  url: string
  secret_token?: string
  allowed_updates?: string[]
  max_connections?: number
}

interface BotState {
  id: number
  info: UserFromGetMe
  queue: Update[]
  nextUpdateId: number
  /** undefined: never set (Telegram's default list applies). */
  allowedUpdates?: string[]
  lastAllowedUpdates?: string[]
  poller?: Poller
  wakeScheduled: boolean
  webhook?: WebhookState
  starTransactions: StarTransaction[]
  refunded: Set<string>
  /** editUserStarSubscription: charge id -> the renewal's state as the bot last set it. */
  starSubscriptions: Map<string, { userId: number; canceled: boolean }>
  commands: Map<string, BotCommand[]>
  queries: Map<string, { kind: 'callback' | 'pre_checkout'; pushedAt: number; answered: boolean }>
  dropped: Update[]
  /** The highest offset a getUpdates confirmed: every update below it is gone from the queue. */
  confirmed: number
  /**
   * Updates queued below `confirmed` (delivered late by a test, e.g. a webhook retry that lands after polling took
   * over): the next getUpdates drops them, as Telegram's offset would. Telegram numbers an update when it queues it,
   * so this never happens there; here it would lose an update silently, so it is kept for the tests to check.
   */
  late: Update[]
  /**
   * Topics in private chats (Bot API 9.3+): off (getMe has_topics_enabled false; a private chat has no topics),
   * on, or broken as Telegram's rollouts have broken them (getMe still says enabled, but createForumTopic in a
   * private chat fails BOT_FORUM_CREATE_FORBIDDEN and a send with message_thread_id fails "message thread not found").
   */
  privateTopics: 'off' | 'on' | 'broken'
}

interface Rule {
  methods: Set<string>
  error?: ApiErrorSpec
  hasResult: boolean
  result?: unknown
  delayMs?: number
  remaining: number
  hits: number
  when?: (payload: Record<string, any>, call: RecordedCall) => boolean
  botId?: number
}

type Outcome = { ok: true; result: unknown } | { ok: false; error: ApiErrorSpec }

type Handler = (bot: BotState, p: Record<string, any>, call: RecordedCall) => unknown

const TOKEN_RE = /^(\d+):([A-Za-z0-9_-]+)$/
const GROUP_ANONYMOUS_BOT: User = {
  id: 1087968824,
  is_bot: true,
  first_name: 'Group',
  username: 'GroupAnonymousBot',
}
/** Telegram's default when allowed_updates was never given or given as []. */
const DEFAULT_EXCLUDED_UPDATES = new Set(['chat_member', 'message_reaction', 'message_reaction_count'])
const TOPIC_ICON_COLORS = [7322096, 16766590, 13338331, 9367192, 16749490, 16478047]
const UNCOPYABLE_KEYS = [
  'invoice',
  'successful_payment',
  'refunded_payment',
  'forum_topic_created',
  'forum_topic_edited',
  'forum_topic_closed',
  'forum_topic_reopened',
  'general_forum_topic_hidden',
  'general_forum_topic_unhidden',
  'new_chat_members',
  'left_chat_member',
  'new_chat_title',
  'new_chat_photo',
  'delete_chat_photo',
  'group_chat_created',
  'supergroup_chat_created',
  'channel_chat_created',
  'pinned_message',
  'message_auto_delete_timer_changed',
  'migrate_to_chat_id',
  'migrate_from_chat_id',
  'paid_media',
  'giveaway',
  'giveaway_created',
  'giveaway_winners',
  'giveaway_completed',
  'write_access_allowed',
  'users_shared',
  'chat_shared',
  'video_chat_scheduled',
  'video_chat_started',
  'video_chat_ended',
  'video_chat_participants_invited',
  'boost_added',
  'chat_background_set',
  'gift',
  'unique_gift',
  'proximity_alert_triggered',
  'connected_website',
  'passport_data',
  'web_app_data',
]
const CONTENT_KEYS = [
  'text',
  'entities',
  'link_preview_options',
  'animation',
  'audio',
  'document',
  'photo',
  'sticker',
  'video',
  'video_note',
  'voice',
  'caption',
  'caption_entities',
  'show_caption_above_media',
  'has_media_spoiler',
  'contact',
  'dice',
  'location',
  'venue',
  'poll',
  'story',
]
/** Methods that return true and need no state. */
const TRUE_METHODS = [
  'logOut',
  'close',
  'pinChatMessage',
  'unpinChatMessage',
  'unpinAllChatMessages',
  'unpinAllForumTopicMessages',
  'unpinAllGeneralForumTopicMessages',
  'editGeneralForumTopic',
  'closeGeneralForumTopic',
  'reopenGeneralForumTopic',
  'hideGeneralForumTopic',
  'unhideGeneralForumTopic',
  'setMessageReaction',
  'setChatMenuButton',
  'setMyDescription',
  'setMyShortDescription',
  'setMyName',
  'setMyDefaultAdministratorRights',
  'answerInlineQuery',
  'answerShippingQuery',
  'leaveChat',
  'banChatMember',
  'unbanChatMember',
  'restrictChatMember',
  'promoteChatMember',
  'setChatPermissions',
  'setChatTitle',
  'setChatDescription',
  'approveChatJoinRequest',
  'declineChatJoinRequest',
  'editUserStarSubscription',
  'setChatAdministratorCustomTitle',
]
/** Form fields decoded as numbers (everything arrives as a string in multipart). */
const NUMERIC_FIELDS = new Set([
  'chat_id',
  'from_chat_id',
  'message_id',
  'message_thread_id',
  'user_id',
  'reply_to_message_id',
  'direct_messages_topic_id',
  'duration',
  'width',
  'height',
  'length',
  'offset',
  'limit',
  'timeout',
  'latitude',
  'longitude',
  'horizontal_accuracy',
  'live_period',
  'heading',
  'proximity_alert_radius',
  'icon_color',
  'max_tip_amount',
  'subscription_period',
  'until_date',
  'max_connections',
  'cache_time',
  'star_count',
])
/** Form fields never decoded from 'true'/'false' or JSON-looking text. */
const TEXT_FIELDS = new Set([
  'text',
  'caption',
  'title',
  'description',
  'payload',
  'name',
  'question',
  'data',
  'error_message',
  'first_name',
  'last_name',
  'phone_number',
  'address',
  'url',
  'secret_token',
  'start_parameter',
  'provider_token',
  'emoji',
  'callback_query_id',
  'pre_checkout_query_id',
  'inline_message_id',
  'telegram_payment_charge_id',
  'custom_title',
])

const now = () => Math.floor(Date.now() / 1000)
const lc = (s: string) => s.toLowerCase()

function toBotId(ref: BotRef): number {
  if (typeof ref === 'number') return ref
  const m = /^(\d+)(?::|$)/.exec(ref)
  if (!m) throw new Error(`Not a bot id or token: ${ref}`)
  return Number(m[1])
}

function seqOf(since: number | RecordedCall | undefined): number {
  if (since === undefined) return 0
  return typeof since === 'number' ? since : since.seq
}

function updateType(u: Update | UpdateDraft): string {
  return Object.keys(u).find((k) => k !== 'update_id') ?? 'unknown'
}

function matches(actual: unknown, expected: unknown): boolean {
  if (expected instanceof RegExp) return typeof actual === 'string' && expected.test(actual)
  if (typeof expected === 'function') return Boolean((expected as (v: unknown) => unknown)(actual))
  if (expected === null || typeof expected !== 'object') {
    if (actual === expected) return true
    return (
      (typeof actual === 'number' || typeof actual === 'string') &&
      (typeof expected === 'number' || typeof expected === 'string') &&
      String(actual) === String(expected)
    )
  }
  if (actual === null || typeof actual !== 'object') return false
  if (Array.isArray(expected)) {
    return (
      Array.isArray(actual) &&
      actual.length === expected.length &&
      expected.every((e, i) => matches(actual[i], e))
    )
  }
  return Object.entries(expected).every(([k, v]) => matches((actual as Record<string, unknown>)[k], v))
}

function filterCall(filter: CallFilter | undefined, call: RecordedCall): boolean {
  if (!filter) return true
  if (typeof filter === 'function') return filter(call.payload, call)
  return matches(call.payload, filter)
}

function short(v: unknown, max = 220): string {
  let s: string
  try {
    s = JSON.stringify(v) ?? String(v)
  } catch {
    s = String(v)
  }
  return s.length > max ? `${s.slice(0, max)}…` : s
}

function describeCall(c: RecordedCall): string {
  const outcome =
    c.ok === undefined
      ? c.aborted
        ? 'aborted'
        : 'pending'
      : c.ok
        ? 'ok'
        : `${c.error?.error_code} ${c.error?.description}`
  return `  #${c.seq} bot ${c.botId} ${c.method} ${short(c.payload)} -> ${outcome}`
}

// ───────────────────────────── text formatting ─────────────────────────────

const byteOffset = (s: string, i: number) => Buffer.byteLength(s.slice(0, i), 'utf8')
const parseError = (what: string): never => badRequest(`can't parse entities: ${what}`)

const HTML_TAGS: Record<string, string> = {
  b: 'bold',
  strong: 'bold',
  i: 'italic',
  em: 'italic',
  u: 'underline',
  ins: 'underline',
  s: 'strikethrough',
  strike: 'strikethrough',
  del: 'strikethrough',
  'tg-spoiler': 'spoiler',
  span: 'spoiler',
  a: 'text_link',
  code: 'code',
  pre: 'pre',
  blockquote: 'blockquote',
  'tg-emoji': 'custom_emoji',
}

function parseHtml(src: string): { text: string; entities: MessageEntity[] } {
  let out = ''
  const entities: any[] = []
  const stack: {
    tag: string
    type: string
    offset: number
    extra: Record<string, string>
    skip?: boolean
  }[] = []
  let i = 0
  while (i < src.length) {
    const ch = src[i]!
    if (ch === '<') {
      const end = src.indexOf('>', i)
      if (end < 0) parseError(`Unclosed start tag at byte offset ${byteOffset(src, i)}`)
      const raw = src.slice(i + 1, end)
      if (raw.startsWith('/')) {
        const name = lc(raw.slice(1).trim())
        const top = stack.pop()
        if (!top) parseError(`Unexpected end tag at byte offset ${byteOffset(src, i)}`)
        if (name && top!.tag !== name) {
          parseError(
            `Unmatched end tag at byte offset ${byteOffset(src, i)}, expected "</${top!.tag}>", found "</${name}>"`,
          )
        }
        if (!top!.skip && out.length > top!.offset) {
          entities.push({
            type: top!.type,
            offset: top!.offset,
            length: out.length - top!.offset,
            ...top!.extra,
          })
        }
      } else {
        const m = /^([a-zA-Z][\w-]*)\s*([\s\S]*)$/.exec(raw)
        const name = m ? lc(m[1]!) : ''
        const type = HTML_TAGS[name]
        if (!m || !type)
          parseError(`Unsupported start tag "${m ? name : raw}" at byte offset ${byteOffset(src, i)}`)
        const attrs: Record<string, string> = {}
        for (const a of m![2]!.matchAll(/([\w-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"']+))/g)) {
          attrs[lc(a[1]!)] = a[2] ?? a[3] ?? a[4] ?? ''
        }
        const extra: Record<string, string> = {}
        let skip = false
        let entityType = type!
        if (name === 'span' && attrs.class !== 'tg-spoiler') {
          parseError(`Tag "span" must have class "tg-spoiler" at byte offset ${byteOffset(src, i)}`)
        }
        if (name === 'a') {
          if (!attrs.href) parseError(`Can't find href of a link at byte offset ${byteOffset(src, i)}`)
          extra.url = attrs.href!
        }
        if (name === 'tg-emoji') extra.custom_emoji_id = attrs['emoji-id'] ?? ''
        if (name === 'blockquote' && 'expandable' in attrs) entityType = 'expandable_blockquote'
        if (name === 'code') {
          const parent = stack[stack.length - 1]
          if (parent?.tag === 'pre') {
            skip = true
            const lang = /^language-(.+)$/.exec(attrs.class ?? '')?.[1]
            if (lang) parent.extra.language = lang
          }
        }
        stack.push({ tag: name, type: entityType, offset: out.length, extra, skip })
      }
      i = end + 1
    } else if (ch === '&') {
      const m = /^&(#x[0-9a-fA-F]+|#\d+|[a-zA-Z]+);/.exec(src.slice(i, i + 12))
      const named: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"' }
      const ent = m?.[1]
      if (ent && (ent.startsWith('#') || named[ent] !== undefined)) {
        out += ent.startsWith('#x')
          ? String.fromCodePoint(Number.parseInt(ent.slice(2), 16))
          : ent.startsWith('#')
            ? String.fromCodePoint(Number(ent.slice(1)))
            : named[ent]!
        i += m![0].length
      } else {
        out += '&'
        i++
      }
    } else {
      out += ch
      i++
    }
  }
  if (stack.length > 0)
    parseError(`Can't find end tag corresponding to start tag "${stack[stack.length - 1]!.tag}"`)
  entities.sort((a, b) => a.offset - b.offset || b.length - a.length)
  return { text: out, entities }
}

const V2_RESERVED = '_*[]()~`>#+-=|{}.!'
const V2_NAMES: Record<string, string> = {
  bold: 'Bold',
  italic: 'Italic',
  underline: 'Underline',
  strikethrough: 'Strikethrough',
  spoiler: 'Spoiler',
  text_link: 'TextUrl',
}

function parseMarkdownV2(src: string): { text: string; entities: MessageEntity[] } {
  let out = ''
  const entities: any[] = []
  const stack: { marker: string; type: string; offset: number; at: number }[] = []
  let quote: { offset: number } | undefined
  const closeQuote = () => {
    if (quote && out.length > quote.offset) {
      entities.push({ type: 'blockquote', offset: quote.offset, length: out.length - quote.offset })
    }
    quote = undefined
  }
  const findClose = (marker: string, from: number): number => {
    for (let j = from; j < src.length; j++) {
      if (src[j] === '\\') j++
      else if (src.startsWith(marker, j)) return j
    }
    return -1
  }
  const unescapeMd = (s: string) => s.replace(/\\([\s\S])/g, '$1')
  let i = 0
  while (i < src.length) {
    const c = src[i]!
    if (c === '\\') {
      const n = src[i + 1]
      if (n === undefined)
        parseError(`Character '\\' is reserved and must be escaped with the preceding '\\'`)
      out += n
      i += 2
      continue
    }
    if (c === '\n') {
      if (quote && src[i + 1] !== '>') closeQuote()
      out += c
      i++
      continue
    }
    if (c === '>' && (i === 0 || src[i - 1] === '\n')) {
      if (!quote) quote = { offset: out.length }
      i++
      continue
    }
    if (c === '`') {
      const pre = src.startsWith('```', i)
      const marker = pre ? '```' : '`'
      const close = findClose(marker, i + marker.length)
      if (close < 0)
        parseError(`Can't find end of ${pre ? 'Pre' : 'Code'} entity at byte offset ${byteOffset(src, i)}`)
      let body = src.slice(i + marker.length, close)
      let language: string | undefined
      if (pre) {
        const nl = body.indexOf('\n')
        if (nl >= 0 && /^[\w+#-]*$/.test(body.slice(0, nl))) {
          language = body.slice(0, nl) || undefined
          body = body.slice(nl + 1)
        }
      }
      body = unescapeMd(body)
      if (body.length > 0) {
        entities.push({
          type: pre ? 'pre' : 'code',
          offset: out.length,
          length: body.length,
          ...(language ? { language } : {}),
        })
      }
      out += body
      i = close + marker.length
      continue
    }
    if (c === '[') {
      stack.push({ marker: '[', type: 'text_link', offset: out.length, at: i })
      i++
      continue
    }
    if (c === ']') {
      const top = stack[stack.length - 1]
      if (top?.marker === '[' && src[i + 1] === '(') {
        const close = findClose(')', i + 2)
        if (close < 0) parseError(`Can't find end of a URL at byte offset ${byteOffset(src, i + 1)}`)
        stack.pop()
        const url = unescapeMd(src.slice(i + 2, close))
        if (out.length > top.offset)
          entities.push({ type: 'text_link', offset: top.offset, length: out.length - top.offset, url })
        i = close + 1
        continue
      }
      parseError(`Character ']' is reserved and must be escaped with the preceding '\\'`)
    }
    let marker: string | undefined
    if (c === '|' && src[i + 1] === '|') marker = '||'
    else if (c === '_' && src[i + 1] === '_') marker = '__'
    else if (c === '*' || c === '_' || c === '~') marker = c
    if (marker) {
      const type = { '*': 'bold', _: 'italic', __: 'underline', '~': 'strikethrough', '||': 'spoiler' }[
        marker
      ]!
      const idx = stack.findLastIndex((s) => s.marker === marker)
      if (idx >= 0) {
        const open = stack[idx]!
        if (idx !== stack.length - 1) {
          const inner = stack[stack.length - 1]!
          parseError(
            `Can't find end of ${V2_NAMES[inner.type]} entity at byte offset ${byteOffset(src, inner.at)}`,
          )
        }
        stack.pop()
        if (out.length > open.offset)
          entities.push({ type, offset: open.offset, length: out.length - open.offset })
      } else {
        stack.push({ marker, type, offset: out.length, at: i })
      }
      i += marker.length
      continue
    }
    if (V2_RESERVED.includes(c))
      parseError(`Character '${c}' is reserved and must be escaped with the preceding '\\'`)
    out += c
    i++
  }
  closeQuote()
  if (stack.length > 0) {
    const open = stack[0]!
    parseError(`Can't find end of ${V2_NAMES[open.type]} entity at byte offset ${byteOffset(src, open.at)}`)
  }
  entities.sort((a, b) => a.offset - b.offset || b.length - a.length)
  return { text: out, entities }
}

function parseMarkdownLegacy(src: string): { text: string; entities: MessageEntity[] } {
  let out = ''
  const entities: any[] = []
  let i = 0
  const endOf = (marker: string, from: number, at: number) => {
    const close = src.indexOf(marker, from)
    if (close < 0) parseError(`Can't find end of the entity starting at byte offset ${byteOffset(src, at)}`)
    return close
  }
  while (i < src.length) {
    const c = src[i]!
    if (c === '\\' && '_*`['.includes(src[i + 1] ?? '')) {
      out += src[i + 1]
      i += 2
    } else if (c === '`' && src.startsWith('```', i)) {
      const close = endOf('```', i + 3, i)
      let body = src.slice(i + 3, close)
      let language: string | undefined
      const nl = body.indexOf('\n')
      if (nl >= 0 && /^[\w+#-]+$/.test(body.slice(0, nl))) {
        language = body.slice(0, nl)
        body = body.slice(nl + 1)
      }
      entities.push({
        type: 'pre',
        offset: out.length,
        length: body.length,
        ...(language ? { language } : {}),
      })
      out += body
      i = close + 3
    } else if (c === '*' || c === '_' || c === '`') {
      const close = endOf(c, i + 1, i)
      const body = src.slice(i + 1, close)
      const type = c === '*' ? 'bold' : c === '_' ? 'italic' : 'code'
      if (body.length > 0) entities.push({ type, offset: out.length, length: body.length })
      out += body
      i = close + 1
    } else if (c === '[') {
      const close = endOf(']', i + 1, i)
      const body = src.slice(i + 1, close)
      if (src[close + 1] === '(') {
        const urlEnd = endOf(')', close + 2, close + 1)
        entities.push({
          type: 'text_link',
          offset: out.length,
          length: body.length,
          url: src.slice(close + 2, urlEnd),
        })
        out += body
        i = urlEnd + 1
      } else {
        out += `[${body}]`
        i = close + 1
      }
    } else {
      out += c
      i++
    }
  }
  return { text: out, entities }
}

/** Applies parse_mode like Telegram: returns the visible text and its entities, or fails 400 "can't parse entities". */
export function formatText(
  text: string,
  parseMode?: string,
  entities?: MessageEntity[],
): { text: string; entities?: MessageEntity[] } {
  if (entities && entities.length > 0) return { text, entities }
  let r: { text: string; entities: MessageEntity[] }
  switch (parseMode) {
    case 'HTML':
      r = parseHtml(text)
      break
    case 'MarkdownV2':
      r = parseMarkdownV2(text)
      break
    case 'Markdown':
      r = parseMarkdownLegacy(text)
      break
    case undefined:
    case '':
      return { text }
    default:
      return badRequest(`unsupported parse_mode`)
  }
  return r.entities.length > 0 ? r : { text: r.text }
}

// ───────────────────────────── HTTP payloads ─────────────────────────────

function coerceField(key: string, value: string): unknown {
  if (TEXT_FIELDS.has(key)) return value
  const t = value.trim()
  if ((t.startsWith('{') && t.endsWith('}')) || (t.startsWith('[') && t.endsWith(']'))) {
    try {
      return JSON.parse(t)
    } catch {
      return value
    }
  }
  if (value === 'true') return true
  if (value === 'false') return false
  if (NUMERIC_FIELDS.has(key) && /^-?\d+(\.\d+)?$/.test(t)) return Number(t)
  return value
}

interface Part {
  name: string
  filename?: string
  contentType?: string
  data: Buffer
}

/**
 * multipart/form-data parser. Lenient on purpose: grammY writes `content-disposition:form-data;name="x"` without
 * spaces and an unquoted filename, which Node 20's undici `Request.formData()` rejects.
 */
export function parseMultipart(body: Buffer, boundary: string): Part[] {
  const delim = Buffer.from(`--${boundary}`)
  const next = Buffer.from(`\r\n--${boundary}`)
  const parts: Part[] = []
  let pos = body.indexOf(delim)
  if (pos < 0) throw new Error('multipart boundary not found')
  pos += delim.length
  for (;;) {
    if (body[pos] === 0x2d && body[pos + 1] === 0x2d) break
    if (body[pos] === 0x0d && body[pos + 1] === 0x0a) pos += 2
    const end = body.indexOf(next, pos)
    if (end < 0) throw new Error('multipart body is truncated')
    const raw = body.subarray(pos, end)
    const headerEnd = raw.indexOf('\r\n\r\n')
    const head = headerEnd < 0 ? raw.toString('utf8') : raw.subarray(0, headerEnd).toString('utf8')
    const data = headerEnd < 0 ? Buffer.alloc(0) : raw.subarray(headerEnd + 4)
    const part: Part = { name: '', data }
    for (const line of head.split('\r\n')) {
      const colon = line.indexOf(':')
      if (colon < 0) continue
      const hname = lc(line.slice(0, colon).trim())
      const hval = line.slice(colon + 1).trim()
      if (hname === 'content-type') part.contentType = hval
      if (hname === 'content-disposition') {
        for (const m of hval.matchAll(/;\s*([\w*-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^;]*)/g)) {
          const v = m[2]!.startsWith('"') ? m[2]!.slice(1, -1).replace(/\\(.)/g, '$1') : m[2]!.trim()
          if (lc(m[1]!) === 'name') part.name = v
          if (lc(m[1]!) === 'filename') part.filename = v
        }
      }
    }
    parts.push(part)
    pos = end + next.length
  }
  return parts
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

function resolveAttach(value: unknown, files: Map<string, RecordedFile>, used: Set<string>): unknown {
  if (typeof value === 'string' && value.startsWith('attach://')) {
    const name = value.slice('attach://'.length)
    const f = files.get(name)
    if (f) {
      used.add(name)
      return f
    }
    return value
  }
  if (Array.isArray(value)) return value.map((v) => resolveAttach(v, files, used))
  if (value && typeof value === 'object' && !isRecordedFile(value)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveAttach(v, files, used)]))
  }
  return value
}

const FILE_MARK = Symbol('recorded-file')
function isRecordedFile(v: unknown): v is RecordedFile {
  return typeof v === 'object' && v !== null && FILE_MARK in v
}

async function readPayload(req: IncomingMessage, url: URL): Promise<Record<string, any>> {
  const payload: Record<string, any> = {}
  for (const [k, v] of url.searchParams) payload[k] = coerceField(k, v)
  if (req.method === 'GET' || req.method === 'HEAD') return payload
  const body = await readBody(req)
  if (body.length === 0) return payload
  const ct = req.headers['content-type'] ?? ''
  if (/multipart\/form-data/i.test(ct)) {
    const b = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(ct)
    if (!b) throw new Error('multipart boundary is missing')
    const files = new Map<string, RecordedFile>()
    const fields: [string, string][] = []
    for (const part of parseMultipart(body, b[1] ?? b[2]!)) {
      if (part.filename !== undefined) {
        const f: RecordedFile = { filename: part.filename, size: part.data.length }
        if (part.contentType) f.contentType = part.contentType
        Object.defineProperty(f, 'data', { value: Buffer.from(part.data), enumerable: false })
        Object.defineProperty(f, FILE_MARK, { value: true, enumerable: false })
        files.set(part.name, f)
      } else {
        fields.push([part.name, part.data.toString('utf8')])
      }
    }
    const used = new Set<string>()
    for (const [k, v] of fields) payload[k] = resolveAttach(coerceField(k, v), files, used)
    for (const [name, f] of files) if (!used.has(name)) payload[name] = f
    return payload
  }
  if (/application\/x-www-form-urlencoded/i.test(ct)) {
    for (const [k, v] of new URLSearchParams(body.toString('utf8'))) payload[k] = coerceField(k, v)
    return payload
  }
  const parsed = JSON.parse(body.toString('utf8'))
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new Error('JSON payload must be an object')
  return Object.assign(payload, parsed)
}

function writeJson(res: ServerResponse, status: number, body: unknown): void {
  if (res.writableEnded || res.destroyed) return
  const text = JSON.stringify(body)
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
  res.end(text)
}

function writeOutcome(res: ServerResponse, o: Outcome): void {
  if (o.ok) writeJson(res, 200, { ok: true, result: o.result })
  else writeJson(res, o.error.error_code, { ok: false, ...o.error })
}

// ───────────────────────────── the stand-in ─────────────────────────────

export class BotApiStandIn {
  /** Base URL for grammY's `client.apiRoot` (no trailing slash). */
  readonly root: string
  /** Every recorded call, in arrival order (live array; `clearCalls()` empties it). */
  readonly calls: RecordedCall[] = []

  private readonly server: Server
  /** Telegram's flood limits, when started with `limits` (its `refused` counts the 429s). */
  readonly limiter: TelegramLimiter | undefined
  private readonly opts: Required<Omit<StartOptions, 'host' | 'port' | 'bots' | 'limits'>> & {
    bots: StartOptions['bots']
  }
  private readonly events = new EventEmitter()
  private readonly bots = new Map<number, BotState>()
  private readonly chats = new Map<number, ChatState>()
  private readonly users = new Map<number, User>()
  private readonly fileStore = new Map<string, { size?: number; data?: Buffer }>()
  private rules: Rule[] = []
  private seq = 0
  private userCounter = 0
  private groupCounter = 0
  private queryCounter = 0
  private chargeCounter = 0
  private closed = false
  private readonly timers = new Set<ReturnType<typeof setTimeout>>()
  private readonly closeListeners = new Set<(e: Error) => void>()
  private readonly handlers = new Map<string, Handler>()
  /**
   * Webhook connections, kept open between updates as Telegram keeps its own (undici: far less CPU per POST than
   * fetch or node:http, which showed in bench:checkout).
   */
  private readonly webhookAgent = new UndiciAgent({ keepAliveTimeout: 30_000, connections: 128 })

  /** Use `startBotApi()`. */
  constructor(server: Server, root: string, opts: StartOptions) {
    this.server = server
    this.root = root
    this.opts = {
      pollConflict: opts.pollConflict ?? 'terminate-older',
      preCheckoutTimeoutMs: opts.preCheckoutTimeoutMs ?? 10_000,
      defaultWaitTimeoutMs: opts.defaultWaitTimeoutMs ?? 5_000,
      bots: opts.bots,
    }
    this.limiter = opts.limits ? new TelegramLimiter(opts.limits) : undefined
    this.events.setMaxListeners(0)
    this.installHandlers()
  }

  // ─────────── recorded calls ───────────

  /** Current call seq: pass as `since` to only see calls made after this point. */
  mark(): number {
    return this.seq
  }

  /** Calls to a method (or '*' / a list of methods), optionally filtered. */
  callsTo(method: string | string[], filter?: CallFilter, query: CallQuery = {}): RecordedCall[] {
    return this.calls.filter((c) => this.callMatches(c, method, filter, query))
  }

  /** Forget recorded calls (state such as messages, topics and queues is kept). */
  clearCalls(): void {
    this.calls.length = 0
  }

  /**
   * The first call to `method` matching `filter` (since the last clear, or `since`); waits for it when there is none
   * yet. Rejects after timeoutMs with the recent calls listed.
   */
  waitFor(method: string | string[], filter?: CallFilter, opts: WaitOptions = {}): Promise<RecordedCall> {
    return this.waitForCount(method, 1, filter, opts).then((calls) => calls[0]!)
  }

  /** Like waitFor, for the next matching call made after this moment. */
  nextCall(method: string | string[], filter?: CallFilter, opts: WaitOptions = {}): Promise<RecordedCall> {
    return this.waitFor(method, filter, { ...opts, since: opts.since ?? this.mark() })
  }

  /** Resolves with the first `n` matching calls once there are that many. */
  waitForCount(
    method: string | string[],
    n: number,
    filter?: CallFilter,
    opts: WaitOptions = {},
  ): Promise<RecordedCall[]> {
    const timeoutMs = opts.timeoutMs ?? this.opts.defaultWaitTimeoutMs
    const failure = new Error('waitFor') // created here so the stack points at the test
    const collect = () => this.callsTo(method, filter, opts).slice(0, n)
    // Each call is announced when its answer is decided (a delayed one also when it arrives). Rather than scan every
    // recorded call on every announcement, the announced call alone is counted, and the full scan runs only once
    // enough have matched. getUpdates is settled after its announcement, so waits on it always scan.
    const methods = Array.isArray(method) ? method : [method]
    const incremental = !methods.some((m) => m === '*' || lc(m) === 'getupdates')
    const counted = new Set<number>()
    return this.waitUntil(
      (call) => {
        if (call && incremental) {
          if (counted.has(call.seq) || !this.callMatches(call, method, filter, opts)) return undefined
          counted.add(call.seq)
          if (counted.size < n) return undefined
        }
        const found = collect()
        if (found.length >= n) return found
        counted.clear()
        for (const c of found) counted.add(c.seq)
        return undefined
      },
      timeoutMs,
      () => {
        const label = Array.isArray(method) ? method.join('|') : method
        const all = this.callsTo(method, undefined, { botId: opts.botId, since: opts.since })
        failure.message =
          `waitFor(${label}${n > 1 ? `, ${n}` : ''}) timed out after ${timeoutMs} ms: ` +
          `${collect().length} matching of ${all.length} call(s) to ${label}${filter ? ` (filter: ${typeof filter === 'function' ? 'function' : short(filter)})` : ''}.\n` +
          this.recentCalls(label === 'getUpdates')
        return failure
      },
    )
  }

  /** Messages the bot sent, copied or forwarded to a chat (optionally one topic), in order. */
  sentTo(chatId: number, query: SentQuery = {}): SentMessage[] {
    const cs = this.chats.get(Number(chatId))
    if (!cs) return []
    const botId = query.botId === undefined ? undefined : toBotId(query.botId)
    const since = seqOf(query.since)
    const out: SentMessage[] = []
    for (const sm of cs.messages.values()) {
      if (!sm.outgoing || !sm.method) continue
      if (sm.deleted && !query.includeDeleted) continue
      if (query.threadId !== undefined && sm.message.message_thread_id !== query.threadId) continue
      if (botId !== undefined && sm.botId !== botId) continue
      if ((sm.seq ?? 0) <= since) continue
      out.push(this.toSent(cs, sm))
    }
    return out.sort((a, b) => a.message_id - b.message_id)
  }

  /** Just the texts/captions of `sentTo`. */
  texts(chatId: number, query: SentQuery = {}): (string | undefined)[] {
    return this.sentTo(chatId, query).map((m) => m.text)
  }

  /**
   * Waits until the bot has sent something to the chat matching `filter` (substring, RegExp or predicate); resolves
   * immediately if it already did (since the last clear of nothing: messages are state, use `since` to narrow).
   */
  waitForSent(
    chatId: number,
    filter?: SentFilter,
    opts: SentQuery & { timeoutMs?: number } = {},
  ): Promise<SentMessage> {
    const timeoutMs = opts.timeoutMs ?? this.opts.defaultWaitTimeoutMs
    const failure = new Error('waitForSent')
    const test = (m: SentMessage) =>
      filter === undefined
        ? true
        : typeof filter === 'string'
          ? (m.text ?? '').includes(filter)
          : filter instanceof RegExp
            ? filter.test(m.text ?? '')
            : filter(m)
    return this.waitUntil(
      () => this.sentTo(chatId, opts).find(test),
      timeoutMs,
      () => {
        const seen = this.sentTo(chatId, { ...opts, threadId: undefined, includeDeleted: true })
        failure.message =
          `waitForSent(${chatId}${opts.threadId !== undefined ? ` thread ${opts.threadId}` : ''}, ${filter instanceof RegExp ? filter : typeof filter === 'function' ? 'function' : JSON.stringify(filter)}) timed out after ${timeoutMs} ms.\n` +
          `Sent to this chat: ${seen.length === 0 ? 'nothing' : ''}\n` +
          seen
            .slice(-10)
            .map(
              (m) =>
                `  #${m.message_id}${m.thread_id ? ` [thread ${m.thread_id}]` : ''} ${m.method}: ${short(m.text, 120)}`,
            )
            .join('\n') +
          `\n${this.recentCalls(false)}`
        return failure
      },
    )
  }

  // ─────────── failure injection ───────────

  /** Make the next call(s) to `method` ('*' for any) fail with `error`. */
  fail(method: string | string[], error: ApiErrorSpec, opts: RuleOptions = {}): RuleHandle {
    return this.addRule(method, { error, hasResult: false }, opts)
  }

  /** 429 Too Many Requests with parameters.retry_after. */
  fail429(method: string | string[], retryAfterSeconds: number, opts: RuleOptions = {}): RuleHandle {
    return this.fail(method, TgErrors.tooManyRequests(retryAfterSeconds), opts)
  }

  /** Answer normally, but only after `ms` milliseconds. */
  delay(method: string | string[], ms: number, opts: Omit<RuleOptions, 'delayMs'> = {}): RuleHandle {
    return this.addRule(method, { hasResult: false }, { ...opts, delayMs: ms })
  }

  /** Answer with this result instead of the built-in one (a function receives the payload). */
  respond(
    method: string | string[],
    result: unknown | ((payload: Record<string, any>) => unknown),
    opts: RuleOptions = {},
  ): RuleHandle {
    return this.addRule(method, { hasResult: true, result }, opts)
  }

  /** Remove all failure/delay/respond rules. */
  clearRules(): void {
    this.rules = []
  }

  // ─────────── people and chats ───────────

  /** A user (registered, so getChat/getChatMember know them). Ids default above 2^31 on purpose. */
  user(init: UserInit = {}): User {
    const n = ++this.userCounter
    const u: User = {
      id: init.id ?? 7_000_000_000 + n,
      is_bot: false,
      first_name: init.first_name ?? `User${n}`,
      ...(init.last_name !== undefined ? { last_name: init.last_name } : {}),
      ...(init.username !== undefined ? { username: init.username } : {}),
      language_code: init.language_code ?? 'en',
      ...(init.is_premium ? { is_premium: true as const } : {}),
    }
    this.users.set(u.id, u)
    this.chatState(u.id, this.privateChat(u))
    return u
  }

  /** A forum supergroup (topics on). */
  forum(init: { id?: number; title?: string; username?: string } = {}): Chat.SupergroupChat {
    const n = ++this.groupCounter
    const chat: Chat.SupergroupChat = {
      id: init.id ?? -1_001_000_000_000 - n,
      type: 'supergroup',
      title: init.title ?? `Staff ${n}`,
      is_forum: true,
      ...(init.username ? { username: init.username } : {}),
    }
    const cs = this.chatState(chat.id, chat)
    cs.chat = chat
    return chat
  }

  /** A supergroup without topics (is_forum false): `setForum` turns Topics on or off as a person would. */
  supergroup(init: { id?: number; title?: string } = {}): Chat.SupergroupChat {
    const chat = this.forum(init)
    this.setForum(chat.id, false)
    return this.chatState(chat.id).chat as Chat.SupergroupChat
  }

  /** Topics turned on or off in a group's settings (what getChat's is_forum says from now on). */
  setForum(chatId: number, on: boolean): void {
    const cs = this.chatState(chatId)
    cs.chat = { ...(cs.chat as Chat.SupergroupChat), is_forum: on || undefined } as Chat.SupergroupChat
    if (!on) delete (cs.chat as { is_forum?: true }).is_forum
  }

  /**
   * The bot's own membership of a group changed, as a person (`from`) changed it: getChatMember(chat, bot) answers
   * the new state from now on, and the returned my_chat_member update (old -> new) is what Telegram sends.
   * `rights`: the bot becomes an administrator with exactly those rights (others false).
   */
  setBotMember(
    bot: BotRef,
    chatId: number,
    from: User,
    state: 'member' | 'left' | 'kicked' | { rights: Partial<Record<AdminRight, boolean>> },
  ): UpdateDraft {
    const b = this.botState(toBotId(bot))
    const user = this.botUser(b.id)
    const old = this.member(b, chatId, b.id)
    const next: ChatMember =
      state === 'member'
        ? { status: 'member', user }
        : state === 'left'
          ? { status: 'left', user }
          : state === 'kicked'
            ? { status: 'kicked', user, until_date: 0 }
            : ({
                status: 'administrator',
                user,
                can_be_edited: false,
                is_anonymous: false,
                can_manage_chat: true,
                can_delete_messages: false,
                can_manage_video_chats: false,
                can_restrict_members: false,
                can_promote_members: false,
                can_change_info: false,
                can_invite_users: false,
                can_post_stories: false,
                can_edit_stories: false,
                can_delete_stories: false,
                can_pin_messages: false,
                can_manage_topics: false,
                ...state.rights,
              } as ChatMember)
    this.chatState(chatId).members.set(b.id, next)
    return {
      my_chat_member: {
        chat: this.chatState(chatId).chat,
        from,
        date: now(),
        old_chat_member: old,
        new_chat_member: next,
      },
    } as UpdateDraft
  }

  /** Create a topic as a person would; returns its message_thread_id. */
  createTopic(chatId: number, name = 'Topic', iconColor = TOPIC_ICON_COLORS[0]!): number {
    return this.newTopic(this.forumState(chatId), name, iconColor).message_thread_id
  }

  /** Delete a topic as a person would: later sends into it fail 400 "message thread not found". */
  deleteTopic(chatId: number, threadId: number): void {
    const t = this.topicState(this.forumState(chatId), threadId)
    t.deleted = true
    this.markThreadDeleted(this.forumState(chatId), threadId)
  }

  /** Close a topic as a person would: sends fail 400 TOPIC_CLOSED until reopened. */
  closeTopic(chatId: number, threadId: number): void {
    this.topicState(this.forumState(chatId), threadId).closed = true
  }

  reopenTopic(chatId: number, threadId: number): void {
    this.topicState(this.forumState(chatId), threadId).closed = false
  }

  /** Topic state as the stand-in sees it. */
  topic(chatId: number, threadId: number): Readonly<TopicState> | undefined {
    return this.chats.get(chatId)?.topics.get(threadId)
  }

  /** The user blocked the bot (all bots, or one): sends to the chat fail 403. */
  block(chatId: number, bot?: BotRef): void {
    this.chatState(chatId).blocked.add(bot === undefined ? '*' : toBotId(bot))
  }

  unblock(chatId: number, bot?: BotRef): void {
    const cs = this.chatState(chatId)
    if (bot === undefined) cs.blocked.clear()
    else cs.blocked.delete(toBotId(bot))
  }

  /** Set what getChatMember / getChatAdministrators return for a user in a chat. */
  setChatMember(chatId: number, member: ChatMember): void {
    this.chatState(chatId).members.set(member.user.id, member)
  }

  /** A stored message (incoming or sent), as it is now. */
  message(chatId: number, messageId: number): Message | undefined {
    return this.chats.get(chatId)?.messages.get(messageId)?.message
  }

  // ─────────── bots ───────────

  /** What getMe returns for a bot. */
  botInfo(bot: BotRef): UserFromGetMe {
    return this.botState(toBotId(bot)).info
  }

  /**
   * Topics in the bot's private chats (Bot API 9.3+): 'on' sets getMe's has_topics_enabled and lets
   * createForumTopic(user id) make topics there; 'broken' keeps has_topics_enabled true but refuses both as
   * Telegram's rollouts have (BOT_FORUM_CREATE_FORBIDDEN, "message thread not found"); 'off' is the default.
   */
  setPrivateTopics(bot: BotRef, mode: 'off' | 'on' | 'broken'): void {
    const b = this.botState(toBotId(bot))
    b.privateTopics = mode
    b.info = { ...b.info, has_topics_enabled: mode !== 'off' }
  }

  /** The topics of a private chat the bot created (name and thread id). */
  privateTopicsOf(chatId: number): { threadId: number; name: string }[] {
    return [...(this.chats.get(chatId)?.topics.values() ?? [])].map((t) => ({
      threadId: t.message_thread_id,
      name: t.name,
    }))
  }

  /** A client's message written in a topic of their private chat with the bot. */
  privateTopicText(user: User, threadId: number, text: string, extra: MessageExtra = {}): MessageUpdateDraft {
    return this.privateText(user, text, { message_thread_id: threadId, is_topic_message: true, ...extra })
  }

  setBotInfo(bot: BotRef, info: Partial<UserFromGetMe>): void {
    const b = this.botState(toBotId(bot))
    b.info = { ...b.info, ...info, id: b.id, is_bot: true }
  }

  /**
   * The command menu this bot last set for a scope and language (what Telegram would show there; no fallback from a
   * chat's scope to the wider ones is made: ask for each scope).
   */
  menu(bot: BotRef, scope: Record<string, unknown> = { type: 'default' }, lang?: string): string[] {
    const key = `${JSON.stringify(scope)}|${lang ?? ''}`
    return (this.botState(toBotId(bot)).commands.get(key) ?? []).map((c) => c.command)
  }

  /** The last allowed_updates the bot passed to getUpdates or setWebhook (undefined: never). */
  lastAllowedUpdates(bot: BotRef): string[] | undefined {
    return this.botState(toBotId(bot)).lastAllowedUpdates
  }

  /** The webhook the bot registered, if any. */
  webhook(bot: BotRef): Readonly<WebhookState> | undefined {
    return this.botState(toBotId(bot)).webhook
  }

  /** Updates not yet confirmed by the bot (polling). */
  pendingUpdates(bot: BotRef): Update[] {
    return [...this.botState(toBotId(bot)).queue]
  }

  /** Updates a test queued below the offset the bot had confirmed (see BotState.late): lost, unlike at Telegram. */
  lateUpdates(bot: BotRef): Update[] {
    return [...this.botState(toBotId(bot)).late]
  }

  /** Updates thrown away because their type was not in allowed_updates. */
  droppedUpdates(bot: BotRef): Update[] {
    return [...this.botState(toBotId(bot)).dropped]
  }

  /** A Stars subscription's renewal as the bot set it with editUserStarSubscription (undefined: never edited). */
  starSubscription(bot: BotRef, chargeId: string): { userId: number; canceled: boolean } | undefined {
    return this.botState(toBotId(bot)).starSubscriptions.get(chargeId)
  }

  setStarTransactions(bot: BotRef, list: StarTransaction[]): void {
    this.botState(toBotId(bot)).starTransactions = [...list]
  }

  addStarTransaction(bot: BotRef, tx: StarTransaction): void {
    this.botState(toBotId(bot)).starTransactions.push(tx)
  }

  /** The bot's Stars transactions as getStarTransactions lists them (refunds have a receiver, payments a source). */
  starTransactionsOf(bot: BotRef): StarTransaction[] {
    return [...this.botState(toBotId(bot)).starTransactions]
  }

  /** An incoming Stars transaction as getStarTransactions lists it (id = telegram_payment_charge_id). */
  starTransaction(
    user: User,
    init: {
      amount: number
      id?: string
      invoice_payload?: string
      date?: number
      subscription_period?: number
    },
  ): StarTransaction {
    return {
      id: init.id ?? this.newChargeId(),
      amount: init.amount,
      date: init.date ?? now(),
      source: {
        type: 'user',
        transaction_type: 'invoice_payment',
        user,
        ...(init.invoice_payload !== undefined ? { invoice_payload: init.invoice_payload } : {}),
        ...(init.subscription_period !== undefined ? { subscription_period: init.subscription_period } : {}),
      },
    }
  }

  /** Content served for a file id by getFile + /file/bot<token>/<path>. */
  setFileContent(fileId: string, data: Buffer | string): void {
    const buf = Buffer.isBuffer(data) ? data : Buffer.from(data)
    this.fileStore.set(fileId, { size: buf.length, data: buf })
  }

  // ─────────── updates ───────────

  /**
   * Deliver an update to a bot: queued for getUpdates, or POSTed to its webhook when one is set (the result then has
   * the HTTP status). update_id is assigned (increasing per bot) when absent.
   */
  async push(bot: BotRef, draft: UpdateDraft): Promise<PushResult> {
    const b = this.botState(toBotId(bot))
    const update = { ...draft } as Update
    if (update.update_id === undefined) update.update_id = b.nextUpdateId++
    else b.nextUpdateId = Math.max(b.nextUpdateId, update.update_id + 1)
    this.absorb(b, update)
    return this.deliver(b, update)
  }

  /** Push several updates in order. */
  async pushAll(bot: BotRef, drafts: UpdateDraft[]): Promise<PushResult[]> {
    const out: PushResult[] = []
    for (const d of drafts) out.push(await this.push(bot, d))
    return out
  }

  /** Deliver the same update (same update_id) again, as Telegram does after a failed or slow webhook answer. */
  async redeliver(bot: BotRef, update: Update | PushResult): Promise<PushResult> {
    const u = 'mode' in update && 'dropped' in update ? update.update : (update as Update)
    if (u.update_id === undefined)
      throw new Error('redeliver needs an update with update_id (use the push result)')
    const b = this.botState(toBotId(bot))
    this.absorb(b, u)
    return this.deliver(b, u)
  }

  /** POST any update to any URL (negative webhook tests: wrong secret, garbage), on kept-open connections. */
  async postUpdate(
    url: string,
    update: unknown,
    opts: { secret?: string; timeoutMs?: number } = {},
  ): Promise<WebhookPostResult> {
    const body = typeof update === 'string' ? update : JSON.stringify(update)
    const headers: Record<string, string> = { 'content-type': 'application/json' }
    if (opts.secret !== undefined) headers['x-telegram-bot-api-secret-token'] = opts.secret
    const timeoutMs = opts.timeoutMs ?? 60_000
    try {
      const res = await undiciRequest(url, {
        method: 'POST',
        headers,
        body,
        dispatcher: this.webhookAgent,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      })
      return { status: res.statusCode, body: await res.body.text() }
    } catch (e) {
      return { status: 0, body: String((e as Error)?.message ?? e) }
    }
  }

  // ─────────── update builders ───────────

  /** A text message in the user's private chat with the bot. Texts starting with /command get a bot_command entity. */
  privateText(user: User, text: string, extra: MessageExtra = {}): MessageUpdateDraft {
    const cmd = /^\/[A-Za-z0-9_]+(@[A-Za-z0-9_]+)?/.exec(text)
    const entities: MessageEntity[] | undefined = cmd
      ? [{ type: 'bot_command', offset: 0, length: cmd[0].length }]
      : undefined
    return this.privateMessage(user, { text, ...(entities ? { entities } : {}), ...extra })
  }

  /** Any message in the user's private chat: `{ photo: media.photo(), caption }`, `{ voice: media.voice() }`, ... */
  privateMessage(user: User, partial: MessageExtra = {}): MessageUpdateDraft {
    this.users.set(user.id, user)
    const msg = this.incoming(this.privateChat(user), user, partial)
    return { message: msg as NonNullable<Update['message']> }
  }

  /** A command with a bot_command entity: command(u, '/start', 'ref_42') -> "/start ref_42". */
  command(user: User, command: string, args?: string, extra: MessageExtra = {}): MessageUpdateDraft {
    const cmd = command.startsWith('/') ? command : `/${command}`
    const text = args ? `${cmd} ${args}` : cmd
    return this.privateMessage(user, {
      text,
      entities: [{ type: 'bot_command', offset: 0, length: cmd.length }],
      ...extra,
    })
  }

  /** n photos sharing one media_group_id (caption on the first, like a client sends an album). */
  album(
    user: User,
    n: number,
    opts: { caption?: string; kind?: 'photo' | 'document' | 'video' } = {},
  ): MessageUpdateDraft[] {
    const group = `${Date.now()}${++this.queryCounter}`
    return Array.from({ length: n }, (_, i) => {
      const content: Partial<Message> =
        opts.kind === 'document'
          ? { document: media.document({ file_name: `file${i + 1}.pdf` }) }
          : opts.kind === 'video'
            ? { video: media.video() }
            : { photo: media.photo() }
      return this.privateMessage(user, {
        ...content,
        media_group_id: group,
        ...(i === 0 && opts.caption !== undefined ? { caption: opts.caption } : {}),
      })
    })
  }

  /**
   * A message in a forum topic of a supergroup (threadId undefined = General). `content` is a text or a partial
   * message. Anonymous admins: `{ senderChat: true }`.
   */
  groupTopicMessage(
    chatId: number,
    threadId: number | undefined,
    from: User,
    content: string | Partial<Message>,
    opts: TopicMessageOptions = {},
  ): MessageUpdateDraft {
    const cs = this.forumState(chatId)
    this.users.set(from.id, from)
    const partial: Partial<Message> = typeof content === 'string' ? { text: content } : { ...content }
    if (typeof content === 'string') {
      const cmd = /^\/[A-Za-z0-9_]+(@[A-Za-z0-9_]+)?/.exec(content)
      if (cmd) partial.entities = [{ type: 'bot_command', offset: 0, length: cmd[0].length }]
    }
    let sender: User = from
    const extra: MessageExtra = { ...partial, ...opts.extra }
    if (opts.senderChat) {
      sender = GROUP_ANONYMOUS_BOT
      extra.sender_chat = opts.senderChat === true ? cs.chat : opts.senderChat
    }
    if (threadId !== undefined && threadId !== 1) {
      const topic = this.topicState(cs, threadId)
      extra.message_thread_id = threadId
      extra.is_topic_message = true
      if (opts.replyTo !== undefined) extra.replyTo = opts.replyTo
      else if (opts.topicReply !== false) {
        extra.reply_to_message = {
          message_id: threadId,
          message_thread_id: threadId,
          date: now(),
          chat: cs.chat,
          from,
          is_topic_message: true,
          forum_topic_created: { name: topic.name, icon_color: topic.icon_color },
        } as any
      }
    } else if (opts.replyTo !== undefined) extra.replyTo = opts.replyTo
    const msg = this.incoming(cs.chat, sender, extra)
    return { message: msg as NonNullable<Update['message']> }
  }

  /** The edited_message update for a message (text, or caption for media; or a partial to merge). */
  edited(message: Message | UpdateDraft, change: string | Partial<Message>): UpdateDraft {
    const orig = this.asMessage(message)
    const patch: Partial<Message> =
      typeof change === 'string'
        ? orig.text === undefined && orig.caption !== undefined
          ? { caption: change }
          : { text: change }
        : change
    const next = { ...orig, ...patch, edit_date: now() } as Message
    if (typeof change === 'string') {
      if ('text' in patch) delete next.entities
      else delete next.caption_entities
    }
    const cs = this.chats.get(orig.chat.id)
    const stored = cs?.messages.get(orig.message_id)
    if (stored) {
      stored.message = next
      stored.edited = true
    }
    return { edited_message: next as NonNullable<Update['edited_message']> }
  }

  /**
   * A callback query. Without `message`, the latest bot message in the user's private chat whose inline keyboard has
   * this callback_data is used (else the latest bot message there, else a fabricated one).
   */
  callback(
    user: User,
    data: string,
    message?: Message | SentMessage | number,
    opts: { chatId?: number } = {},
  ): UpdateDraft {
    this.users.set(user.id, user)
    const chatId =
      opts.chatId ??
      (message && typeof message === 'object'
        ? 'chat_id' in message
          ? message.chat_id
          : message.chat.id
        : user.id)
    const cs = this.chatState(chatId, chatId === user.id ? this.privateChat(user) : undefined)
    let msg: Message | undefined
    if (typeof message === 'number') msg = cs.messages.get(message)?.message
    else if (message) msg = 'method' in message && 'seq' in message ? message.message : (message as Message)
    if (!msg) {
      const mine = [...cs.messages.values()].filter((m) => m.outgoing && m.method && !m.deleted).reverse()
      const hasData = (m: StoredMessage) =>
        (m.message.reply_markup?.inline_keyboard ?? []).some((row) =>
          row.some((b) => 'callback_data' in b && b.callback_data === data),
        )
      msg = (mine.find(hasData) ?? mine[0])?.message
    }
    if (!msg) {
      const id = typeof message === 'number' ? message : this.nextMessageId(cs)
      msg = { message_id: id, date: now(), chat: cs.chat, text: '…' } as Message
      this.remember(msg, { outgoing: true })
    }
    const q: CallbackQuery = {
      id: `${++this.queryCounter}${Math.floor(Math.random() * 1e9)}`,
      from: user,
      message: msg,
      chat_instance: `ci${Math.abs(chatId)}`,
      data,
    }
    return { callback_query: q }
  }

  /** A pre_checkout_query (Stars by default). */
  preCheckout(
    user: User,
    init: { currency?: string; total_amount: number; invoice_payload: string; id?: string },
  ): UpdateDraft {
    this.users.set(user.id, user)
    const q: PreCheckoutQuery = {
      id: init.id ?? `${++this.queryCounter}${Math.floor(Math.random() * 1e9)}`,
      from: user,
      currency: init.currency ?? 'XTR',
      total_amount: init.total_amount,
      invoice_payload: init.invoice_payload,
    }
    return { pre_checkout_query: q }
  }

  /** A message with successful_payment in the user's private chat (charge id generated unless given). */
  successfulPayment(user: User, init: PaymentInit, extra: MessageExtra = {}): MessageUpdateDraft {
    return this.privateMessage(user, {
      successful_payment: {
        currency: init.currency ?? 'XTR',
        total_amount: init.total_amount,
        invoice_payload: init.invoice_payload,
        telegram_payment_charge_id: init.telegram_payment_charge_id ?? this.newChargeId(),
        provider_payment_charge_id: init.provider_payment_charge_id ?? '',
        ...(init.subscription_expiration_date !== undefined
          ? { subscription_expiration_date: init.subscription_expiration_date }
          : {}),
        ...(init.is_recurring !== undefined ? { is_recurring: init.is_recurring } : {}),
        ...(init.is_first_recurring !== undefined ? { is_first_recurring: init.is_first_recurring } : {}),
      },
      ...extra,
    })
  }

  /** A message with refunded_payment in the user's private chat. */
  refundedPayment(user: User, init: PaymentInit, extra: MessageExtra = {}): MessageUpdateDraft {
    return this.privateMessage(user, {
      refunded_payment: {
        currency: init.currency ?? 'XTR',
        total_amount: init.total_amount,
        invoice_payload: init.invoice_payload,
        telegram_payment_charge_id: init.telegram_payment_charge_id ?? this.newChargeId(),
      },
      ...extra,
    })
  }

  /** A message_reaction update (only delivered when the bot asked for it in allowed_updates). */
  reaction(
    user: User,
    message: Message | SentMessage,
    emoji: string | string[],
    old: string[] = [],
  ): UpdateDraft {
    const msg = 'seq' in message && 'method' in message ? message.message : (message as Message)
    const toReactions = (list: string[]) => list.map((e) => ({ type: 'emoji', emoji: e }) as ReactionType)
    return {
      message_reaction: {
        chat: msg.chat,
        message_id: msg.message_id,
        user,
        date: now(),
        old_reaction: toReactions(old),
        new_reaction: toReactions(Array.isArray(emoji) ? emoji : [emoji]),
      },
    }
  }

  /** my_chat_member for a private chat: the user blocked ('kicked') or unblocked ('member') the bot. */
  myChatMember(bot: BotRef, user: User, status: 'kicked' | 'member'): UpdateDraft {
    const botUser = this.botUser(toBotId(bot))
    const member = (s: 'kicked' | 'member') =>
      (s === 'kicked'
        ? { status: 'kicked', user: botUser, until_date: 0 }
        : { status: 'member', user: botUser }) as ChatMember
    return {
      my_chat_member: {
        chat: this.privateChat(user),
        from: user,
        date: now(),
        old_chat_member: member(status === 'kicked' ? 'member' : 'kicked'),
        new_chat_member: member(status),
      },
    }
  }

  // ─────────── lifecycle ───────────

  /** Ends held long polls, rejects pending waits and stops the server. */
  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    for (const b of this.bots.values()) if (b.poller) this.endPoll(b.poller, { ok: true, result: [] })
    for (const t of this.timers) clearTimeout(t)
    this.timers.clear()
    const e = new Error('Bot API stand-in closed')
    for (const l of [...this.closeListeners]) l(e)
    // Webhook connections are closed once the POSTs in flight have their answers.
    await this.webhookAgent.close()
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve())
      this.server.closeAllConnections()
    })
  }

  // ───────────────────────────── internals ─────────────────────────────

  /** @internal */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://stand-in')
    const file = /^\/file\/bot([^/]+)\/(.+)$/.exec(url.pathname)
    if (file) return this.serveFile(file[1]!, decodeURIComponent(file[2]!), res)
    const m = /^\/bot([^/]*)\/([A-Za-z0-9_]+)\/?$/.exec(url.pathname)
    if (!m) {
      req.resume()
      return writeJson(res, 404, { ok: false, error_code: 404, description: 'Not Found' })
    }
    const token = TOKEN_RE.exec(decodeURIComponent(m[1]!))
    if (!token) {
      req.resume()
      return writeJson(res, 401, { ok: false, ...TgErrors.unauthorized })
    }
    let payload: Record<string, any>
    try {
      payload = await readPayload(req, url)
    } catch (e) {
      return writeJson(res, 400, {
        ok: false,
        error_code: 400,
        description: `Bad Request: ${(e as Error).message}`,
      })
    }
    const call = this.record(Number(token[1]), m[2]!, payload)
    await this.execute(call, res)
  }

  private record(
    botId: number,
    method: string,
    payload: Record<string, any>,
    viaWebhookReply = false,
  ): RecordedCall {
    const call: RecordedCall = { seq: ++this.seq, botId, method, payload, at: Date.now() }
    if (viaWebhookReply) call.viaWebhookReply = true
    this.calls.push(call)
    return call
  }

  private async execute(call: RecordedCall, res?: ServerResponse): Promise<void> {
    const bot = this.botState(call.botId)
    const rule = this.takeRule(call)
    if (rule?.delayMs) {
      // Announced on arrival too: a wait for the call itself need not wait for its delayed answer.
      this.events.emit('call', call)
      await this.sleep(rule.delayMs)
    }
    if (this.closed && res) return void res.destroy()
    let outcome: Outcome
    if (rule?.error) outcome = { ok: false, error: rule.error }
    else if (rule?.hasResult) {
      outcome = {
        ok: true,
        result:
          typeof rule.result === 'function'
            ? (rule.result as (p: unknown) => unknown)(call.payload)
            : rule.result,
      }
    } else if (lc(call.method) === 'getupdates' && res) {
      this.events.emit('call', call)
      return this.getUpdates(bot, call, res)
    } else {
      const retryAfter = this.limiter?.check(call.botId, call.method, call.payload)
      outcome =
        retryAfter !== undefined
          ? { ok: false, error: TgErrors.tooManyRequests(retryAfter) }
          : this.dispatch(bot, call)
    }
    this.settle(call, outcome)
    if (res) writeOutcome(res, outcome)
  }

  private dispatch(bot: BotState, call: RecordedCall): Outcome {
    const handler = this.handlers.get(lc(call.method))
    if (!handler) return { ok: false, error: TgErrors.notFound }
    try {
      return { ok: true, result: handler(bot, call.payload, call) }
    } catch (e) {
      if (e instanceof ApiFail) return { ok: false, error: e.spec }
      console.error(`[bot-api stand-in] ${call.method} crashed:`, e)
      return {
        ok: false,
        error: err(
          500,
          `Internal Server Error: stand-in crashed in ${call.method}: ${(e as Error)?.message}`,
        ),
      }
    }
  }

  private settle(call: RecordedCall, o: Outcome, emit = true): void {
    call.ok = o.ok
    if (o.ok) call.result = o.result
    else call.error = o.error
    if (emit) this.events.emit('call', call)
  }

  private callMatches(
    c: RecordedCall,
    method: string | string[],
    filter: CallFilter | undefined,
    q: CallQuery,
  ): boolean {
    const methods = Array.isArray(method) ? method : [method]
    if (!methods.includes('*') && !methods.some((m) => lc(m) === lc(c.method))) return false
    if (q.botId !== undefined && c.botId !== toBotId(q.botId)) return false
    if (c.seq <= seqOf(q.since)) return false
    if (q.ok !== undefined && c.ok !== q.ok) return false
    return filterCall(filter, c)
  }

  /** Resolves with the first defined probe result: now, or after a call is announced (the probe gets that call). */
  private waitUntil<T>(
    probe: (call?: RecordedCall) => T | undefined,
    timeoutMs: number,
    onTimeout: () => Error,
  ): Promise<T> {
    const first = probe()
    if (first !== undefined) return Promise.resolve(first)
    if (this.closed) return Promise.reject(new Error('Bot API stand-in closed'))
    return new Promise<T>((resolve, reject) => {
      const cleanup = () => {
        clearTimeout(timer)
        this.events.off('call', onCall)
        this.closeListeners.delete(onClose)
      }
      const onCall = (call: RecordedCall) => {
        const found = probe(call)
        if (found !== undefined) {
          cleanup()
          resolve(found)
        }
      }
      const onClose = (e: Error) => {
        cleanup()
        reject(e)
      }
      const timer = setTimeout(() => {
        cleanup()
        reject(onTimeout())
      }, timeoutMs)
      this.events.on('call', onCall)
      this.closeListeners.add(onClose)
    })
  }

  private recentCalls(includeGetUpdates: boolean): string {
    const recent = this.calls.filter((c) => includeGetUpdates || c.method !== 'getUpdates').slice(-15)
    return recent.length === 0
      ? 'No calls recorded since the last clear.'
      : `Recent calls (last ${recent.length}${includeGetUpdates ? '' : ', getUpdates omitted'}):\n${recent.map(describeCall).join('\n')}`
  }

  private addRule(
    method: string | string[],
    base: Pick<Rule, 'error' | 'hasResult' | 'result'>,
    opts: RuleOptions,
  ): RuleHandle {
    const rule: Rule = {
      ...base,
      methods: new Set((Array.isArray(method) ? method : [method]).map(lc)),
      remaining: opts.times ?? 1,
      hits: 0,
      ...(opts.when ? { when: opts.when } : {}),
      ...(opts.botId !== undefined ? { botId: toBotId(opts.botId) } : {}),
      ...(opts.delayMs ? { delayMs: opts.delayMs } : {}),
    }
    this.rules.push(rule)
    return {
      get hits() {
        return rule.hits
      },
      get remaining() {
        return rule.remaining
      },
      cancel: () => {
        this.rules = this.rules.filter((r) => r !== rule)
      },
    }
  }

  private takeRule(call: RecordedCall): Rule | undefined {
    const rule = this.rules.find(
      (r) =>
        r.remaining > 0 &&
        (r.methods.has('*') || r.methods.has(lc(call.method))) &&
        (r.botId === undefined || r.botId === call.botId) &&
        (!r.when || r.when(call.payload, call)),
    )
    if (!rule) return undefined
    rule.remaining--
    rule.hits++
    if (rule.remaining <= 0) this.rules = this.rules.filter((r) => r !== rule)
    return rule
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.timers.delete(t)
        resolve()
      }, ms)
      this.timers.add(t)
    })
  }

  private serveFile(tokenPart: string, path: string, res: ServerResponse): void {
    if (!TOKEN_RE.test(decodeURIComponent(tokenPart))) {
      writeJson(res, 401, { ok: false, ...TgErrors.unauthorized })
      return
    }
    const fileId = path.replace(/^files\//, '')
    const f = this.fileStore.get(fileId)
    const data = f?.data ?? Buffer.from(`stand-in content of ${fileId}`)
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': data.length })
    res.end(data)
  }

  // ─────────── bots, chats, messages ───────────

  private botState(id: number): BotState {
    let b = this.bots.get(id)
    if (!b) {
      b = {
        id,
        info: {
          id,
          is_bot: true,
          first_name: `Bot ${id}`,
          username: `bot${id}`,
          can_join_groups: true,
          can_read_all_group_messages: false,
          supports_inline_queries: false,
          can_connect_to_business: false,
          has_main_web_app: false,
          has_topics_enabled: false,
          allows_users_to_create_topics: false,
          can_manage_bots: false,
          supports_join_request_queries: false,
          ...this.opts.bots?.[id],
        },
        queue: [],
        nextUpdateId: 100_000,
        wakeScheduled: false,
        starTransactions: [],
        refunded: new Set(),
        starSubscriptions: new Map(),
        privateTopics: 'off',
        commands: new Map(),
        queries: new Map(),
        dropped: [],
        confirmed: 0,
        late: [],
      }
      this.bots.set(id, b)
    }
    return b
  }

  private botUser(id: number): User {
    const i = this.botState(id).info
    return { id: i.id, is_bot: true, first_name: i.first_name, username: i.username }
  }

  private privateChat(u: User): Chat.PrivateChat {
    return {
      id: u.id,
      type: 'private',
      first_name: u.first_name,
      ...(u.last_name !== undefined ? { last_name: u.last_name } : {}),
      ...(u.username !== undefined ? { username: u.username } : {}),
    }
  }

  private chatState(id: number, hint?: Chat): ChatState {
    let cs = this.chats.get(id)
    if (!cs) {
      let chat: Chat
      if (hint) chat = hint
      else if (id > 0) {
        const u = this.users.get(id)
        chat = u ? this.privateChat(u) : { id, type: 'private', first_name: 'User' }
      } else if (id <= -1_000_000_000_000) chat = { id, type: 'supergroup', title: 'Group', is_forum: true }
      else chat = { id, type: 'group', title: 'Group' }
      cs = {
        id,
        chat,
        // In a forum, 1 is the General topic: the first created topic must not get that id.
        lastMessageId: chat.type === 'supergroup' ? 1 : 0,
        messages: new Map(),
        topics: new Map(),
        blocked: new Set(),
        members: new Map(),
      }
      this.chats.set(id, cs)
    } else if (hint && hint.type !== 'private' && !cs.chat.title) cs.chat = hint
    return cs
  }

  private forumState(chatId: number): ChatState {
    const existing = this.chats.get(chatId)
    if (existing) return existing
    return this.chatState(this.forum({ id: chatId }).id)
  }

  private nextMessageId(cs: ChatState): number {
    return ++cs.lastMessageId
  }

  private topicState(cs: ChatState, threadId: number): TopicState {
    let t = cs.topics.get(threadId)
    if (!t) {
      t = {
        message_thread_id: threadId,
        name: `Topic ${threadId}`,
        icon_color: TOPIC_ICON_COLORS[0]!,
        closed: false,
        deleted: false,
      }
      cs.topics.set(threadId, t)
      if (threadId > cs.lastMessageId) cs.lastMessageId = threadId
    }
    return t
  }

  private newTopic(
    cs: ChatState,
    name: string,
    iconColor: number,
    emojiId?: string,
    botId?: number,
  ): TopicState {
    const id = this.nextMessageId(cs)
    const t: TopicState = {
      message_thread_id: id,
      name,
      icon_color: iconColor,
      closed: false,
      deleted: false,
    }
    if (emojiId) t.icon_custom_emoji_id = emojiId
    cs.topics.set(id, t)
    const service = {
      message_id: id,
      message_thread_id: id,
      date: now(),
      chat: cs.chat,
      ...(botId !== undefined ? { from: this.botUser(botId) } : {}),
      is_topic_message: true,
      forum_topic_created: {
        name,
        icon_color: iconColor,
        ...(emojiId ? { icon_custom_emoji_id: emojiId } : {}),
      },
    } as Message
    cs.messages.set(id, { message: service, outgoing: botId !== undefined, deleted: false, edited: false })
    return t
  }

  private markThreadDeleted(cs: ChatState, threadId: number): void {
    for (const m of cs.messages.values()) if (m.message.message_thread_id === threadId) m.deleted = true
  }

  private remember(msg: Message, meta: Partial<StoredMessage> & { outgoing: boolean }): StoredMessage {
    const cs = this.chatState(msg.chat.id, msg.chat)
    if (msg.message_id > cs.lastMessageId) cs.lastMessageId = msg.message_id
    const existing = cs.messages.get(msg.message_id)
    if (existing?.method) return existing
    const stored: StoredMessage = { deleted: false, edited: false, ...meta, message: msg }
    cs.messages.set(msg.message_id, stored)
    if (msg.is_topic_message && msg.message_thread_id) this.topicState(cs, msg.message_thread_id)
    return stored
  }

  private incoming(chat: Chat, from: User | undefined, extra: MessageExtra): Message {
    const cs = this.chatState(chat.id, chat)
    const { replyTo, ...rest } = extra
    const message_id = rest.message_id ?? this.nextMessageId(cs)
    const msg = { message_id, date: now(), chat: cs.chat, ...(from ? { from } : {}), ...rest } as Message
    if (replyTo !== undefined) (msg as any).reply_to_message = this.replyTarget(cs, replyTo)
    const r = msg.reply_to_message
    if (r && r.date > 0 && !cs.messages.has(r.message_id))
      this.remember(r, { outgoing: r.from?.is_bot === true })
    this.remember(msg, { outgoing: false })
    return msg
  }

  private asMessage(ref: Message | UpdateDraft | SentMessage): Message {
    if ('message_id' in ref && 'chat' in ref) return ref as Message
    if ('seq' in ref && 'method' in ref) return (ref as SentMessage).message
    const u = ref as UpdateDraft
    const m = u.message ?? u.edited_message ?? u.channel_post ?? u.business_message
    if (!m) throw new Error(`Not a message update: ${short(ref)}`)
    return m
  }

  private replyTarget(cs: ChatState, ref: ReplyRef): Message {
    let m: Message | undefined
    if (typeof ref === 'number')
      m = cs.messages.get(ref)?.message ?? ({ message_id: ref, date: now(), chat: cs.chat } as Message)
    else m = this.asMessage(ref)
    const { reply_to_message: _drop, ...rest } = m as Message & { reply_to_message?: unknown }
    return rest as Message
  }

  private toSent(cs: ChatState, sm: StoredMessage): SentMessage {
    const m = sm.message
    const s: SentMessage = {
      message_id: m.message_id,
      chat_id: cs.id,
      botId: sm.botId ?? 0,
      method: sm.method ?? '',
      text: m.text ?? m.caption,
      message: m,
      payload: sm.payload ?? {},
      edited: sm.edited,
      deleted: sm.deleted,
      seq: sm.seq ?? 0,
    }
    if (m.message_thread_id !== undefined) s.thread_id = m.message_thread_id
    if (sm.payload?.reply_markup !== undefined) s.reply_markup = sm.payload.reply_markup
    if (sm.source) s.source = sm.source
    return s
  }

  private newChargeId(): string {
    const rnd = Math.random().toString(36).slice(2, 14)
    return `stx${(++this.chargeCounter).toString().padStart(6, '0')}${rnd}`
  }

  // ─────────── update delivery ───────────

  private absorb(b: BotState, u: Update): void {
    for (const key of [
      'message',
      'edited_message',
      'channel_post',
      'edited_channel_post',
      'business_message',
    ] as const) {
      const m = u[key]
      if (!m) continue
      if (m.from && !m.from.is_bot) this.users.set(m.from.id, m.from)
      const cs = this.chatState(m.chat.id, m.chat)
      const existing = cs.messages.get(m.message_id)
      if (key.startsWith('edited') && existing) {
        existing.message = m
        existing.edited = true
      } else if (!existing) this.remember(m, { outgoing: false })
    }
    const cq = u.callback_query
    if (cq) {
      if (!b.queries.has(cq.id))
        b.queries.set(cq.id, { kind: 'callback', pushedAt: Date.now(), answered: false })
      const m = cq.message
      if (m && m.date > 0 && !this.chats.get(m.chat.id)?.messages.has(m.message_id)) {
        this.remember(m as Message, { outgoing: true })
      }
    }
    const pq = u.pre_checkout_query
    if (pq && !b.queries.has(pq.id))
      b.queries.set(pq.id, { kind: 'pre_checkout', pushedAt: Date.now(), answered: false })
  }

  private isAllowed(b: BotState, u: Update): boolean {
    const type = updateType(u)
    const list = b.allowedUpdates
    if (!list || list.length === 0) return !DEFAULT_EXCLUDED_UPDATES.has(type)
    return list.includes(type)
  }

  private async deliver(b: BotState, update: Update): Promise<PushResult> {
    if (this.closed) throw new Error('Bot API stand-in closed')
    if (b.webhook) {
      if (!this.isAllowed(b, update)) {
        b.dropped.push(update)
        return { update, mode: 'webhook', dropped: true }
      }
      const r = await this.postUpdate(b.webhook.url, update, { secret: b.webhook.secret_token })
      await this.webhookReply(b, r)
      return { update, mode: 'webhook', status: r.status, body: r.body, dropped: false }
    }
    if (update.update_id < b.confirmed) b.late.push(update)
    b.queue.push(update)
    this.wake(b)
    return { update, mode: 'polling', dropped: false }
  }

  /** A webhook answer may carry one method call (grammY's webhook reply). */
  private async webhookReply(b: BotState, r: WebhookPostResult): Promise<void> {
    if (r.status < 200 || r.status >= 300 || !r.body.trim().startsWith('{')) return
    let body: any
    try {
      body = JSON.parse(r.body)
    } catch {
      return
    }
    if (!body || typeof body.method !== 'string') return
    const { method, ...payload } = body
    await this.execute(this.record(b.id, method, payload, true))
  }

  private wake(b: BotState): void {
    if (!b.poller || b.wakeScheduled) return
    b.wakeScheduled = true
    setImmediate(() => {
      b.wakeScheduled = false
      const p = b.poller
      if (!p || p.done) return
      const ready = this.deliverable(b, p.limit)
      if (ready.length > 0) this.endPoll(p, { ok: true, result: ready })
    })
  }

  private deliverable(b: BotState, limit: number): Update[] {
    const out: Update[] = []
    b.queue = b.queue.filter((u) => {
      if (this.isAllowed(b, u)) return true
      b.dropped.push(u)
      return false
    })
    for (const u of b.queue) {
      if (out.length >= limit) break
      out.push(u)
    }
    return out
  }

  private getUpdates(b: BotState, call: RecordedCall, res: ServerResponse): void {
    const p = call.payload
    const poller: Poller = { bot: b, res, call, limit: 100, done: false }
    if (b.webhook) {
      this.endPoll(poller, { ok: false, error: TgErrors.webhookActive })
      return
    }
    if (b.poller && !b.poller.done) {
      if (this.opts.pollConflict === 'reject-newer') {
        this.endPoll(poller, { ok: false, error: TgErrors.pollConflict })
        return
      }
      this.endPoll(b.poller, { ok: false, error: TgErrors.pollConflict })
    }
    const offset = Number(p.offset ?? 0)
    if (offset > 0) {
      b.confirmed = Math.max(b.confirmed, offset)
      b.queue = b.queue.filter((u) => u.update_id >= offset)
    } else if (offset < 0) b.queue = b.queue.slice(offset)
    if (Array.isArray(p.allowed_updates)) {
      b.allowedUpdates = [...p.allowed_updates]
      b.lastAllowedUpdates = [...p.allowed_updates]
    }
    poller.limit = Math.min(100, Math.max(1, Number(p.limit ?? 100) || 100))
    const timeout = Math.max(0, Number(p.timeout ?? 0) || 0)
    const ready = this.deliverable(b, poller.limit)
    if (ready.length > 0 || timeout === 0 || this.closed) {
      this.endPoll(poller, { ok: true, result: ready })
      return
    }
    b.poller = poller
    poller.timer = setTimeout(() => this.endPoll(poller, { ok: true, result: [] }), timeout * 1000)
    res.on('close', () => {
      if (poller.done) return
      poller.done = true
      call.aborted = true
      clearTimeout(poller.timer)
      if (b.poller === poller) b.poller = undefined
    })
  }

  private endPoll(p: Poller, o: Outcome): void {
    if (p.done) return
    p.done = true
    if (p.timer) clearTimeout(p.timer)
    if (p.bot.poller === p) p.bot.poller = undefined
    this.settle(p.call, o, false)
    writeOutcome(p.res, o)
  }

  // ─────────── method handlers ───────────

  private on(methods: string | string[], h: Handler): void {
    for (const m of Array.isArray(methods) ? methods : [methods]) this.handlers.set(lc(m), h)
  }

  private installHandlers(): void {
    this.on(TRUE_METHODS, () => true)
    this.on('getMe', (b) => b.info)

    // updates and webhooks
    this.on('setWebhook', (b, p) => {
      const url = String(p.url ?? '')
      if (p.secret_token !== undefined && !/^[A-Za-z0-9_-]{1,256}$/.test(String(p.secret_token))) {
        badRequest('secret token contains unallowed characters')
      }
      if (Array.isArray(p.allowed_updates)) {
        b.allowedUpdates = [...p.allowed_updates]
        b.lastAllowedUpdates = [...p.allowed_updates]
      }
      if (p.drop_pending_updates) b.queue = []
      if (!url) {
        b.webhook = undefined
        return true
      }
      if (b.poller)
        this.endPoll(b.poller, { ok: false, error: err(409, 'Conflict: terminated by setWebhook request') })
      b.webhook = {
        url,
        ...(p.secret_token !== undefined ? { secret_token: String(p.secret_token) } : {}),
        ...(Array.isArray(p.allowed_updates) ? { allowed_updates: [...p.allowed_updates] } : {}),
        ...(p.max_connections !== undefined ? { max_connections: Number(p.max_connections) } : {}),
      }
      return true
    })
    this.on('deleteWebhook', (b, p) => {
      b.webhook = undefined
      if (p.drop_pending_updates) b.queue = []
      return true
    })
    this.on('getWebhookInfo', (b) => ({
      url: b.webhook?.url ?? '',
      has_custom_certificate: false,
      pending_update_count: b.queue.length,
      ...(b.webhook?.max_connections ? { max_connections: b.webhook.max_connections } : {}),
      ...(b.lastAllowedUpdates ? { allowed_updates: b.lastAllowedUpdates } : {}),
    }))
    // A getUpdates that is not an HTTP long poll (webhook reply) just answers what is there.
    this.on('getUpdates', (b, p) => this.deliverable(b, Number(p.limit ?? 100)))

    // sending
    this.on('sendMessage', (b, p, c) => {
      if (p.text === undefined || p.text === null || String(p.text) === '') fail(TgErrors.textEmpty)
      const f = formatText(String(p.text), p.parse_mode, p.entities)
      if (f.text.trim() === '') fail(TgErrors.textEmpty)
      if (f.text.length > 4096) fail(TgErrors.textTooLong)
      return this.send(b, p, c, { text: f.text, ...(f.entities ? { entities: f.entities } : {}) })
    })
    const mediaSend = (
      method: string,
      build: (p: Record<string, any>) => Partial<Message>,
      captioned = true,
    ) =>
      this.on(method, (b, p, c) => {
        const content = build(p)
        if (captioned) Object.assign(content, this.caption(p))
        return this.send(b, p, c, content)
      })
    mediaSend('sendPhoto', (p) => ({ photo: this.photoFrom(p.photo) }))
    mediaSend('sendDocument', (p) => ({ document: this.documentFrom(p.document) }))
    mediaSend('sendVideo', (p) => ({
      video: {
        ...this.fileFrom(p.video, 'BAAC'),
        width: p.width ?? 1280,
        height: p.height ?? 720,
        duration: p.duration ?? 1,
      },
    }))
    mediaSend('sendAnimation', (p) => {
      const f = this.fileFrom(p.animation, 'CgAC')
      return {
        animation: { ...f, width: p.width ?? 320, height: p.height ?? 240, duration: p.duration ?? 1 },
        document: f,
      }
    })
    mediaSend('sendAudio', (p) => ({
      audio: {
        ...this.fileFrom(p.audio, 'CQAC'),
        duration: p.duration ?? 1,
        ...(p.title ? { title: p.title } : {}),
      },
    }))
    mediaSend('sendVoice', (p) => ({
      voice: { ...this.fileFrom(p.voice, 'AwAC'), duration: p.duration ?? 1, mime_type: 'audio/ogg' },
    }))
    mediaSend(
      'sendVideoNote',
      (p) => ({
        video_note: {
          ...this.fileFrom(p.video_note, 'DQAC'),
          length: p.length ?? 240,
          duration: p.duration ?? 1,
        },
      }),
      false,
    )
    mediaSend(
      'sendSticker',
      (p) => ({
        sticker: {
          ...this.fileFrom(p.sticker, 'CAAC'),
          type: 'regular',
          width: 512,
          height: 512,
          is_animated: false,
          is_video: false,
          ...(p.emoji ? { emoji: p.emoji } : {}),
        },
      }),
      false,
    )
    this.on('sendLocation', (b, p, c) =>
      this.send(b, p, c, { location: { latitude: Number(p.latitude), longitude: Number(p.longitude) } }),
    )
    this.on('sendVenue', (b, p, c) => {
      const location = { latitude: Number(p.latitude), longitude: Number(p.longitude) }
      return this.send(b, p, c, {
        location,
        venue: { location, title: String(p.title), address: String(p.address) },
      })
    })
    this.on('sendContact', (b, p, c) =>
      this.send(b, p, c, {
        contact: {
          phone_number: String(p.phone_number),
          first_name: String(p.first_name),
          ...(p.last_name ? { last_name: String(p.last_name) } : {}),
        },
      }),
    )
    this.on('sendPoll', (b, p, c) => {
      const poll = media.poll(
        String(p.question),
        (p.options ?? []).map((o: any) => (typeof o === 'string' ? o : String(o.text))),
      )
      return this.send(b, p, c, {
        poll: {
          ...poll,
          is_anonymous: p.is_anonymous ?? true,
          type: p.type ?? 'regular',
          allows_multiple_answers: Boolean(p.allows_multiple_answers),
        } as any,
      })
    })
    this.on('sendDice', (b, p, c) =>
      this.send(b, p, c, { dice: { emoji: p.emoji ?? '🎲', value: 1 + Math.floor(Math.random() * 6) } }),
    )
    this.on('sendInvoice', (b, p, c) => {
      const prices: { label: string; amount: number }[] = Array.isArray(p.prices) ? p.prices : []
      if (
        p.currency === 'XTR' &&
        (prices.length !== 1 || (p.provider_token ?? '') !== '' || p.max_tip_amount)
      ) {
        fail(TgErrors.starsInvoiceInvalid)
      }
      const payloadBytes = Buffer.byteLength(String(p.payload ?? ''), 'utf8')
      if (payloadBytes < 1 || payloadBytes > 128) fail(TgErrors.invoicePayloadInvalid)
      const title = String(p.title ?? '')
      const description = String(p.description ?? '')
      if (title.length < 1 || title.length > 32) badRequest('INVOICE_TITLE_INVALID')
      if (description.length < 1 || description.length > 255) badRequest('INVOICE_DESCRIPTION_INVALID')
      return this.send(b, p, c, {
        invoice: {
          title,
          description,
          start_parameter: String(p.start_parameter ?? ''),
          currency: String(p.currency),
          total_amount: prices.reduce((s, x) => s + Number(x.amount), 0),
        },
      })
    })
    this.on('createInvoiceLink', (_b, p) => {
      if (p.currency === 'XTR' && (!Array.isArray(p.prices) || p.prices.length !== 1))
        fail(TgErrors.starsInvoiceInvalid)
      // Stars subscriptions: 30 days only, XTR only, at most 10000 Stars a period.
      if (p.subscription_period !== undefined) {
        if (Number(p.subscription_period) !== 2592000) badRequest('SUBSCRIPTION_PERIOD_INVALID')
        if (p.currency !== 'XTR') badRequest('SUBSCRIPTION_CURRENCY_INVALID')
        if (Number(p.prices[0]?.amount) > 10000) badRequest('SUBSCRIPTION_PRICE_INVALID')
      }
      return `https://t.me/$stand-in-${++this.queryCounter}`
    })
    this.on('sendMediaGroup', (b, p, c) => {
      const items: any[] = Array.isArray(p.media) ? p.media : []
      if (items.length < 2 || items.length > 10) badRequest('wrong number of media items: must be 2-10')
      const group = `${Date.now()}${++this.queryCounter}`
      return items.map((item, i) => {
        const content: Partial<Message> =
          item.type === 'photo'
            ? { photo: this.photoFrom(item.media) }
            : item.type === 'document'
              ? { document: this.documentFrom(item.media) }
              : item.type === 'video'
                ? { video: { ...this.fileFrom(item.media, 'BAAC'), width: 1280, height: 720, duration: 1 } }
                : { audio: { ...this.fileFrom(item.media, 'CQAC'), duration: 1 } }
        Object.assign(content, this.caption(item), { media_group_id: group })
        // Only the first message checks topics/blocks; all share the reply target.
        return this.send(b, p, c, content, i > 0)
      })
    })
    // Streams a partial message into a private chat (Bot API: chat_id a private chat, draft_id non-zero, text
    // 0-4096 characters after entities parsing; an ephemeral preview, stored nowhere). Recorded like every call.
    this.on('sendMessageDraft', (b, p) => {
      const cs = this.targetChat(b, p.chat_id)
      if (cs.id <= 0) badRequest('TEXTDRAFT_PEER_INVALID')
      const draftId = Number(p.draft_id)
      if (!Number.isInteger(draftId) || draftId === 0) badRequest('draft_id must be non-zero')
      const f = formatText(String(p.text ?? ''), p.parse_mode, p.entities)
      if (f.text.length > 4096) fail(TgErrors.textTooLong)
      return true
    })
    this.on('sendChatAction', (b, p) => {
      const cs = this.targetChat(b, p.chat_id)
      this.checkThread(cs, p.message_thread_id, b)
      return true
    })

    // copying and forwarding
    this.on('copyMessage', (b, p, c) => {
      const src = this.sourceMessage(p.from_chat_id, p.message_id, 'copy')
      const content: Partial<Message> = src ? this.contentOf(src.message) : {}
      if (p.caption !== undefined) Object.assign(content, this.caption(p))
      if (p.remove_caption) {
        delete content.caption
        delete content.caption_entities
      }
      const m = this.send(b, p, c, content, false, {
        chat_id: Number(p.from_chat_id),
        message_id: Number(p.message_id),
      })
      return { message_id: m.message_id } satisfies MessageId
    })
    this.on(['copyMessages', 'forwardMessages'], (b, p, c) => {
      const ids: number[] = (Array.isArray(p.message_ids) ? p.message_ids : []).map(Number)
      if (ids.length < 1 || ids.length > 100) badRequest('message_ids must contain 1-100 identifiers')
      for (let i = 1; i < ids.length; i++) if (ids[i]! <= ids[i - 1]!) fail(TgErrors.idsNotIncreasing)
      const forward = lc(c.method) === 'forwardmessages'
      const groups = new Map<string, string>()
      const out: MessageId[] = []
      let first = true
      for (const id of ids) {
        const src = this.sourceMessage(p.from_chat_id, id, forward ? 'forward' : 'copy', true)
        if (src === null) continue
        const content: Partial<Message> = src ? this.contentOf(src.message) : {}
        const g = src?.message.media_group_id
        if (g) {
          if (!groups.has(g)) groups.set(g, `${Date.now()}${++this.queryCounter}`)
          content.media_group_id = groups.get(g)!
        }
        if (forward && src) Object.assign(content, this.forwardOrigin(src.message))
        if (p.remove_caption) delete content.caption
        const m = this.send(b, p, c, content, !first, { chat_id: Number(p.from_chat_id), message_id: id })
        first = false
        out.push({ message_id: m.message_id })
      }
      if (out.length === 0) fail(forward ? TgErrors.messageToForwardNotFound : TgErrors.messageToCopyNotFound)
      return out
    })
    this.on('forwardMessage', (b, p, c) => {
      const src = this.sourceMessage(p.from_chat_id, p.message_id, 'forward')
      const content: Partial<Message> = src
        ? { ...this.contentOf(src.message), ...this.forwardOrigin(src.message) }
        : {}
      return this.send(b, p, c, content, false, {
        chat_id: Number(p.from_chat_id),
        message_id: Number(p.message_id),
      })
    })

    // editing and deleting
    this.on('editMessageText', (b, p) => {
      const f = formatText(String(p.text ?? ''), p.parse_mode, p.entities)
      if (f.text.trim() === '') fail(TgErrors.textEmpty)
      if (f.text.length > 4096) fail(TgErrors.textTooLong)
      return this.edit(b, p, (m) => {
        if (m.text === undefined) badRequest('there is no text in the message to edit')
        return { text: f.text, entities: f.entities }
      })
    })
    this.on('editMessageCaption', (b, p) => {
      const cap = this.caption(p)
      return this.edit(b, p, () => ({ caption: cap.caption, caption_entities: cap.caption_entities }))
    })
    this.on('editMessageReplyMarkup', (b, p) => this.edit(b, p, () => ({})))
    this.on('editMessageMedia', (b, p) => {
      const item = p.media ?? {}
      return this.edit(b, p, () => ({
        ...(item.type === 'photo'
          ? { photo: this.photoFrom(item.media) }
          : { document: this.documentFrom(item.media) }),
        ...this.caption(item),
      }))
    })
    this.on('deleteMessage', (_b, p) => {
      const sm = this.chats.get(Number(p.chat_id))?.messages.get(Number(p.message_id))
      if (!sm || sm.deleted) fail(TgErrors.messageToDeleteNotFound)
      sm!.deleted = true
      return true
    })
    this.on('deleteMessages', (_b, p) => {
      const cs = this.chats.get(Number(p.chat_id))
      for (const id of p.message_ids ?? []) {
        const sm = cs?.messages.get(Number(id))
        if (sm) sm.deleted = true
      }
      return true
    })

    // forum topics
    this.on('createForumTopic', (b, p) => {
      const chatId = Number(p.chat_id)
      if (chatId > 0 && b.privateTopics === 'off') fail(TgErrors.notAForum)
      if (chatId > 0 && b.privateTopics === 'broken') fail(TgErrors.botForumCreateForbidden)
      const cs = chatId > 0 ? this.targetChat(b, chatId) : this.chatState(chatId)
      const name = String(p.name ?? '')
      if (name.length < 1 || name.length > 128) badRequest('TOPIC_TITLE_EMPTY')
      const t = this.newTopic(
        cs,
        name,
        Number(p.icon_color ?? TOPIC_ICON_COLORS[0]),
        p.icon_custom_emoji_id,
        b.id,
      )
      const topic: ForumTopic = {
        message_thread_id: t.message_thread_id,
        name: t.name,
        icon_color: t.icon_color,
      }
      if (t.icon_custom_emoji_id) topic.icon_custom_emoji_id = t.icon_custom_emoji_id
      return topic
    })
    const liveTopic = (p: Record<string, any>): TopicState => {
      const t = this.topicState(this.chatState(Number(p.chat_id)), Number(p.message_thread_id))
      if (t.deleted) fail(TgErrors.topicIdInvalid)
      return t
    }
    this.on('editForumTopic', (_b, p) => {
      const t = liveTopic(p)
      const name = p.name === undefined ? t.name : String(p.name)
      const emoji =
        p.icon_custom_emoji_id === undefined ? t.icon_custom_emoji_id : String(p.icon_custom_emoji_id)
      if (name === t.name && emoji === t.icon_custom_emoji_id) fail(TgErrors.topicNotModified)
      t.name = name
      if (emoji) t.icon_custom_emoji_id = emoji
      return true
    })
    this.on('closeForumTopic', (_b, p) => {
      const t = liveTopic(p)
      if (t.closed) fail(TgErrors.topicNotModified)
      t.closed = true
      return true
    })
    this.on('reopenForumTopic', (_b, p) => {
      const t = liveTopic(p)
      if (!t.closed) fail(TgErrors.topicNotModified)
      t.closed = false
      return true
    })
    this.on('deleteForumTopic', (_b, p) => {
      const t = liveTopic(p)
      t.deleted = true
      this.markThreadDeleted(this.chatState(Number(p.chat_id)), t.message_thread_id)
      return true
    })
    this.on('getForumTopicIconStickers', () => [])

    // queries and payments
    const answer = (b: BotState, id: unknown, kind: 'callback' | 'pre_checkout', limitMs?: number) => {
      const q = b.queries.get(String(id))
      if (!q) return
      if (q.answered || (limitMs !== undefined && Date.now() - q.pushedAt > limitMs))
        fail(TgErrors.queryTooOld)
      if (q.kind !== kind) fail(TgErrors.queryTooOld)
      q.answered = true
    }
    this.on('answerCallbackQuery', (b, p) => {
      answer(b, p.callback_query_id, 'callback')
      return true
    })
    this.on('answerPreCheckoutQuery', (b, p) => {
      if (p.ok === false && !p.error_message) badRequest('error_message is required when ok is false')
      answer(b, p.pre_checkout_query_id, 'pre_checkout', this.opts.preCheckoutTimeoutMs)
      return true
    })
    this.on('refundStarPayment', (b, p) => {
      const charge = String(p.telegram_payment_charge_id ?? '')
      if (!charge) badRequest('telegram_payment_charge_id is empty')
      if (b.refunded.has(charge)) fail(TgErrors.chargeAlreadyRefunded)
      const paid = b.starTransactions.find((t) => t.id === charge && t.source)
      if (b.starTransactions.length > 0 && !paid) fail(TgErrors.chargeNotFound)
      b.refunded.add(charge)
      if (paid) {
        const user = this.users.get(Number(p.user_id)) ?? {
          id: Number(p.user_id),
          is_bot: false,
          first_name: 'User',
        }
        b.starTransactions.push({
          id: charge,
          amount: paid.amount,
          date: now(),
          receiver: { type: 'user', transaction_type: 'invoice_payment', user },
        })
      }
      return true
    })
    this.on('getStarTransactions', (b, p) => {
      const offset = Number(p.offset ?? 0)
      const limit = Math.min(100, Math.max(1, Number(p.limit ?? 100)))
      return { transactions: b.starTransactions.slice(offset, offset + limit) }
    })
    // Stars subscriptions: the bot cancels or resumes a user's renewal by the subscription's charge id.
    this.on('editUserStarSubscription', (b, p) => {
      const charge = String(p.telegram_payment_charge_id ?? '')
      if (!charge) badRequest('telegram_payment_charge_id is empty')
      if (typeof p.is_canceled !== 'boolean' && p.is_canceled !== 'true' && p.is_canceled !== 'false')
        badRequest('is_canceled is required')
      b.starSubscriptions.set(charge, {
        userId: Number(p.user_id),
        canceled: p.is_canceled === true || p.is_canceled === 'true',
      })
      return true
    })
    this.on('getMyStarBalance', (b) => ({
      amount: b.starTransactions.reduce((s, t) => s + (t.source ? t.amount : -t.amount), 0),
    }))

    // chats and members
    this.on('getChat', (b, p) => {
      const cs = this.chatState(this.chatIdOf(p.chat_id))
      // A group the bot left or was removed from: Telegram refuses to describe it.
      const mine = cs.id < 0 ? cs.members.get(b.id)?.status : undefined
      if (mine === 'left' || mine === 'kicked') fail(TgErrors.kicked)
      return this.fullChat(cs)
    })
    // The bot leaves a group: from now on it is not a member there.
    this.on('leaveChat', (b, p) => {
      const cs = this.chatState(this.chatIdOf(p.chat_id))
      cs.members.set(b.id, { status: 'left', user: this.botUser(b.id) })
      return true
    })
    this.on('getChatMember', (b, p) => this.member(b, this.chatIdOf(p.chat_id), Number(p.user_id)))
    this.on('getChatAdministrators', (b, p) => {
      const cs = this.chatState(this.chatIdOf(p.chat_id))
      const admins = [...cs.members.values()].filter(
        (m) => m.status === 'administrator' || m.status === 'creator',
      )
      return [this.member(b, cs.id, b.id), ...admins.filter((m) => m.user.id !== b.id)]
    })
    this.on('getChatMemberCount', (_b, p) =>
      Math.max(2, this.chatState(this.chatIdOf(p.chat_id)).members.size),
    )
    this.on('getChatMenuButton', () => ({ type: 'commands' }))
    this.on('getMyName', (b) => ({ name: b.info.first_name }))
    this.on(['getMyDescription'], () => ({ description: '' }))
    this.on(['getMyShortDescription'], () => ({ short_description: '' }))

    // commands
    const commandKey = (p: Record<string, any>) =>
      `${JSON.stringify(p.scope ?? { type: 'default' })}|${p.language_code ?? ''}`
    this.on('setMyCommands', (b, p) => {
      const commands: BotCommand[] = Array.isArray(p.commands) ? p.commands : []
      if (commands.length > 100) badRequest('too many commands')
      const scope = (p.scope ?? { type: 'default' }) as Record<string, unknown>
      const known = ['default', 'all_private_chats', 'all_group_chats', 'all_chat_administrators']
      if (['chat', 'chat_administrators', 'chat_member'].includes(String(scope.type))) {
        if (scope.chat_id === undefined) badRequest('chat_id is empty')
        // A private chat exists once the user wrote to the bot; chat_member covers members of groups only.
        if (Number(scope.chat_id) > 0 && !this.chats.has(Number(scope.chat_id))) fail(TgErrors.chatNotFound)
        if (scope.type === 'chat_member' && (Number(scope.chat_id) > 0 || scope.user_id === undefined))
          badRequest('invalid bot command scope')
      } else if (!known.includes(String(scope.type))) badRequest('invalid bot command scope')
      for (const cmd of commands) {
        if (!/^[a-z0-9_]{1,32}$/.test(cmd.command)) badRequest('BOT_COMMAND_INVALID')
        if (!cmd.description || cmd.description.length > 256) badRequest('BOT_COMMAND_DESCRIPTION_INVALID')
      }
      b.commands.set(commandKey(p), commands)
      return true
    })
    this.on('getMyCommands', (b, p) => b.commands.get(commandKey(p)) ?? [])
    this.on('deleteMyCommands', (b, p) => {
      b.commands.delete(commandKey(p))
      return true
    })

    // files
    this.on('getFile', (_b, p) => {
      const id = String(p.file_id ?? '')
      if (!id) badRequest('file_id is empty')
      const f = this.fileStore.get(id)
      return {
        file_id: id,
        file_unique_id: `U${id.slice(0, 12)}`,
        file_size: f?.size ?? 1024,
        file_path: `files/${id}`,
      }
    })
  }

  // ─────────── handler helpers ───────────

  private chatIdOf(raw: unknown): number {
    if (raw === undefined || raw === null || raw === '') badRequest('chat_id is empty')
    if (typeof raw === 'string' && raw.startsWith('@')) {
      for (const cs of this.chats.values())
        if ('username' in cs.chat && `@${cs.chat.username}` === raw) return cs.id
      fail(TgErrors.chatNotFound)
    }
    const id = Number(raw)
    if (!Number.isFinite(id)) fail(TgErrors.chatNotFound)
    return id
  }

  /** The chat a send goes to, after the blocked check. */
  private targetChat(b: BotState, rawChatId: unknown): ChatState {
    const cs = this.chatState(this.chatIdOf(rawChatId))
    if (cs.blocked.has('*') || cs.blocked.has(b.id)) {
      fail(cs.id > 0 ? TgErrors.blocked : TgErrors.kicked)
    }
    return cs
  }

  private checkThread(cs: ChatState, rawThread: unknown, b?: BotState): number | undefined {
    if (rawThread === undefined || rawThread === null || rawThread === '') return undefined
    const thread = Number(rawThread)
    const t = cs.topics.get(thread)
    // A private chat has only the topics the bot created there, and none while private topics are off or broken.
    if (cs.id > 0 && (!t || b?.privateTopics !== 'on')) fail(TgErrors.threadNotFound)
    if (t?.deleted) fail(TgErrors.threadNotFound)
    if (t?.closed) fail(TgErrors.topicClosed)
    return thread
  }

  /** Store and return a message the bot sends. */
  private send(
    b: BotState,
    p: Record<string, any>,
    call: RecordedCall,
    content: Partial<Message>,
    skipChecks = false,
    source?: { chat_id: number; message_id: number },
  ): Message {
    const cs = this.targetChat(b, p.chat_id)
    let thread = skipChecks
      ? p.message_thread_id === undefined
        ? undefined
        : Number(p.message_thread_id)
      : this.checkThread(cs, p.message_thread_id, b)
    const replyId = p.reply_parameters?.message_id ?? p.reply_to_message_id
    const replyChat =
      p.reply_parameters?.chat_id === undefined ? cs.id : this.chatIdOf(p.reply_parameters.chat_id)
    let replyTo: Message | undefined
    if (replyId !== undefined && replyId !== null) {
      const target = this.chats.get(replyChat)?.messages.get(Number(replyId))
      const allowMissing = p.reply_parameters?.allow_sending_without_reply ?? p.allow_sending_without_reply
      if ((!target || target.deleted) && !allowMissing) fail(TgErrors.replyNotFound)
      if (target && !target.deleted && replyChat === cs.id) {
        replyTo = this.replyTarget(cs, target.message)
        if (thread === undefined && target.message.is_topic_message && target.message.message_thread_id) {
          thread = target.message.message_thread_id
          if (!skipChecks) this.checkThread(cs, thread, b)
        }
      }
    }
    const message = {
      message_id: this.nextMessageId(cs),
      from: this.botUser(b.id),
      date: now(),
      chat: cs.chat,
      ...(thread !== undefined
        ? { message_thread_id: thread, ...(cs.id < 0 ? { is_topic_message: true } : {}) }
        : {}),
      ...(replyTo ? { reply_to_message: replyTo } : {}),
      ...content,
      ...(p.reply_markup?.inline_keyboard ? { reply_markup: p.reply_markup } : {}),
      ...(p.protect_content ? { has_protected_content: true } : {}),
    } as Message
    const meta: Partial<StoredMessage> & { outgoing: boolean } = {
      outgoing: true,
      botId: b.id,
      method: call.method,
      seq: call.seq,
      payload: p,
    }
    if (source) meta.source = source
    this.remember(message, meta)
    return message
  }

  private caption(p: Record<string, any>): Partial<Message> {
    if (p.caption === undefined || p.caption === null) return {}
    const f = formatText(String(p.caption), p.parse_mode, p.caption_entities)
    if (f.text.length > 1024) fail(TgErrors.captionTooLong)
    return { caption: f.text, ...(f.entities ? { caption_entities: f.entities } : {}) }
  }

  private fileFrom(
    input: unknown,
    prefix: string,
  ): { file_id: string; file_unique_id: string; file_size?: number } {
    if (isRecordedFile(input)) {
      const ids = newFileIds(prefix)
      this.fileStore.set(ids.file_id, { size: input.size, ...(input.data ? { data: input.data } : {}) })
      return { ...ids, file_size: input.size }
    }
    if (typeof input === 'string' && input !== '' && !/^https?:\/\//.test(input)) {
      return { file_id: input, file_unique_id: `U${input.slice(0, 12)}` }
    }
    if (typeof input === 'string' && input !== '') return { ...newFileIds(prefix), file_size: 1024 }
    return badRequest('there is no file in the request')
  }

  private photoFrom(input: unknown): PhotoSize[] {
    const f = this.fileFrom(input, 'AgAC')
    return [
      { file_id: `${f.file_id}_s`, file_unique_id: `${f.file_unique_id}s`, width: 90, height: 68 },
      { ...f, width: 1280, height: 960 },
    ]
  }

  private documentFrom(input: unknown) {
    const f = this.fileFrom(input, 'BQAC')
    const name = isRecordedFile(input) ? input.filename : undefined
    return {
      ...f,
      ...(name ? { file_name: name } : {}),
      ...(isRecordedFile(input) && input.contentType && input.contentType !== 'application/octet-stream'
        ? { mime_type: input.contentType }
        : {}),
    }
  }

  /**
   * The message a copy/forward reads from. undefined: unknown to the stand-in (allowed, content unknown);
   * null (only with `skipMissing`): known-missing, skipped like copyMessages does.
   */
  private sourceMessage(
    rawChat: unknown,
    rawId: unknown,
    kind: 'copy' | 'forward',
    skipMissing = false,
  ): StoredMessage | null | undefined {
    const cs = this.chats.get(this.chatIdOf(rawChat))
    const sm = cs?.messages.get(Number(rawId))
    const notFound = kind === 'copy' ? TgErrors.messageToCopyNotFound : TgErrors.messageToForwardNotFound
    if (!sm) return undefined
    if (sm.deleted) return skipMissing ? null : fail(notFound)
    const m = sm.message as unknown as Record<string, unknown>
    if (UNCOPYABLE_KEYS.some((k) => m[k] !== undefined))
      return skipMissing ? null : fail(TgErrors.messageCantBeCopied)
    if (m.has_protected_content) return skipMissing ? null : fail(TgErrors.protectedContent)
    return sm
  }

  private contentOf(m: Message): Partial<Message> {
    const out: Record<string, unknown> = {}
    const src = m as unknown as Record<string, unknown>
    for (const k of CONTENT_KEYS) if (src[k] !== undefined) out[k] = src[k]
    return out as Partial<Message>
  }

  private forwardOrigin(m: Message): Partial<Message> {
    const origin =
      m.sender_chat && m.sender_chat.type === 'channel'
        ? { type: 'channel', chat: m.sender_chat, message_id: m.message_id, date: m.date }
        : m.sender_chat
          ? { type: 'chat', sender_chat: m.sender_chat, date: m.date }
          : { type: 'user', sender_user: m.from, date: m.date }
    return { forward_origin: origin as Message['forward_origin'] }
  }

  private edit(
    b: BotState,
    p: Record<string, any>,
    change: (m: Message) => Partial<Message>,
  ): Message | true {
    if (p.inline_message_id !== undefined) return true
    const cs = this.chats.get(this.chatIdOf(p.chat_id))
    const sm = cs?.messages.get(Number(p.message_id))
    if (!cs || !sm || sm.deleted) return fail(TgErrors.messageToEditNotFound)
    if (!sm.outgoing || (sm.botId !== undefined && sm.botId !== b.id)) fail(TgErrors.messageCantBeEdited)
    const before = sm.message
    const patch = change(before)
    const next = { ...before, ...patch } as Message & Record<string, unknown>
    for (const [k, v] of Object.entries(patch)) if (v === undefined) delete next[k]
    if (p.reply_markup?.inline_keyboard) next.reply_markup = p.reply_markup
    else delete next.reply_markup
    const same = (k: string) => JSON.stringify((before as any)[k]) === JSON.stringify(next[k])
    if (
      ['text', 'entities', 'caption', 'caption_entities', 'photo', 'document', 'reply_markup'].every(same)
    ) {
      fail(TgErrors.notModified)
    }
    next.edit_date = now()
    sm.message = next
    sm.edited = true
    return next
  }

  private fullChat(cs: ChatState): ChatFullInfo {
    return {
      ...cs.chat,
      accent_color_id: 0,
      max_reaction_count: 11,
      accepted_gift_types: {
        unlimited_gifts: false,
        limited_gifts: false,
        unique_gifts: false,
        premium_subscription: false,
        gifts_from_channels: false,
      },
    } as unknown as ChatFullInfo
  }

  private member(b: BotState, chatId: number, userId: number): ChatMember {
    const cs = this.chatState(chatId)
    const set = cs.members.get(userId)
    if (set) return set
    if (userId === b.id && chatId < 0) {
      return {
        status: 'administrator',
        user: this.botUser(b.id),
        can_be_edited: false,
        is_anonymous: false,
        can_manage_chat: true,
        can_delete_messages: true,
        can_manage_video_chats: false,
        can_restrict_members: false,
        can_promote_members: false,
        can_change_info: false,
        can_invite_users: true,
        can_post_stories: false,
        can_edit_stories: false,
        can_delete_stories: false,
        can_pin_messages: true,
        can_manage_topics: true,
        can_send_welcome_messages: false,
      }
    }
    const user = this.users.get(userId) ?? { id: userId, is_bot: false, first_name: 'User' }
    return { status: 'member', user }
  }
}

/** Start the stand-in on 127.0.0.1 with a random port. */
export async function startBotApi(opts: StartOptions = {}): Promise<BotApiStandIn> {
  let api: BotApiStandIn | undefined
  const server = createServer((req, res) => {
    api!.handle(req, res).catch((e) => {
      console.error('[bot-api stand-in] request failed:', e)
      if (!res.headersSent)
        writeJson(res, 500, { ok: false, error_code: 500, description: 'Internal Server Error' })
      else res.destroy()
    })
  })
  server.keepAliveTimeout = 5_000
  const host = opts.host ?? '127.0.0.1'
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const { port } = server.address() as AddressInfo
  api = new BotApiStandIn(server, `http://${host}:${port}`, opts)
  return api
}
