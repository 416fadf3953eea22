import type { Db, Trx } from '../db/database'

export interface AuditEntry {
  botId: number
  /** Telegram user id of the person; null when the system acted. */
  actorId: number | null
  action: string
  subjectType: string
  subjectId: string | number
  details?: Record<string, unknown>
}

/** Who did what to what, written in the same transaction as the change it describes. */
export async function audit(trx: Db | Trx, e: AuditEntry): Promise<void> {
  await trx
    .insertInto('audit_log')
    .values({
      bot_id: e.botId,
      actor_id: e.actorId,
      action: e.action,
      subject_type: e.subjectType,
      subject_id: String(e.subjectId),
      details: JSON.stringify(e.details ?? {}),
    })
    .execute()
}
