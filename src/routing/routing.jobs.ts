import type { Db, Trx } from '../db/database'
import type { Jobs, Outbox } from '../jobs/jobs'
import { defineQueue, type QueueDef } from '../jobs/queue'
import type { Direction } from './routing.tables'

/**
 * The delivery queues: a job means "the lane of this consultation has work", never "send this message". The job
 * carries only the consultation id; the lane reads what to send, in order, from desk_message. So a duplicate,
 * retried or late job is harmless (it finds nothing, or finds the lane busy and leaves it to the holder).
 *
 * Policy `short`: at most one queued (not yet started) job per consultation and lane; a message admitted while
 * one is queued adds nothing. A job may be started while another for the same consultation runs; the lane lease
 * sorts that out. Expiry (300 s) is longer than the lease (LEASE_SECONDS in lanes.ts, 12 s), so a crashed holder's
 * job comes back after its lease lapsed (src/jobs/liveness.ts releases it long before the expiry: once its holder
 * has stopped beating for DEAD_AFTER_SECONDS).
 */
export interface LaneJob {
  consultationId: number
}

const LANE_OPTIONS = {
  policy: 'short' as const,
  retryLimit: 8,
  retryDelay: 2,
  retryBackoff: true,
  expireInSeconds: 300,
  retentionDays: 3,
}

/** Into the staff topic: topic creation, card, client copies (in order, albums together), notes, edits. */
export const deskInQueue = defineQueue<LaneJob>('desk.in', LANE_OPTIONS, 4)
/**
 * Into the client's chat: staff copies and bot texts (in order), edits. More workers than the topic lane: every
 * client's chat has its own window (the staff group's one window is what holds `desk.in` back), so up to the bot's
 * 30 a second the answers go as fast as lanes run side by side - each run spends most of its time waiting for
 * Telegram's round trip. Order within a consultation is the lease's, the limits the shared budget's.
 */
export const deskOutQueue = defineQueue<LaneJob>('desk.out', LANE_OPTIONS, 8)
/**
 * Every minute: lanes with work whose job was lost (dead-lettered after long Telegram trouble) get a new one, so
 * an accepted message is never left pending. `stately`: one sweep at a time.
 */
export const deskSweepQueue = defineQueue<Record<string, never>>('desk.sweep', {
  policy: 'stately',
  retryLimit: 1,
  expireInSeconds: 60,
  retentionDays: 1,
})
export const DESK_SWEEP_CRON = '* * * * *'

export function laneQueue(dir: Direction): QueueDef<LaneJob> {
  return dir === 'in' ? deskInQueue : deskOutQueue
}

/** Enqueue the lane's job in the caller's transaction (the item and its job commit together). */
export function wakeLane(outbox: Outbox, consultationId: number, dir: Direction) {
  return outbox.send(laneQueue(dir), { consultationId }, { singletonKey: String(consultationId) })
}

/** Enqueue outside a transaction (a lane deferring itself, the sweeper). */
export async function wakeLaneLater(
  jobs: Jobs,
  db: Db | Trx,
  consultationId: number,
  dir: Direction,
  afterSeconds = 0,
): Promise<void> {
  const q = laneQueue(dir)
  await jobs.send(
    db,
    q,
    { consultationId },
    {
      singletonKey: String(consultationId),
      // pg-boss reads a number as seconds (fractions allowed): an album's quiet period is 1.5 s.
      ...(afterSeconds > 0 ? { startAfter: Math.max(0.2, Math.round(afterSeconds * 10) / 10) } : {}),
    },
  )
  if (afterSeconds <= 0) jobs.nudge(q)
}
