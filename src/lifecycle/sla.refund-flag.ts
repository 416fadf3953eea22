import { audit } from '../audit/audit'
import type { DeskRuntime } from '../config/load'
import { clockNow } from '../db/clock'
import type { Trx } from '../db/database'
import type { Deps } from '../deps'
import type { Outbox } from '../jobs/jobs'
import { type DeskConsultationView, lockConsultationView, primaryPayment } from '../orders/orders.repository'
import { notify } from '../telegram/notify'
import { formatInstant, staffZone } from '../time/format'
import { ensureAppealSla, findAppeal, markRefundFlagged } from './lifecycle.repository'

/**
 * An appeal never answered by the end of the consultation (its window over and its due time passed): the admins
 * are asked for a refund decision, once, with the Refund button of the order's payment.
 */
export async function flagForRefund(
  trx: Trx,
  outbox: Outbox,
  deps: Deps,
  desk: DeskRuntime,
  v: DeskConsultationView,
  a: { id: number; bot_id: number; consultation_id: number; number: number; accepted_at: Date; due_at: Date },
  now: Date,
): Promise<boolean> {
  await ensureAppealSla(trx, a)
  if (!(await markRefundFlagged(trx, a.id, now))) return false
  const lang = desk.defaultLanguage
  const zone = staffZone(desk)
  const p = await primaryPayment(trx, v.order_id)
  await audit(trx, {
    botId: desk.botId,
    actorId: null,
    action: 'sla.refund_flagged',
    subjectType: 'appeal',
    subjectId: a.id,
    details: { consultationId: v.id, number: a.number, paymentId: p?.id ?? null },
  })
  await notify(outbox, {
    botId: desk.botId,
    chatId: desk.staffChatId,
    lang,
    key: 'sla-refund-flag',
    params: {
      consultation: String(v.id),
      title: v.title,
      user: String(v.user_id),
      number: a.number,
      accepted: formatInstant(a.accepted_at, zone, lang),
      due: formatInstant(a.due_at, zone, lang),
      amount: p?.total_amount ?? v.price_stars,
    },
    ...(p && !p.refunded_at
      ? {
          replyMarkup: {
            inline_keyboard: [[{ text: deps.i18n.t(lang, 'btn-refund'), callback_data: `rf:ask:${p.id}` }]],
          },
        }
      : {}),
    dedupeKey: `sla:${a.id}:refund-flag`,
  })
  return true
}

/** The sweeper's path for a breached appeal left open after the consultation ended (e.g. closed early by staff). */
export async function flagIfUnanswered(deps: Deps, appealId: number): Promise<boolean> {
  const head = await findAppeal(deps.db, appealId)
  if (!head) return false
  const desk = deps.desk(head.bot_id)
  return deps.jobs.transaction(deps.db, async (trx, outbox) => {
    const v = await lockConsultationView(trx, head.consultation_id)
    const a = await findAppeal(trx, appealId)
    if (!v || !a || a.state !== 'open' || !a.breached_at) return false
    const now = await clockNow(trx)
    const over = v.state !== 'active' || (v.access_until !== null && v.access_until <= now)
    if (!over) return false
    return flagForRefund(trx, outbox, deps, desk, v, a, now)
  })
}
