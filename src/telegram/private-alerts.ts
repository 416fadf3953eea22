import { sql } from 'kysely'
import type { DeskRuntime } from '../config/load'
import type { Trx } from '../db/database'
import type { Deps } from '../deps'
import { deadLetters } from '../jobs/handback'
import type { Outbox } from '../jobs/jobs'
import { defineQueue } from '../jobs/queue'
import { cut } from '../text'
import { notify } from './notify'

/**
 * Private alerts: events that need a person (a /paysupport ticket opened, an update parked, a job dead-lettered, a
 * reconciliation mismatch) told privately to the desk's owner and admins (the owner is one of the admins), once
 * each. Once is a unique key in PostgreSQL (`private_alert (bot_id, alert_key)`) inserted in the caller's
 * transaction with the messages it enqueues: a second detection of the same event (a redelivery, a second scan, two
 * processes at once) inserts nothing and sends nothing. Each message also has its own dedupe key, so a job that runs
 * twice sends once. Messages go through the notify outbox, which honours each private chat's budget.
 */
export interface PrivateAlert {
  /** One event, e.g. `ticket:<dispute id>`, `parked:<update id>`, `dead:<job id>`, `reconcile:<day>`. */
  alertKey: string
  key: string
  params?: Record<string, string | number>
}

type DeskStaff = Pick<DeskRuntime, 'botId' | 'defaultLanguage'> & {
  staff: Pick<DeskRuntime['staff'], 'admins'>
}

/** Tells the desk's admins once per alert key; false when they were told before (nothing is sent). */
export async function tellAdmins(
  trx: Trx,
  outbox: Outbox,
  desk: DeskStaff,
  a: PrivateAlert,
): Promise<boolean> {
  const r = await sql<{ ok: number }>`
    insert into private_alert (bot_id, alert_key) values (${desk.botId}, ${a.alertKey})
    on conflict do nothing returning 1 as ok`.execute(trx)
  if (r.rows.length === 0) return false
  for (const admin of new Set(desk.staff.admins))
    await notify(outbox, {
      botId: desk.botId,
      chatId: admin,
      lang: desk.defaultLanguage,
      key: a.key,
      ...(a.params ? { params: a.params } : {}),
      dedupeKey: `alert:${desk.botId}:${a.alertKey}:${admin}`,
    })
  return true
}

/**
 * Every minute: jobs that went to the dead letters since the last look are told to the admins of the desk they name
 * (`botId` in their data), or of every desk when they name none, once per job (`dead:<job id>`). `stately`: one
 * watch at a time.
 */
export const deadLetterWatchQueue = defineQueue<Record<string, never>>('ops.dead-letters', {
  policy: 'stately',
  retryLimit: 1,
  expireInSeconds: 60,
  retentionDays: 1,
})
export const DEAD_LETTER_WATCH_CRON = '* * * * *'

export async function runDeadLetterWatch(deps: Deps): Promise<number> {
  const found = await deadLetters(deps.db, null, 50)
  let told = 0
  for (const d of found) {
    const desks = deps.config.desks.filter((k) => d.botId === null || k.botId === d.botId)
    await deps.jobs.transaction(deps.db, async (trx, outbox) => {
      for (const desk of desks)
        if (
          await tellAdmins(trx, outbox, desk, {
            alertKey: `dead:${d.id}`,
            key: 'alert-dead-letter',
            params: { queue: d.queue, job: d.id, error: cut(d.error ?? '—', 300) },
          })
        )
          told++
    })
  }
  return told
}
