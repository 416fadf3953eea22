import { defineQueue } from '../jobs/queue'

/**
 * A hand-off summary for a consultation's new owner (issue 25): written by the hand-over's transaction
 * (experts.service.ts handOver), worked by AI drafting above this floor (src/drafting/handoff.ts, wired in
 * src/workers.ts), so the LLM call never runs inside the hand-over. One per assignment (the job's id is made from
 * it, and the draft's request id is `handoff:<bot>:<assignment>`).
 */
export interface HandoffJob {
  botId: number
  consultationId: number
  /** The expert_assignment row the hand-over started. */
  assignmentId: number
  /** The new owner. */
  to: number
}

export const handoffSummaryQueue = defineQueue<HandoffJob>('experts.handoff_summary', {}, 1)
