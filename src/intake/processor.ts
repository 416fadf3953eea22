import { randomUUID } from 'node:crypto'
import { hostname } from 'node:os'
import { BotError } from 'grammy'
import type { Update } from 'grammy/types'
import type pg from 'pg'
import { deskLanguage } from '../config/rules.schema'
import type { Deps } from '../deps'
import { errorSummary } from '../jobs/jobs'
import { withTrace } from '../log'
import { metrics } from '../metrics'
import { notify } from '../telegram/notify'
import { tellAdmins } from '../telegram/private-alerts'
import { cut } from '../text'
import {
  dropLeases,
  type InboxRow,
  parkUpdate,
  releaseUpdate,
  renewLeases,
  takeUpdates,
  type UpdateRef,
} from './inbox.repository'
import { PRIORITY_PAYMENT } from './keys'
import { isTransient } from './transient'

/** Updates handled at once by one process (different chats; one chat is never handled twice at once). */
export const CONCURRENCY = 32
/**
 * A taken update's lease. The holder renews it every LEASE_SECONDS / 4 while the handler runs, so only a dead (or
 * cut off) holder lets it run out; another process then takes the update. Short, so a crash delays a chat's
 * updates by seconds, not minutes.
 */
export const LEASE_SECONDS = 20
/** Failed handlings (non-transient) before an update is parked for a person. */
export const MAX_ATTEMPTS = 5
/**
 * Transient failures (database, network, Telegram 5xx/429) are retried without counting, until the update is this
 * old: Telegram itself keeps undelivered updates for 24 hours, and an update that could not be handled for that
 * long needs a person more than another try.
 */
export const MAX_TRANSIENT_AGE_MS = 24 * 3600 * 1000
/**
 * A processor scans every chat's queue this often (what other processes stored, what a dead processor held,
 * retries that came due); between scans it takes what it was offered (what it stored itself, see inbox_take).
 */
const POLL_MS = 500
/** An offered update not taken by then is left to the scans (another process took it, or its chat is stuck). */
const CANDIDATE_MS = 5000
const MAX_CANDIDATES = 500

export type UpdateHandler = (update: Update) => Promise<void>

export interface ProcessorOptions {
  concurrency?: number
  pollMs?: number
  /** Tests: shorter leases and backoffs (a factor on every retry delay). */
  leaseSeconds?: number
  backoffScale?: number
}

/**
 * Handles updates from the inbox: takes chat heads (inbox_take), runs each through the desk's bot (grammY's
 * middleware, the handlers as they are), and records the outcome. Several processes can run one each on the same
 * inbox: a chat's updates are still handled one at a time and in order.
 *
 * Outcomes: handled -> done (batched into the next take). A transient failure -> back to the inbox with a backoff,
 * no attempt counted, nobody told (it will be handled). Any other failure -> an attempt counted and a backoff; on
 * the MAX_ATTEMPTSth the update is parked and the user (in a private chat) and the staff are told once, through the
 * outbox in the same transaction. If even that cannot be written (the database is away), the lease runs out and
 * the update is taken again later: nothing is lost or half-handled, it waits.
 */
export class InboxProcessor {
  readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`
  private readonly concurrency: number
  private readonly pollMs: number
  private readonly lease: number
  private readonly backoffScale: number
  private readonly inflight = new Map<string, InboxRow>()
  private finished: UpdateRef[] = []
  /** Updates this process stored, to be taken by key as soon as they are their chat's head. */
  private candidates: { ref: UpdateRef; at: number }[] = []
  private lastScan = 0
  private wanted = true
  private stopping = false
  private waker: (() => void) | undefined
  private loopDone: Promise<void> | undefined
  private renewTimer: ReturnType<typeof setInterval> | undefined
  private lastError = 0

  constructor(
    private readonly deps: Pick<Deps, 'db' | 'jobs' | 'log' | 'i18n' | 'desk'>,
    /** Commits asynchronously (synchronous_commit off): take and done marks are bookkeeping, see inbox_take. */
    private readonly bookkeeping: pg.Pool,
    private readonly handlers: Map<number, UpdateHandler>,
    opts: ProcessorOptions = {},
  ) {
    this.concurrency = opts.concurrency ?? CONCURRENCY
    this.pollMs = opts.pollMs ?? POLL_MS
    this.lease = opts.leaseSeconds ?? LEASE_SECONDS
    this.backoffScale = opts.backoffScale ?? 1
  }

  start(): void {
    this.loopDone = this.loop()
    this.renewTimer = setInterval(() => void this.renew(), (this.lease * 1000) / 4)
    this.renewTimer.unref()
  }

  /**
   * New updates were stored by this process: take them by key, now instead of at the next scan. Payments go to the
   * front (the take follows this order).
   */
  offer(refs: readonly (UpdateRef & { priority: number })[]): void {
    const at = Date.now()
    for (const ref of refs)
      if (ref.priority === PRIORITY_PAYMENT) this.candidates.unshift({ ref, at })
      else this.candidates.push({ ref, at })
    this.nudge()
  }

  /** Look now instead of at the next scan. */
  nudge(): void {
    this.wanted = true
    this.waker?.()
  }

  /** Stops taking updates, lets the running ones finish (up to timeoutMs) and hands the rest back. */
  async stop(timeoutMs = 5000): Promise<void> {
    if (this.stopping) return
    this.stopping = true
    this.waker?.()
    await this.loopDone
    const deadline = Date.now() + timeoutMs
    while (this.inflight.size > 0 && Date.now() < deadline) await sleep(25)
    if (this.renewTimer) clearInterval(this.renewTimer)
    const done = this.finished.splice(0)
    const ids = [...this.handlers.keys()]
    await takeUpdates(this.bookkeeping, this.owner, done, [], false, ids, 0, this.lease).catch(() => {})
    await dropLeases(this.bookkeeping, this.owner, [...this.inflight.values()].map(refOf)).catch(() => {})
  }

  private async loop(): Promise<void> {
    const botIds = [...this.handlers.keys()]
    let backoff = 0
    while (!this.stopping) {
      const free = this.concurrency - this.inflight.size
      const scan = free > 0 && Date.now() - this.lastScan >= this.pollMs
      if (this.finished.length > 0 || (free > 0 && (this.wanted || scan))) {
        const done = this.finished.splice(0)
        const now = Date.now()
        this.candidates = this.candidates.filter((c) => now - c.at < CANDIDATE_MS)
        const offered = free > 0 ? this.candidates.slice(0, MAX_CANDIDATES).map((c) => c.ref) : []
        this.wanted = false
        let rows: InboxRow[]
        try {
          rows = await takeUpdates(
            this.bookkeeping,
            this.owner,
            done,
            offered,
            scan,
            botIds,
            free,
            this.lease,
          )
          backoff = 0
          if (scan) this.lastScan = now
        } catch (err) {
          // The database is away: keep what was finished for the next take (if the process dies first, those
          // updates are handled again: their leases run out), and look again after a backoff.
          this.finished.unshift(...done)
          this.wanted = true
          backoff = Math.min(Math.max(backoff * 2, 250), 5000)
          this.logFailure(err, 'inbox: cannot take updates')
          await this.wait(backoff)
          continue
        }
        if (rows.length > 0) {
          const taken = new Set(rows.map((r) => `${r.bot_id}:${r.update_id}`))
          this.candidates = this.candidates.filter((c) => !taken.has(`${c.ref.botId}:${c.ref.updateId}`))
        }
        for (const row of rows) this.run(row)
        // A full take may have left more behind.
        if (rows.length > 0 && rows.length === free) this.wanted = true
        continue
      }
      await this.wait(this.pollMs)
    }
  }

  /** Sleeps until nudged, a handler finishes, or `ms` pass (then looks for work anyway). */
  private wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wanted = true
        done()
      }, ms)
      const done = () => {
        clearTimeout(timer)
        this.waker = undefined
        resolve()
      }
      this.waker = done
    })
  }

  private run(row: InboxRow): void {
    const key = `${row.bot_id}:${row.update_id}`
    this.inflight.set(key, row)
    void this.handle(row).finally(() => {
      this.inflight.delete(key)
      this.waker?.()
    })
  }

  private async handle(row: InboxRow): Promise<void> {
    const handler = this.handlers.get(row.bot_id)
    const timer = metrics.handlerSeconds.startTimer({ type: row.kind })
    try {
      if (!handler) throw new Error(`no bot for ${row.bot_id} in this process`)
      await withTrace(`u${row.bot_id}:${row.update_id}`, () => handler(row.payload))
      timer()
      metrics.updates.inc({ type: row.kind, outcome: 'done' })
      this.finished.push(refOf(row))
    } catch (e) {
      timer()
      const err = e instanceof BotError ? e.error : e
      await this.failed(row, err).catch((recordErr) =>
        // Not even the failure could be recorded: the lease runs out and the update is taken again.
        this.logFailure(recordErr, 'inbox: cannot record a failed update'),
      )
    }
  }

  private async failed(row: InboxRow, err: unknown): Promise<void> {
    const ref = refOf(row)
    const summary = errorSummary(err)
    const text = cut(
      `${summary.name ?? 'Error'}${summary.code ? ` ${summary.code}` : ''}: ${summary.message}`,
      500,
    )
    const log = this.deps.log.child({ bot: row.bot_id, update_id: row.update_id, kind: row.kind })
    const transient = isTransient(err)
    const tooOld = Date.now() - row.received_at.getTime() > MAX_TRANSIENT_AGE_MS
    if (transient && !tooOld) {
      // Not the update's fault: it waits in the inbox; nobody is told, it will be handled.
      metrics.updates.inc({ type: row.kind, outcome: 'retry_transient' })
      log.warn({ err: summary }, 'update failed on a transient error; will retry')
      await releaseUpdate(this.deps.db, this.owner, ref, transientDelay(row) * this.backoffScale, false, text)
      return
    }
    const attempts = row.attempts + 1
    if (attempts < MAX_ATTEMPTS && !tooOld) {
      metrics.updates.inc({ type: row.kind, outcome: 'retry' })
      log.error({ err: summary, attempts }, 'update failed; will retry')
      await releaseUpdate(this.deps.db, this.owner, ref, 2 ** (attempts - 1) * this.backoffScale, true, text)
      return
    }
    metrics.updates.inc({ type: row.kind, outcome: 'parked' })
    log.error({ err: summary, attempts }, 'update parked after repeated failures')
    await this.park(row, text)
  }

  /** Parks the update and tells the user (private chats) and the staff, once, in one transaction. */
  private async park(row: InboxRow, error: string): Promise<void> {
    const desk = this.deps.desk(row.bot_id)
    const u = row.payload
    const m = u.message ?? u.edited_message
    const from = m?.from ?? u.callback_query?.from
    const privateChat = m ? (m.chat.type === 'private' ? m.chat.id : undefined) : u.callback_query?.from.id
    const payment = u.message?.successful_payment
    const lang = deskLanguage(desk, from?.language_code)
    const key = `intake:parked:${row.bot_id}:${row.update_id}`
    await this.deps.jobs.transaction(this.deps.db, async (trx, outbox) => {
      if (!(await parkUpdate(trx, this.owner, refOf(row), error))) return
      if (privateChat !== undefined)
        await notify(outbox, {
          botId: row.bot_id,
          chatId: privateChat,
          lang,
          key: payment ? 'intake-parked-payment' : 'intake-parked',
          dedupeKey: `${key}:user`,
        })
      await notify(outbox, {
        botId: row.bot_id,
        chatId: desk.staffChatId,
        lang: desk.defaultLanguage,
        key: 'intake-parked-staff',
        params: {
          update: String(row.update_id),
          kind: row.kind,
          user: from ? String(from.id) : '—',
          charge: payment?.telegram_payment_charge_id ?? '—',
          error: cut(error, 300),
        },
        dedupeKey: `${key}:staff`,
      })
      // And the owner and admins privately, once: /stuck lists it with a button to hand it back.
      await tellAdmins(trx, outbox, desk, {
        alertKey: `parked:${row.update_id}`,
        key: 'alert-parked',
        params: { update: String(row.update_id), kind: row.kind, error: cut(error, 300) },
      })
    })
  }

  private async renew(): Promise<void> {
    if (this.inflight.size === 0) return
    await renewLeases(this.bookkeeping, this.owner, [...this.inflight.values()].map(refOf), this.lease).catch(
      (err) => this.logFailure(err, 'inbox: cannot renew leases'),
    )
  }

  /** One line per failure kind per few seconds: an outage must not flood the log. */
  private logFailure(err: unknown, msg: string): void {
    if (Date.now() - this.lastError < 5000) return
    this.lastError = Date.now()
    this.deps.log.warn({ err: errorSummary(err) }, msg)
  }
}

function refOf(row: { bot_id: number; update_id: number }): UpdateRef {
  return { botId: row.bot_id, updateId: row.update_id }
}

/** 1, 2, 4 ... 30 s: the update waits out the outage without hammering the database. */
function transientDelay(row: InboxRow): number {
  return Math.min(30, 2 ** Math.min(6, row.tries) / 2)
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms))
}
