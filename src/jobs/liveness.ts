import { randomUUID } from 'node:crypto'
import os from 'node:os'
import { sql } from 'kysely'
import type { Db } from '../db/database'
import type { Logger } from '../log'
import { errorSummary, type Jobs } from './jobs'

/** A process writes its heartbeat this often. */
export const BEAT_SECONDS = 5
/**
 * A process whose heartbeat is older than this is dead, and the jobs it held go back to their queues. Three missed
 * beats: a slow statement or a GC pause is not a death. It is also longer than a delivery lane's lease
 * (src/routing/lanes.ts), so a job released here finds the dead holder's lane free.
 */
export const DEAD_AFTER_SECONDS = 15

/**
 * Heartbeats, and early release of a dead worker's jobs.
 *
 * pg-boss 10 has no heartbeat: a job whose worker died (kill -9, OOM, a lost host) stays `active` until its
 * expireInSeconds runs out (minutes for our queues: they bound a handler that waits for Telegram's rate limits) and
 * pg-boss's maintenance notices. Instead, every process records a heartbeat in app_instance every BEAT_SECONDS,
 * listing the jobs its handlers are working on (Jobs.active). A job that has been active for DEAD_AFTER_SECONDS and
 * that no live process lists is orphaned: it is failed through pg-boss's own `fail` (a retry with the queue's
 * delay, counted like any failure). Worker processes look for such jobs at every beat, one at a time (an advisory
 * lock): the scan reads pg-boss's active jobs, as its own expiry check does. That also covers a job whose handler finished while the database was away and
 * whose completion pg-boss could not record.
 *
 * A process only judges others after its own heartbeat has been succeeding for DEAD_AFTER_SECONDS since its last
 * failure: after a database outage every heartbeat is old, and the live processes need that long to beat again. Handlers are
 * idempotent, so the rare wrong call (a process that comes back just after being judged) costs a duplicate run,
 * never a lost job. Processes of a version without heartbeats would have their long jobs released too: deploy
 * this to every process at once.
 *
 * Hand-written because pg-boss 10 (the last version for Node 20) has no heartbeat of its own.
 */
export class Liveness {
  readonly id = randomUUID()
  private timer: ReturnType<typeof setInterval> | undefined
  /** The beat (and scan) under way: one at a time, and stop() waits for it. */
  private ticking: Promise<void> | undefined
  /**
   * Since when this process's heartbeats have been succeeding. A process that just started found the database up
   * (it ran its migrations), so it may judge others from its first tick: a worker started to replace a dead one
   * releases the dead one's jobs at once.
   */
  private healthySince = Date.now() - DEAD_AFTER_SECONDS * 1000

  constructor(
    private readonly db: Db,
    private readonly jobs: Jobs | undefined,
    private readonly log: Logger,
    private readonly opts: { role: string; reap: boolean },
  ) {}

  async start(): Promise<void> {
    await this.beat()
    this.timer = setInterval(() => void this.tick(), BEAT_SECONDS * 1000)
    this.timer.unref()
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer)
    this.timer = undefined
    // A beat in flight would write the row again after the delete: the process would look alive for a while.
    await this.ticking
    await this.db
      .deleteFrom('app_instance')
      .where('id', '=', this.id)
      .execute()
      .catch(() => {})
  }

  private tick(): Promise<void> {
    this.ticking ??= this.beatAndReap().finally(() => {
      this.ticking = undefined
    })
    return this.ticking
  }

  private async beatAndReap(): Promise<void> {
    try {
      await this.beat()
      const steady = Date.now() - this.healthySince >= DEAD_AFTER_SECONDS * 1000
      if (this.opts.reap && steady) await this.reap()
    } catch (err) {
      this.healthySince = Date.now()
      this.log.debug({ err: errorSummary(err) }, 'heartbeat failed')
    }
  }

  private async beat(): Promise<void> {
    const active = [...(this.jobs?.active.keys() ?? [])]
    const took = this.jobs?.lastTakenAt ? new Date(this.jobs.lastTakenAt) : null
    await sql`
      insert into app_instance (id, role, host, pid, active_jobs, took_at)
        values (${this.id}, ${this.opts.role}, ${os.hostname()}, ${process.pid}, ${active}::uuid[], ${took})
        on conflict (id) do update set beat_at = now(), active_jobs = excluded.active_jobs,
          took_at = excluded.took_at`.execute(this.db)
  }

  /** Fails (= retries) active jobs no live process holds; returns how many. One process scans at a time. */
  async reap(): Promise<number> {
    if (!this.jobs) return 0
    const jobs = this.jobs
    // Released while the lock is held, so a second scanner cannot see them still active and fail them twice.
    const orphans = await this.db.transaction().execute(async (trx) => {
      const lock = await sql<{ ok: boolean }>`
        select pg_try_advisory_xact_lock(hashtext('consult-desk:reaper')) as ok`.execute(trx)
      if (!lock.rows[0]?.ok) return []
      const r = await sql<{ id: string; name: string }>`
        select j.id, j.name from pgboss.job j
          where j.state = 'active' and j.started_on < now() - make_interval(secs => ${DEAD_AFTER_SECONDS})
            and not exists (
              select 1 from app_instance i
                where i.beat_at > now() - make_interval(secs => ${DEAD_AFTER_SECONDS}) and j.id = any (i.active_jobs))
          limit 500`.execute(trx)
      const byQueue = new Map<string, string[]>()
      for (const o of r.rows) byQueue.set(o.name, [...(byQueue.get(o.name) ?? []), o.id])
      for (const [name, ids] of byQueue) {
        for (const id of ids)
          await jobs.boss.fail(name, id, { message: 'released: the process working on it stopped beating' })
        this.log.warn({ queue: name, jobs: ids.length }, 'released jobs of a process that is gone')
      }
      await sql`delete from app_instance where beat_at < now() - interval '1 hour'`.execute(trx)
      return r.rows
    })
    return orphans.length
  }
}
