import type { I18n } from '@grammyjs/i18n'
import type { User } from 'grammy/types'
import type { DeskRuntime } from '../../src/config/load'
import { activateConsultation } from '../../src/consultations/activation'
import type { Db } from '../../src/db/database'
import type { Jobs } from '../../src/jobs/jobs'
import { findTariff, snapshotTariff } from '../../src/orders/tariffs'

/**
 * A client with an active consultation, written as the payment flow writes it (client, order snapshot of a tariff,
 * consultation) and activated by the real activateConsultation in one unit of work; its jobs (topic, card, window)
 * are run by whichever workers run. For tests and benchmarks that drive the app from outside.
 */
export async function activateClient(
  jobs: Jobs,
  db: Db,
  desk: DeskRuntime,
  i18n: I18n<any>,
  user: User,
  tariffCode = 'quick',
): Promise<number> {
  const tariff = findTariff(desk, tariffCode)!
  return jobs.transaction(db, async (trx, outbox) => {
    await trx
      .insertInto('client')
      .values({ bot_id: desk.botId, user_id: user.id, first_name: user.first_name, language_code: 'en' })
      .execute()
    const o = await trx
      .insertInto('orders')
      .values({ bot_id: desk.botId, user_id: user.id, ...snapshotTariff(desk, tariff, 'en') })
      .returning('id')
      .executeTakeFirstOrThrow()
    const c = await trx
      .insertInto('consultation')
      .values({ bot_id: desk.botId, order_id: o.id, user_id: user.id })
      .returning('id')
      .executeTakeFirstOrThrow()
    const r = await activateConsultation(
      trx,
      outbox,
      { desk: () => desk, i18n },
      { consultationId: c.id, actorId: null, reason: 'admin' },
    )
    if (r.status !== 'activated') throw new Error(`activation: ${r.status}`)
    return c.id
  })
}
