import { AsyncLocalStorage } from 'node:async_hooks'
import { createHash, randomUUID } from 'node:crypto'
import type { Transformer } from 'grammy'
import type pg from 'pg'
import type { AppConfig } from '../config/schema'
import { JobDeferred } from '../jobs/queue'

/**
 * Telegram's limits as one budget per limit, shared by every process of a deployment through PostgreSQL (the only
 * state the processes share). Before each call that Telegram counts, one statement (tg_budget_take) claims room in
 * every budget the call falls under, all or none; without room the call waits (in this process, holding nothing in
 * the database) and asks again. A 429 that still happens (another bot on the token, Telegram's own judgement) blocks
 * the key for retry_after in every process (tg_budget_block). README "Telegram's limits" says what counts and why.
 *
 * Budgets (per bot: Telegram's limits are per bot token):
 * - `bot:<bot>`: every counted call (about 30 a second overall);
 * - `chat:<bot>:<chat>`: a group (20 a minute, all topics together) or a private chat (about 1 a second, short
 *   bursts allowed), for calls that put something into that chat.
 *
 * In a group the budget is also a waiting room (priorities and round robin, see SendContext).
 */

export type TelegramLimits = AppConfig['telegramLimits']

/** Who is sending, for the group's waiting room: set by the lanes around their calls (withSendContext). */
export interface SendContext {
  /** Turns are taken per lane: one consultation's direction ('c:<id>:in'). */
  lane: string
  /**
   * Lowest first (src/routing/fairness.ts): 0 SLA reminders and a priority plan's new question, 1 any other new
   * question, 2 everything else (the default).
   */
  priority: number
  /**
   * Longer waits than this throw BudgetWait instead of waiting: a lane into private chats gives its worker up while
   * one client's window is closed, and comes back when it opens (other clients' answers go meanwhile).
   */
  maxWaitSeconds?: number
  /**
   * A job's context: maxWaitSeconds holds only until the job's first call Telegram accepted. A job written again
   * after a BudgetWait runs from its start, so one that has already sent something (a note, then a topic rename)
   * would send it twice: from then on its calls wait in the worker as before (bounded by that one job's own calls).
   */
  deferOnlyBeforeFirstSend?: boolean
  /** Set once a call of this context that Telegram counts was accepted. */
  sent?: boolean
}

/** The context may give its worker up instead of waiting `w` seconds. */
function mayDefer(ctx: SendContext | undefined, w: number): boolean {
  if (ctx?.maxWaitSeconds === undefined || w <= ctx.maxWaitSeconds) return false
  return !(ctx.deferOnlyBeforeFirstSend && ctx.sent)
}

/**
 * The budget has no room for this call for `seconds` (more than the send context's maxWaitSeconds), or Telegram
 * answered 429 with a longer retry_after. A job that lets it escape is written again for then (JobDeferred,
 * src/jobs/jobs.ts); a lane catches it and re-schedules itself.
 */
export class BudgetWait extends JobDeferred {
  override name = 'BudgetWait'
  constructor(seconds: number) {
    super(seconds, `Telegram budget: no room for ${seconds.toFixed(2)} s`)
  }
}

/**
 * In a job, a call waits in its worker at most this long for the budget (the bot's own window frees within a
 * fraction of a second); a longer wait is one chat's window (a private chat's 3 per 3 s, a group's 20 a minute):
 * the job gives its worker up (BudgetWait) and is written again for when the window opens. Scaled with the windows
 * (telegramLimits.windowScale: tests and benchmarks run them shorter).
 */
export const JOB_MAX_WAIT_SECONDS = 0.4

/**
 * The send context of a job's calls: a lane of its own, named by the job's queue and payload so that the same job
 * written again after a BudgetWait keeps its place in a group's waiting room (its waiter row stays; a waiter that
 * does not come back within the stale time is passed over).
 */
export function jobSendContext(queue: string, data: unknown, windowScale = 1): SendContext {
  const { trace_id: _trace, ...rest } = (data ?? {}) as Record<string, unknown>
  const digest = createHash('sha1').update(JSON.stringify(rest)).digest('base64url').slice(0, 16)
  return {
    lane: `j:${queue}:${digest}`,
    priority: PRIORITY_NORMAL,
    maxWaitSeconds: JOB_MAX_WAIT_SECONDS * Math.min(1, windowScale),
    deferOnlyBeforeFirstSend: true,
  }
}

export const PRIORITY_URGENT = 0
export const PRIORITY_QUESTION = 1
export const PRIORITY_NORMAL = 2

const context = new AsyncLocalStorage<SendContext>()

/** Runs fn with the send context its Telegram calls queue under. */
export function withSendContext<T>(ctx: SendContext, fn: () => Promise<T>): Promise<T> {
  return context.run(ctx, fn)
}

/**
 * Runs fn's Telegram calls without ever waiting for a budget: a call whose chat (or the bot) has no room right now
 * throws BudgetWait at once, before anything is claimed or sent, and this returns 'skipped'. For updates that may be
 * left out (a streamed draft's next text: the following one carries it), never for a message that must arrive.
 */
export async function unlessBusy<T>(lane: string, fn: () => Promise<T>): Promise<T | 'skipped'> {
  try {
    return await withSendContext({ lane, priority: PRIORITY_NORMAL, maxWaitSeconds: 0 }, fn)
  } catch (err) {
    if (err instanceof BudgetWait) return 'skipped'
    throw err
  }
}

/** Calls that put a message (or a service message) into a chat: against the bot's and the chat's budget. */
const CHAT_METHODS = new Set([
  'sendMessage',
  'sendPhoto',
  'sendVideo',
  'sendAnimation',
  'sendAudio',
  'sendDocument',
  'sendSticker',
  'sendVoice',
  'sendVideoNote',
  'sendLocation',
  'sendVenue',
  'sendContact',
  'sendPoll',
  'sendDice',
  'sendInvoice',
  'sendPaidMedia',
  'sendMediaGroup',
  // A streamed draft's update (private chats only): counted like a message into that chat.
  'sendMessageDraft',
  'copyMessage',
  'copyMessages',
  'forwardMessage',
  'forwardMessages',
  // Edits: Telegram counts them in groups (an edit is re-delivered to every member); kept in the chat's budget.
  'editMessageText',
  'editMessageCaption',
  'editMessageMedia',
  'editMessageReplyMarkup',
  // Topic calls and pins post a service message into the group.
  'createForumTopic',
  'editForumTopic',
  'closeForumTopic',
  'reopenForumTopic',
  'pinChatMessage',
])

/** Calls that change nothing anyone reads as a message: only against the bot's overall budget. */
const BOT_METHODS = new Set([
  'setMessageReaction',
  'deleteMessage',
  'deleteMessages',
  'unpinChatMessage',
  'deleteForumTopic',
])

/** How many messages a call puts into the chat. */
export function weightOf(method: string, payload: Record<string, unknown>): number {
  if (method === 'copyMessages' || method === 'forwardMessages')
    return Math.max(1, (payload.message_ids as unknown[] | undefined)?.length ?? 1)
  if (method === 'sendMediaGroup') return Math.max(1, (payload.media as unknown[] | undefined)?.length ?? 1)
  return 1
}

interface Key {
  key: string
  /** A group's budget: the waiting room with priorities and turns. */
  fair: boolean
  limit: number
  seconds: number
  weight: number
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const t = setTimeout(resolve, ms)
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(t)
        reject(signal.reason)
      },
      { once: true },
    )
  })

/** Longest sleep between two asks: a waiter that stops asking for longer is passed over (STALE_SECONDS). */
const MAX_SLEEP_MS = 1000
const STALE_SECONDS = 3
/** Room but another lane's turn: ask again soon (that lane takes it within milliseconds). */
const TURN_SLEEP_MS = 60

export class TelegramBudget {
  private readonly scope: string

  constructor(
    private readonly pool: pg.Pool,
    private readonly limits: TelegramLimits,
  ) {
    this.scope = limits.perProcess ? `:p${process.pid}:${randomUUID().slice(0, 8)}` : ''
  }

  /** The keys a call counts against; empty when Telegram does not count it. */
  keysFor(botId: number, method: string, payload: Record<string, unknown>): Key[] {
    const chatMethod = CHAT_METHODS.has(method)
    if (!chatMethod && !BOT_METHODS.has(method)) return []
    const l = this.limits
    const scale = l.windowScale
    const margin = l.marginMs / 1000
    const weight = weightOf(method, payload)
    const keys: Key[] = [
      {
        key: `bot:${botId}${this.scope}`,
        fair: false,
        // Calls that put no message anywhere (the 👀 receipts) yield to those that do: they are granted only while
        // half of the bot's window is free, so a backlog of receipts never takes the answers' room.
        limit: chatMethod ? l.bot.count : Math.max(1, Math.ceil(l.bot.count / 2)),
        seconds: l.bot.seconds * scale + margin,
        weight,
      },
    ]
    const chat = payload.chat_id
    if (chatMethod && (typeof chat === 'number' || typeof chat === 'string')) {
      const group = typeof chat === 'string' || chat < 0
      const b = group ? l.group : l.chat
      keys.push({
        key: `chat:${botId}:${chat}${this.scope}`,
        fair: group,
        limit: b.count,
        seconds: b.seconds * scale + margin,
        weight,
      })
    }
    // A call heavier than a whole window (an album of 10 into a private chat's 3) could never be granted: it takes
    // the whole window instead, and a 429 that may still follow is honoured (retry_after) like any other.
    for (const k of keys) k.weight = Math.min(k.weight, k.limit)
    return keys
  }

  /**
   * Waits until the call has room in all its budgets and claims it; `token` marks the claim for settle() once
   * Telegram has answered.
   */
  async take(keys: Key[], signal?: AbortSignal, token: string | null = null): Promise<void> {
    if (keys.length === 0) return
    const fair = keys.find((k) => k.fair)
    const ctx = context.getStore()
    // A call outside any lane (a notification, a command's reply) is a lane of its own for the turn it waits.
    const lane = ctx?.lane ?? `x:${randomUUID()}`
    const priority = ctx?.priority ?? PRIORITY_NORMAL
    for (;;) {
      const r = await this.pool.query<{ w: number }>({
        name: 'tg_budget_take',
        text: 'select tg_budget_take($1, $2, $3, $4, $5, $6, $7, $8, $9) as w',
        values: [
          keys.map((k) => k.key),
          keys.map((k) => k.limit),
          keys.map((k) => k.seconds),
          keys.map((k) => k.weight),
          fair?.key ?? null,
          lane,
          priority,
          STALE_SECONDS,
          token,
        ],
      })
      const w = Number(r.rows[0]!.w)
      if (w === 0) return
      if (w > 0 && mayDefer(ctx, w)) throw new BudgetWait(w)
      await sleep(w < 0 ? TURN_SLEEP_MS : Math.min(MAX_SLEEP_MS, Math.ceil(w * 1000) + 2), signal)
    }
  }

  /** Another lane (of any process) is waiting for this chat's budget right now. */
  async othersWaiting(botId: number, chatId: number, lane: string): Promise<boolean> {
    if (!this.limits.enabled) return false
    const r = await this.pool.query<{ w: boolean }>({
      name: 'tg_budget_others_waiting',
      text: `select exists (select 1 from tg_budget_waiter where key = $1 and waiting and lane <> $2
               and seen_at > clock_timestamp() - make_interval(secs => $3)) as w`,
      values: [`chat:${botId}:${chatId}${this.scope}`, lane, STALE_SECONDS],
    })
    return r.rows[0]!.w
  }

  /**
   * Telegram has answered the call claimed with `token`: its sends count from now on (minus the margin the windows
   * carry), not from the grant (tg_budget_settle.sql). Not awaited by the caller: until it lands the claim only
   * counts for longer, which is safe.
   */
  async settle(keys: Key[], token: string): Promise<void> {
    await this.pool.query({
      name: 'tg_budget_settle',
      text: 'select tg_budget_settle($1, $2, $3)',
      values: [keys.map((k) => k.key), token, this.limits.marginMs / 1000],
    })
  }

  /** Telegram said 429: every process waits retry_after on that key. */
  async block(key: string, seconds: number): Promise<void> {
    await this.pool.query({
      name: 'tg_budget_block',
      text: 'select tg_budget_block($1, $2)',
      values: [key, seconds],
    })
  }

  /** The grammY transformer for one bot's Api: take before the call, feed a 429 back. */
  transformer(botId: number): Transformer {
    return async (prev, method, payload, signal) => {
      if (!this.limits.enabled) return prev(method, payload, signal)
      const keys = this.keysFor(botId, method, (payload ?? {}) as Record<string, unknown>)
      const token = keys.length > 0 ? randomUUID() : null
      await this.take(keys, signal as AbortSignal | undefined, token)
      let res: Awaited<ReturnType<typeof prev>>
      try {
        res = await prev(method, payload, signal)
      } finally {
        // Answered (or failed): the call has reached Telegram by now if it ever will. A settle that fails (the
        // database away) leaves the claim counting from the grant plus the margin, as before.
        if (token) this.settle(keys, token).catch(() => {})
      }
      if (!res.ok && res.error_code === 429) {
        const retry = res.parameters?.retry_after ?? 1
        const key = keys[1]?.key ?? keys[0]?.key ?? `bot:${botId}${this.scope}`
        await this.block(key, retry)
        // In a job (or a lane into private chats): no sleeping out retry_after in the worker (auto-retry would);
        // the job comes back when the key is free again.
        if (mayDefer(context.getStore(), retry)) throw new BudgetWait(retry)
      }
      if (res.ok && keys.length > 0) {
        const ctx = context.getStore()
        if (ctx) ctx.sent = true
      }
      return res
    }
  }
}
