import type { DeskRuntime } from '../config/load'
import { claimUpdate } from '../db/once'
import type { Deps } from '../deps'
import { findSnippet } from '../experts/experts.service'
import { consultationView } from '../orders/orders.repository'
import { recordStaffAnswer, type StaffMessageResult } from './answers'
import { retryConflicts } from './retry'

/**
 * `/s NAME` in a topic: the snippet (src/experts) goes to the client as the expert's answer, through the same path
 * as a typed reply (recordStaffAnswer: the client lane, and for an open question its first response, SLA and
 * answered_by), in the language of the consultation. Once per update: a redelivered command sends nothing.
 */
export type SnippetAnswer =
  | { status: 'unknown' }
  | { status: 'duplicate' }
  | { status: 'sent'; result: StaffMessageResult }

export async function answerWithSnippet(
  deps: Deps,
  desk: DeskRuntime,
  input: { updateId: number; consultationId: number; staffId: number; name: string },
): Promise<SnippetAnswer> {
  const v = await consultationView(deps.db, input.consultationId)
  if (!v) return { status: 'unknown' }
  const snippet = await findSnippet(deps.db, desk, input.name, v.lang)
  if (!snippet) return { status: 'unknown' }
  const r = await retryConflicts(() =>
    deps.jobs.transaction(deps.db, async (trx, outbox) => {
      if (!(await claimUpdate(trx, desk.botId, input.updateId))) return undefined
      return recordStaffAnswer(trx, outbox, deps, desk, {
        consultationId: input.consultationId,
        staffId: input.staffId,
        item: { kind: 'text', text: snippet.text },
      })
    }),
  )
  return r ? { status: 'sent', result: r } : { status: 'duplicate' }
}
