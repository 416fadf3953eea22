import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import type { Db } from '../db/database'
import type { Deps } from '../deps'
import type { Direction } from './routing.tables'

/**
 * A lane is the one worker, at a time, that writes a consultation's items in one direction: into its topic (in:
 * client copies, the card, notes, topic creation and recreation) or into the client's chat (out). Holding the lane
 * is what makes "at most one topic per consultation" and "copies arrive in order" true across jobs, retries and
 * processes, without a transaction held open over a Telegram call.
 *
 * The lease is a row update with a deadline: a holder that dies simply lets it run out. LEASE_SECONDS is shorter
 * than the time after which a dead worker's job is released (DEAD_AFTER_SECONDS, src/jobs/liveness.ts) and than the
 * delivery queues' job expiry, so the job of a crashed holder is retried after its lease has lapsed; the holder
 * renews it every few seconds, so a long drain (throttled sends, retry_after waits) never loses it while alive.
 */
export const LEASE_SECONDS = 12

const COLUMNS = {
  in: { lease: 'in_lease', until: 'in_lease_until' },
  out: { lease: 'out_lease', until: 'out_lease_until' },
} as const

/**
 * Takes the lane for `token` (`claim`: when it is free, lapsed or already this token's) or extends its lease
 * (`renew`: only while this token holds it). False when it was not taken. A renewal never takes a free lane: one
 * that reaches the database after the holder released the lane would take it back for no one, and every job of
 * the lane would find it held and leave until the lease ran out (the holder that checks for new work is gone).
 */
export async function leaseLane(
  db: Db,
  consultationId: number,
  dir: Direction,
  token: string,
  mode: 'claim' | 'renew',
): Promise<boolean> {
  const c = COLUMNS[dir]
  const orFree =
    mode === 'claim' ? sql`or ${sql.ref(c.lease)} is null or ${sql.ref(c.until)} < clock_timestamp()` : sql``
  const r = await sql<{ ok: number }>`
    update desk_consultation
      set ${sql.ref(c.lease)} = ${token},
          ${sql.ref(c.until)} = clock_timestamp() + make_interval(secs => ${LEASE_SECONDS})
      where consultation_id = ${consultationId} and (${sql.ref(c.lease)} = ${token} ${orFree})
      returning 1 as ok`.execute(db)
  return r.rows.length === 1
}

export async function releaseLane(
  db: Db,
  consultationId: number,
  dir: Direction,
  token: string,
): Promise<void> {
  const c = COLUMNS[dir]
  await sql`
    update desk_consultation set ${sql.ref(c.lease)} = null, ${sql.ref(c.until)} = null
      where consultation_id = ${consultationId} and ${sql.ref(c.lease)} = ${token}`.execute(db)
}

/** A live holder renews its lease this often (LEASE_SECONDS is the deadline). */
const HEARTBEAT_MS = 4_000

/**
 * The lease with a heartbeat: lost = another worker may have the lane now, so stop before the next send. A lease
 * not renewed for most of its length (the database was away) counts as lost too: it may have run out. The
 * heartbeat only renews (leaseLane's `renew`), and release() waits for a beat in flight: no beat outlives it.
 */
export class Lease {
  private timer: ReturnType<typeof setInterval> | undefined
  private renewing: Promise<void> | undefined
  private renewedAt = 0
  lost = false
  constructor(
    private readonly deps: Deps,
    readonly consultationId: number,
    readonly dir: Direction,
    readonly token = randomUUID(),
  ) {}

  async claim(): Promise<boolean> {
    const at = Date.now()
    const ok = await leaseLane(this.deps.db, this.consultationId, this.dir, this.token, 'claim')
    if (ok) {
      this.renewedAt = at
      this.lost = false
    }
    return ok
  }

  start(): void {
    this.timer = setInterval(() => {
      this.renewing ??= this.beat().finally(() => {
        this.renewing = undefined
      })
    }, HEARTBEAT_MS)
    this.timer.unref()
  }

  /** One beat: renews the lease held, or marks it lost. */
  async beat(): Promise<void> {
    const at = Date.now()
    try {
      if (await leaseLane(this.deps.db, this.consultationId, this.dir, this.token, 'renew'))
        this.renewedAt = at
      else this.lost = true
    } catch {
      // The database is away: check() counts the lease lost once it has gone unrenewed for too long.
    }
  }

  async release(): Promise<void> {
    if (this.timer) clearInterval(this.timer)
    this.timer = undefined
    await this.renewing
    await releaseLane(this.deps.db, this.consultationId, this.dir, this.token)
  }

  check(): void {
    if (Date.now() - this.renewedAt > LEASE_SECONDS * 1000 - HEARTBEAT_MS) this.lost = true
    if (this.lost) throw new Error(`lane ${this.dir} of consultation ${this.consultationId}: lease lost`)
  }
}
