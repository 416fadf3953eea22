import { audit } from '../audit/audit'
import { clientZone } from '../clients/clients.service'
import type { Trx } from '../db/database'
import type { Deps } from '../deps'
import { assignAtActivation } from '../experts/assign'
import type { Outbox } from '../jobs/jobs'
import { grantConsultationAllowances } from '../orders/allowances'
import { lockOrder, moveOrder } from '../orders/order-state'
import {
  type Consultation,
  dbNow,
  lockConsultation,
  type Order,
  updateOrder,
} from '../orders/orders.repository'
import { notify } from '../telegram/notify'
import { isOpen, nextOpening } from '../time/business-time'
import { windowParams } from '../time/client-time'
import { formatInstant } from '../time/format'
import { deskSchedule } from '../time/schedule'
import { clientTopicQueue } from './client-topic'
import { consultationActivatedQueue, scheduleWindowJobs } from './consultations.jobs'

/**
 * Making a consultation active: the one place that starts an access window. Used by the successful_payment
 * transaction (immediate start), by the Start button (on_request), by the scheduled-start job (scheduled slots and
 * start dates agreed after a late payment) and by admins.
 *
 * It runs inside the caller's transaction and, in that transaction: locks the order and then the consultation (the
 * same order every caller uses, so two activations cannot deadlock), sets starts_at/access_until from the database
 * clock, moves the order to active, grants the window's appeals and drafts on the ledger, and writes the
 * consultation.activated job, the window's closing jobs (src/lifecycle) and the client's confirmation to the outbox.
 *
 * Idempotent: a consultation that is already active returns `already-active` with its window and writes nothing,
 * so a redelivered update or a retried job never restarts a paid window.
 */

export type ActivationReason = 'payment' | 'start_button' | 'scheduled' | 'admin'

export interface ActivateInput {
  consultationId: number
  /** The window's start; default: now (database clock). A start in the past is allowed (a slot that has begun). */
  startsAt?: Date
  actorId: number | null
  reason: ActivationReason
}

export type ActivateResult =
  | { status: 'activated'; consultation: Consultation; order: Order }
  | { status: 'already-active'; consultation: Consultation; order: Order }
  /** Revoked (refunded), closed, or its order is not in a state that can start. */
  | {
      status: 'not-startable'
      consultation: Consultation | undefined
      orderState: Order['state'] | undefined
    }

const STARTABLE_ORDER_STATES: readonly Order['state'][] = ['created', 'reserved', 'cancelled', 'paid_waiting']

export async function activateConsultation(
  trx: Trx,
  outbox: Outbox,
  deps: Pick<Deps, 'desk' | 'i18n'>,
  input: ActivateInput,
): Promise<ActivateResult> {
  const head = await trx
    .selectFrom('consultation')
    .select(['order_id', 'bot_id'])
    .where('id', '=', input.consultationId)
    .executeTakeFirst()
  if (!head) return { status: 'not-startable', consultation: undefined, orderState: undefined }
  const desk = deps.desk(head.bot_id)
  const order = await lockOrder(trx, head.order_id)
  const c = await lockConsultation(trx, input.consultationId)
  if (!order || !c) return { status: 'not-startable', consultation: c, orderState: order?.state }
  if (c.state === 'active') return { status: 'already-active', consultation: c, order }
  if (c.state !== 'waiting' || !STARTABLE_ORDER_STATES.includes(order.state))
    return { status: 'not-startable', consultation: c, orderState: order.state }

  const now = await dbNow(trx)
  const startsAt = input.startsAt ?? now
  const accessUntil = new Date(startsAt.getTime() + order.window_minutes * 60_000)
  const updated = await trx
    .updateTable('consultation')
    .set({ state: 'active', starts_at: startsAt, access_until: accessUntil, updated_at: now })
    .where('id', '=', c.id)
    .returningAll()
    .executeTakeFirstOrThrow()
  await moveOrder(trx, order, 'active')
  if (order.needs_start_date) await updateOrder(trx, order.id, { needs_start_date: false })

  await grantConsultationAllowances(trx, desk, updated, order)
  // Its owner (src/experts): the tariff's expert, else the least loaded available one; before the topic is drawn.
  await assignAtActivation(trx, outbox, desk, { id: c.id, tariffCode: order.tariff_code, title: order.title })

  await outbox.send(consultationActivatedQueue, { consultationId: c.id })
  // Its own topic in the client's private chat, when the bot has them (issue 26, client-topic.ts).
  await outbox.send(clientTopicQueue, { consultationId: c.id })
  await scheduleWindowJobs(outbox, desk, updated)
  const zone = await clientZone(trx, desk, order.user_id)
  // Started while the desk is closed (an immediate tariff bought outside hours): when the first answer can come.
  const schedule = deskSchedule(desk)
  const closed = !isOpen(schedule, startsAt)
  await notify(outbox, {
    botId: desk.botId,
    chatId: order.user_id,
    lang: order.lang,
    key: 'consultation-activated',
    params: { title: order.title, ...windowParams(updated, order, zone) },
    ...(closed
      ? {
          more: [
            {
              key: 'consultation-activated-closed',
              params: { opens: formatInstant(nextOpening(schedule, startsAt), zone, order.lang) },
            },
          ],
        }
      : {}),
    replyMarkup: {
      inline_keyboard: [[{ text: deps.i18n.t(order.lang, 'tz-change-button'), callback_data: 'tz:menu' }]],
    },
    dedupeKey: `consultation:${c.id}:activated`,
    lane: 'payment',
    consultationId: c.id,
  })
  await audit(trx, {
    botId: desk.botId,
    actorId: input.actorId,
    action: 'consultation.activated',
    subjectType: 'consultation',
    subjectId: c.id,
    details: {
      orderId: order.id,
      reason: input.reason,
      startsAt: startsAt.toISOString(),
      accessUntil: accessUntil.toISOString(),
    },
  })
  return { status: 'activated', consultation: updated, order }
}
