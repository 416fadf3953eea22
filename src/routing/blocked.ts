import { markBlocked } from '../clients/clients.repository'
import type { Deps } from '../deps'
import type { DeskConsultationView } from '../orders/orders.repository'
import { lockConsultationKey, markClientBlocked, setDeskFlags } from './desk-consultation.repository'
import { markPendingOutBlocked } from './messages.repository'
import { insertNote } from './notes'
import { wakeLane } from './routing.jobs'

/**
 * A 403 from the client: recorded once on the consultation (and the client), pending items to the client parked
 * as blocked, the staff told once in the topic. Nothing retries; the client's next message re-queues them.
 */
export async function recordClientBlocked(deps: Deps, v: DeskConsultationView): Promise<void> {
  await deps.jobs.transaction(deps.db, async (trx, outbox) => {
    await lockConsultationKey(trx, v.id)
    const at = await markClientBlocked(trx, v.id)
    await markBlocked(trx, v.bot_id, v.user_id)
    await markPendingOutBlocked(trx, v.id)
    if (!at) return
    deps.log.info({ consultation_id: v.id }, 'client blocked the bot')
    await insertNote(
      trx,
      v,
      'in',
      'desk-note-client-blocked',
      {},
      `desk:note:blocked:${v.id}:${at.getTime()}`,
    )
    await setDeskFlags(trx, v.id, { card_dirty: true })
    await wakeLane(outbox, v.id, 'in')
  })
}
