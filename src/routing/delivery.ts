// Longer than the house's ~400 lines on purpose: this file is the lane's run and nothing else: what is sent when,
// and what each failure means for the same item. The lease is lanes.ts, notes notes.ts, the 403 path blocked.ts,
// the topic topics.ts, the copies (single, album, batched) copies.ts, the anti-flood digest digest.ts, mirrored
// edits and receipts mirror.ts. LaneRun's steps share one lease, one route and one recovery count per run; split
// further, "which item is retried after a topic recovery" would no longer be readable in one place.

import { type Api, GrammyError } from 'grammy'
import type { InlineKeyboardMarkup, MessageEntity } from 'grammy/types'
import type { DeskRuntime } from '../config/load'
import { staffChatOf } from '../config/staff-groups'
import type { Deps } from '../deps'
import { errorSummary } from '../jobs/jobs'
import { consultationView, type DeskConsultationView } from '../orders/orders.repository'
import { BudgetWait, PRIORITY_NORMAL, type SendContext, withSendContext } from '../telegram/budget'
import { sendForConsultation } from '../telegram/client-threads'
import { notify } from '../telegram/notify'
import { floodDecision, inDigestText } from './antiflood'
import { recordClientBlocked } from './blocked'
import { batchable, copy, copyRun, replyTo } from './copies'
import {
  clearDeskFlag,
  clearInQueued,
  findDeskConsultation,
  lockConsultationKey,
  setDeskFlags,
} from './desk-consultation.repository'
import { sendDigest } from './digest'
import {
  failReasonKey,
  isBlocked,
  isTopicClosed,
  isTopicUnusable,
  isUncopyable,
  retryAfterSeconds,
  shortError,
} from './errors'
import { itemPriority } from './fairness'
import { DONE, type LaneScope, type Outcome } from './lane-scope'
import { Lease } from './lanes'
import {
  type Item,
  laneHasItems,
  markItems,
  markPendingOutBlocked,
  markSent,
  pendingAlbum,
  pendingItems,
} from './messages.repository'
import { mirrorEdits, setReceipts } from './mirror'
import { insertNote } from './notes'
import { activeRoute, type Route } from './routes.repository'
import { wakeLane, wakeLaneLater } from './routing.jobs'
import type { Direction } from './routing.tables'
import { createTopic, pinCard, postCard, postSummary, refreshCard, refreshTitle, retireTopic } from './topics'

/**
 * The lanes: the only code that sends a consultation's items to Telegram.
 *
 * runLane takes the consultation's lease for one direction and drains: pending items in admission order (an album
 * waits until its parts have stopped arriving, then goes as one copyMessages call), then edits, receipts, card and
 * title. Every Telegram result is recorded in desk_message right after the call, before the job can complete, so a
 * retried job does not send an item twice. (A crash between Telegram's answer and that write is the one window in
 * which an item can be sent twice; Telegram offers no way to ask whether a call happened, and a duplicate copy is
 * the better failure than a lost question.)
 *
 * Failures by kind:
 * - the topic is deleted/closed/archived: reopen (closed) or recreate it with card and summary, move the route,
 *   send the same item again;
 * - the message cannot be copied: the item fails, the sender is told, the lane goes on;
 * - 403 from the client: recorded once on the consultation, the staff are told once, pending items to the client
 *   are parked as blocked (re-queued when the client writes again) - no retry loop;
 * - 429 beyond what auto-retry waits in-process: the lane re-enqueues itself after retry_after;
 * - the same item refused three times with another 400: it fails with a note (a poison item must not block the
 *   consultation forever);
 * - anything else (network, 5xx): the job fails and pg-boss retries; the item stays first in line.
 */

/** How long an album must have had no new part before it is copied (parts arrive as separate updates). */
export const ALBUM_QUIET_MS = 1500
/** Telegram's album limit: ten parts means it is complete. */
const ALBUM_MAX = 10
const MAX_ITEMS_PER_ROUND = 50
const MAX_ROUND_MS = 45_000
const MAX_ROUNDS = 3
const MAX_BAD_REQUESTS = 3
const MAX_TOPIC_RECOVERIES = 3
/**
 * Into a client's chat a lane waits for the budget at most this long in its worker (the bot's window frees within
 * a fraction of a second); a longer wait is the client's own window (3 per 3 s): the lane gives its worker up and
 * comes back when the window opens, so the other clients' answers go meanwhile.
 */
const OUT_MAX_WAIT_SECONDS = 0.4

/** The topic could not be created or set up: a problem of the staff group, never a reason to fail an item. */
export class TopicSetupError extends Error {
  override name = 'TopicSetupError'
  constructor(
    readonly consultationId: number,
    override readonly cause: unknown,
  ) {
    super(`consultation ${consultationId}: cannot set up the staff topic: ${shortError(cause)}`)
  }
}

/**
 * Drains one consultation's lane. Returns quietly when another worker holds the lane: that holder checks for new
 * work after releasing it, so nothing committed before this call is left behind.
 */
export async function runLane(deps: Deps, consultationId: number, dir: Direction): Promise<void> {
  // This job is being served: admissions from now on queue a new one (desk_admit skips the job while the flag is
  // set). Cleared before the claim, not after: whatever an admission stored relying on the flag is committed by
  // now, so it is seen either by our drain or, if another worker holds the lane, by that holder's check for new
  // work after it releases.
  if (dir === 'in') await clearInQueued(deps.db, consultationId)
  const lease = new Lease(deps, consultationId, dir)
  for (let round = 0; round < MAX_ROUNDS; round++) {
    if (!(await lease.claim())) return
    lease.start()
    let outcome: Outcome
    try {
      outcome = await drain(deps, consultationId, dir, lease)
    } finally {
      await lease.release().catch((e) => deps.log.warn({ err: errorSummary(e) }, 'lane release failed'))
    }
    if (outcome.kind === 'defer') {
      await wakeLaneLater(deps.jobs, deps.db, consultationId, dir, outcome.seconds)
      return
    }
    // Released first, checked second: work committed while we held the lane is seen here.
    if (!(await laneHasWork(deps, consultationId, dir))) return
  }
  // Still busy after a few rounds: give other consultations' jobs a turn.
  await wakeLaneLater(deps.jobs, deps.db, consultationId, dir)
}

export async function laneHasWork(deps: Deps, consultationId: number, dir: Direction): Promise<boolean> {
  if (await laneHasItems(deps.db, consultationId, dir)) return true
  if (dir === 'out') return false
  const dc = await findDeskConsultation(deps.db, consultationId)
  if (!dc) return false
  if (dc.card_dirty || dc.title_dirty) return true
  const route = await activeRoute(deps.db, consultationId)
  if (route)
    return (
      route.card_message_id === null ||
      route.card_pinned_message_id !== route.card_message_id ||
      route.summary_pending
    )
  if (!dc.topic_wanted) return false
  const v = await consultationView(deps.db, consultationId)
  return v?.state === 'active'
}

async function drain(deps: Deps, consultationId: number, dir: Direction, lease: Lease): Promise<Outcome> {
  const v = await consultationView(deps.db, consultationId)
  if (!v) return DONE
  const lane = new LaneRun(deps, deps.desk(v.bot_id), deps.api(v.bot_id), v, dir, lease)
  // The lane's calls wait for the group's budget as one lane: consultations take turns (src/telegram/budget.ts).
  return withSendContext(sendContext(consultationId, dir, PRIORITY_NORMAL), () => lane.drain())
}

function sendContext(consultationId: number, dir: Direction, priority: number): SendContext {
  return {
    lane: laneName(consultationId, dir),
    priority,
    ...(dir === 'out' ? { maxWaitSeconds: OUT_MAX_WAIT_SECONDS } : {}),
  }
}

function laneName(consultationId: number, dir: Direction): string {
  return `c:${consultationId}:${dir}`
}

class LaneRun implements LaneScope {
  private route: Route | undefined
  private recoveries = 0
  /** A batch of copies was refused as uncopyable: one by one for the rest of this run, to find the one. */
  private noBatch = false

  constructor(
    readonly deps: Deps,
    readonly desk: DeskRuntime,
    readonly api: Api,
    readonly v: DeskConsultationView,
    readonly dir: Direction,
    readonly lease: Lease,
  ) {}

  private get db() {
    return this.deps.db
  }

  /** The lane's name in the group's waiting room (src/telegram/budget.ts). */
  get lane(): string {
    return laneName(this.v.id, this.dir)
  }

  async drain(): Promise<Outcome> {
    const dc = await findDeskConsultation(this.db, this.v.id)
    if (!dc) return DONE
    if (this.dir === 'in' && dc.topic_wanted && this.v.state === 'active')
      await this.withTopic(async () => undefined)
    if (this.dir === 'out' && this.v.state === 'revoked' && this.v.refund_policy === 'stop') {
      await this.withhold()
      return DONE
    }
    // Known to have blocked the bot: park what is pending without calling Telegram again (no retry loop). The
    // client's next message clears the mark and re-queues it.
    if (this.dir === 'out' && dc.client_blocked_at) {
      await markPendingOutBlocked(this.db, this.v.id)
      return DONE
    }

    const started = Date.now()
    let n = 0
    while (n < MAX_ITEMS_PER_ROUND && Date.now() - started < MAX_ROUND_MS) {
      this.lease.check()
      const [head] = await pendingItems(this.db, this.v.id, this.dir, 1)
      if (!head) break
      let batch: Item[] = [head]
      let digest = false
      if (head.kind === 'copy' && head.media_group_id) {
        const { parts, quietMs } = await pendingAlbum(this.db, this.v.id, head.media_group_id, this.dir)
        if (parts.length < ALBUM_MAX && quietMs < ALBUM_QUIET_MS)
          return { kind: 'defer', seconds: (ALBUM_QUIET_MS - quietMs) / 1000 }
        if (parts.length > 0) batch = parts
      }
      if (batch.length === 1 && this.dir === 'in') {
        const flood = await floodDecision(this.deps, this.v, head, () =>
          pendingItems(this.db, this.v.id, this.dir, 100),
        )
        if (flood.kind === 'wait') return { kind: 'defer', seconds: flood.seconds }
        if (flood.kind === 'digest') {
          batch = flood.items
          // Media only: one copyMessages says it all, a digest message would be one send more.
          digest = batch.some(inDigestText)
        }
      }
      // Fewer calls: consecutive plain copies of the lane go in one copyMessages (order kept; each counts against
      // the group's budget all the same).
      // Not while other consultations wait for the group: a batch would take their turns (fairness first).
      if (
        batch.length === 1 &&
        !this.noBatch &&
        (await batchable(this, head)) &&
        !(await this.othersWaiting())
      )
        batch = await copyRun(this, head, MAX_ITEMS_PER_ROUND - n)
      const priority = await itemPriority(this.db, this.desk, head)
      const r = await withSendContext(sendContext(this.v.id, this.dir, priority), () =>
        this.deliver(batch, digest),
      )
      if (r) return r
      n += batch.length
      // Other consultations wait for the staff group's budget: give the worker up after each item (the job comes
      // back at the end of the queue), so lanes take turns even when there are more lanes than workers.
      if (
        this.dir === 'in' &&
        (await this.deps.budget.othersWaiting(this.v.bot_id, staffChatOf(this.desk, this.v), this.lane))
      )
        return { kind: 'defer', seconds: 0 }
    }

    const edits = await mirrorEdits(this)
    if (edits) return edits
    if (this.dir === 'in') {
      await setReceipts(this)
      if (dc.card_dirty)
        await this.flagged('card_dirty', (route) => refreshCard(this.deps, this.desk, this.api, route))
      if (dc.title_dirty)
        await this.flagged('title_dirty', (route) => refreshTitle(this.deps, this.api, route))
    }
    return DONE
  }

  // ------------------------------------------------------------------------------------------------------------
  // The topic

  /** Runs `fn` against the live topic, creating it (card, summary) if needed and recovering when it is gone. */
  private async withTopic<T>(fn: (route: Route) => Promise<T>): Promise<T> {
    for (;;) {
      try {
        const route = await this.topic()
        return await fn(route)
      } catch (err) {
        if (!(await this.recover(err))) throw err
      }
    }
  }

  private async topic(): Promise<Route> {
    try {
      if (!this.route) this.route = await activeRoute(this.db, this.v.id)
      if (!this.route && (await this.forgotten())) {
        // /forget deleted the topic (issue 26): a note that raced the erasure is withheld, never a new topic.
        await this.db
          .updateTable('desk_message')
          .set({ state: 'withheld' })
          .where('consultation_id', '=', this.v.id)
          .where('direction', '=', 'in')
          .where('state', '=', 'pending')
          .execute()
        throw new Error(`consultation ${this.v.id}: the client used /forget; its topic is not recreated`)
      }
      if (!this.route) this.route = await createTopic(this.deps, this.desk, this.api, this.v)
      if (this.route.card_message_id === null) await postCard(this.deps, this.desk, this.api, this.route)
      else if (this.route.card_pinned_message_id !== this.route.card_message_id)
        await pinCard(this.deps, this.api, this.route)
      if (this.route.summary_pending) await postSummary(this.deps, this.desk, this.api, this.route)
      return this.route
    } catch (err) {
      if (isTopicUnusable(err) || err instanceof TopicSetupError) throw err
      // Not the item's fault (a group that is not a forum, missing admin rights, Telegram down): the items stay
      // pending in order and the job retries (the sweeper keeps waking the lane once a minute after that).
      throw new TopicSetupError(this.v.id, err)
    }
  }

  private async forgotten(): Promise<boolean> {
    const r = await this.db
      .selectFrom('desk_route')
      .select('message_thread_id')
      .where('consultation_id', '=', this.v.id)
      .where('replaced_reason', '=', 'forgotten')
      .executeTakeFirst()
    return r !== undefined
  }

  /** The topic is closed (reopen it) or gone (move the route to a new one); false when this is not a topic error. */
  private async recover(err: unknown): Promise<boolean> {
    if (!isTopicUnusable(err) || !this.route) return false
    if (++this.recoveries > MAX_TOPIC_RECOVERIES) return false
    const route = this.route
    const reason = err instanceof GrammyError ? err.description.replace(/^Bad Request: /, '') : 'unusable'
    if (isTopicClosed(err)) {
      try {
        await this.api.reopenForumTopic(route.support_chat_id, route.message_thread_id)
        await this.note('desk-note-reopened', {}, `desk:reopened:${route.message_thread_id}:${Date.now()}`)
        this.deps.log.info({ consultation_id: this.v.id, thread: route.message_thread_id }, 'topic reopened')
        return true
      } catch (e) {
        this.deps.log.warn(
          { consultation_id: this.v.id, err: errorSummary(e) },
          'reopen failed; recreating the topic',
        )
      }
    }
    // Deleted by /forget (issue 26; the route is retired in its transaction): never recreated. The caller's error
    // stands; the retry finds no active route and nothing to send.
    if (await this.forgotten()) {
      this.route = undefined
      return false
    }
    this.deps.log.warn(
      { consultation_id: this.v.id, thread: route.message_thread_id, reason },
      'topic unusable; recreating it',
    )
    await retireTopic(this.deps, this.v.id, reason)
    this.route = undefined
    return true
  }

  // ------------------------------------------------------------------------------------------------------------
  // Items

  /**
   * Sends one item, one album, one copyMessages run or one digest; undefined = go on with the next item. A digest is
   * two steps: its message (the texts marked sent with it), then the photos and files below it as a run of copies -
   * a failure of the second step leaves only those pending, and the texts are not sent again.
   */
  private async deliver(batch: Item[], digest = false): Promise<Outcome | undefined> {
    if (this.dir === 'in' && digest) {
      const texts = batch.filter(inDigestText)
      const media = batch.filter((i) => !inDigestText(i))
      const r = await this.attempt(texts, true, () =>
        this.withTopic((route) => sendDigest(this, route, batch)),
      )
      if (r || media.length === 0) return r
      return this.attempt(media, false, () => this.withTopic((route) => this.sendIn(route, media)))
    }
    return this.attempt(batch, false, () =>
      this.dir === 'in' ? this.withTopic((route) => this.sendIn(route, batch)) : this.sendOut(batch),
    )
  }

  /** One send of `batch` with the lane's answers to what can go wrong. */
  private async attempt(
    batch: Item[],
    digest: boolean,
    send: () => Promise<void>,
  ): Promise<Outcome | undefined> {
    const head = batch[0]!
    try {
      await send()
      return undefined
    } catch (err) {
      // The client's window is closed: nothing was sent; the lane comes back when it opens.
      if (err instanceof BudgetWait) return { kind: 'defer', seconds: err.seconds }
      if (this.dir === 'out' && isBlocked(err)) {
        await recordClientBlocked(this.deps, this.v)
        return DONE
      }
      // A batch refused (uncopyable or any other 400): one by one for the rest of this run, so that only the
      // message Telegram refuses fails and the others go.
      if (
        err instanceof GrammyError &&
        err.error_code === 400 &&
        batch.length > 1 &&
        !head.media_group_id &&
        !digest
      ) {
        this.noBatch = true
        return undefined
      }
      if (isUncopyable(err)) {
        await this.failItems(batch, err)
        return undefined
      }
      if (err instanceof TopicSetupError) {
        const wait = retryAfterSeconds(err.cause)
        if (wait !== undefined) return { kind: 'defer', seconds: wait }
        this.deps.log.error({ consultation_id: this.v.id, err: errorSummary(err.cause) }, err.message)
        throw err
      }
      const wait = retryAfterSeconds(err)
      if (wait !== undefined) return { kind: 'defer', seconds: wait }
      if (err instanceof GrammyError && err.error_code === 400 && head.attempts + 1 >= MAX_BAD_REQUESTS) {
        await this.failItems(batch, err)
        return undefined
      }
      if (err instanceof GrammyError && err.error_code === 400)
        await this.db
          .updateTable('desk_message')
          .set((eb) => ({ attempts: eb('attempts', '+', 1), error: shortError(err) }))
          .where('id', '=', head.id)
          .execute()
      throw err
    }
  }

  private async sendIn(route: Route, batch: Item[]): Promise<void> {
    const head = batch[0]!
    const chat = route.support_chat_id
    const thread = route.message_thread_id
    if (head.kind === 'note' || head.kind === 'text') {
      const { text, entities, markup } = this.render(head)
      const m = await this.api.sendMessage(chat, text, {
        message_thread_id: thread,
        ...(entities ? { entities } : {}),
        ...(markup ? { reply_markup: markup } : {}),
        link_preview_options: { is_disabled: true },
      })
      await markSent(this.db, head.id, {
        chatId: chat,
        threadId: thread,
        messageId: m.message_id,
        version: head.version,
      })
      return
    }
    await copy(this, batch, chat, thread)
  }

  private othersWaiting(): Promise<boolean> {
    if (this.dir !== 'in') return Promise.resolve(false)
    return this.deps.budget.othersWaiting(this.v.bot_id, staffChatOf(this.desk, this.v), this.lane)
  }

  /** To the client: into the consultation's topic of their private chat when it has a usable one (issue 26). */
  private sendOut(batch: Item[]): Promise<void> {
    return sendForConsultation(this.db, this.v.id, (thread) => this.sendOutTo(batch, thread))
  }

  private async sendOutTo(batch: Item[], thread: number | undefined): Promise<void> {
    const head = batch[0]!
    const chat = this.v.user_id
    if (head.kind === 'note' || head.kind === 'text') {
      const { text, entities } = this.render(head)
      const reply = await replyTo(this, head, chat)
      const m = await this.api.sendMessage(chat, text, {
        ...(thread !== undefined ? { message_thread_id: thread } : {}),
        ...(entities ? { entities } : {}),
        ...(reply ? { reply_parameters: reply } : {}),
        link_preview_options: { is_disabled: true },
      })
      await markSent(this.db, head.id, {
        chatId: chat,
        threadId: thread ?? null,
        messageId: m.message_id,
        version: head.version,
      })
      return
    }
    await copy(this, batch, chat, thread)
  }

  private render(item: Item): { text: string; entities?: MessageEntity[]; markup?: InlineKeyboardMarkup } {
    const c = item.content ?? {}
    if (item.kind === 'text')
      return {
        text: c.text ?? '',
        ...(c.entities?.length ? { entities: c.entities as MessageEntity[] } : {}),
      }
    const lang = this.dir === 'in' ? this.desk.defaultLanguage : this.v.lang
    const text = this.deps.i18n.t(lang, c.key ?? '', c.params ?? {})
    return { text, ...(c.markup ? { markup: c.markup as InlineKeyboardMarkup } : {}) }
  }

  /** The item can never be sent: it fails, the sender is told (client: in their chat; staff: in the topic). */
  private async failItems(batch: Item[], err: unknown): Promise<void> {
    const head = batch[0]!
    const reason = shortError(err)
    this.deps.log.warn({ consultation_id: this.v.id, item: head.id, reason }, 'item cannot be delivered')
    await this.deps.jobs.transaction(this.db, async (trx, outbox) => {
      await lockConsultationKey(trx, this.v.id)
      await markItems(
        trx,
        batch.map((b) => b.id),
        'failed',
        reason,
      )
      if (head.kind !== 'copy') return
      if (this.dir === 'in') {
        await notify(outbox, {
          botId: this.v.bot_id,
          chatId: this.v.user_id,
          lang: this.v.lang,
          key: 'desk-not-copyable',
          consultationId: this.v.id,
          dedupeKey: `desk:not-copyable:${head.id}`,
        })
        // Staff read the kind of message and the reason in words of the desk's language (time.ftl, desk.ftl).
        const staff = this.desk.defaultLanguage
        await insertNote(
          trx,
          this.v,
          'in',
          'desk-note-not-copyable',
          { type: this.deps.i18n.t(staff, 'media-kind', { kind: head.content_type }) },
          `desk:note:not-copyable:${head.id}`,
        )
      } else {
        await insertNote(
          trx,
          this.v,
          'in',
          'desk-note-not-delivered',
          {
            type: this.deps.i18n.t(this.desk.defaultLanguage, 'media-kind', { kind: head.content_type }),
            reason: this.deps.i18n.t(this.desk.defaultLanguage, failReasonKey(err)),
          },
          `desk:note:not-delivered:${head.id}`,
        )
        await wakeLane(outbox, this.v.id, 'in')
      }
    })
  }

  /** Refunded under "stop": staff messages are no longer delivered; the staff are told once. */
  private async withhold(): Promise<void> {
    await this.deps.jobs.transaction(this.db, async (trx, outbox) => {
      await lockConsultationKey(trx, this.v.id)
      const parked = await trx
        .updateTable('desk_message')
        .set({ state: 'withheld' })
        .where('consultation_id', '=', this.v.id)
        .where('direction', '=', 'out')
        .where('state', '=', 'pending')
        .returning('id')
        .execute()
      if (parked.length === 0) return
      await insertNote(trx, this.v, 'in', 'desk-note-withheld', {}, `desk:note:withheld:${this.v.id}`)
      await wakeLane(outbox, this.v.id, 'in')
    })
  }

  private async note(key: string, params: Record<string, string | number>, dedupeKey: string): Promise<void> {
    await this.deps.jobs.transaction(this.db, (trx) => insertNote(trx, this.v, 'in', key, params, dedupeKey))
  }

  // ------------------------------------------------------------------------------------------------------------
  // Edits, receipts, card, title

  private async flagged(
    flag: 'card_dirty' | 'title_dirty',
    fn: (route: Route) => Promise<void>,
  ): Promise<void> {
    if (!this.route && !(await activeRoute(this.db, this.v.id))) {
      await clearDeskFlag(this.db, this.v.id, flag)
      return
    }
    await clearDeskFlag(this.db, this.v.id, flag)
    try {
      await this.withTopic(fn)
    } catch (err) {
      await setDeskFlags(this.db, this.v.id, { [flag]: true })
      throw err
    }
  }
}
