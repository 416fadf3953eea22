import type { Selectable } from 'kysely'
import { sql } from 'kysely'
import { audit } from '../audit/audit'
import { clientZone } from '../clients/clients.service'
import type { DeskRuntime } from '../config/load'
import type { Trx } from '../db/database'
import { claimUpdate } from '../db/once'
import type { Deps } from '../deps'
import { dbNow, findPayment, listUserPayments } from '../orders/orders.repository'
import { notify } from '../telegram/notify'
import { tellAdmins } from '../telegram/private-alerts'
import { cut } from '../text'
import { addBusinessMinutes } from '../time/business-time'
import { formatInstant } from '../time/format'
import { deskSchedule } from '../time/schedule'
import {
  disputeCloseTopicQueue,
  disputeNoteQueue,
  disputeRelayQueue,
  disputeTopicQueue,
} from './disputes.jobs'
import type { DisputeTables } from './disputes.tables'

/**
 * The /paysupport dispute desk. A dispute is a ticket (its id is the number the client sees) linked to a payment's
 * charge id, with a topic in the staff group that carries the client card and the Refund / Decline / Close buttons.
 * Every action is audited; every client-facing message leaves through the outbox.
 */

export type Dispute = Selectable<DisputeTables['dispute']>

export const MAX_REASON_LENGTH = 1500

export type OpenDisputeResult =
  | { status: 'opened' | 'appended'; dispute: Dispute; replyBy: string }
  | { status: 'payment-unknown' }
  | { status: 'duplicate' }

/**
 * Opens a ticket (or, when one is already open for this client and payment, adds the new text to it). Idempotent
 * under replays: the unique index on open tickets per (client, payment) turns a second insert into an append.
 */
export async function openDispute(
  deps: Deps,
  desk: DeskRuntime,
  input: { userId: number; lang: string; paymentId: number | null; reason: string; updateId?: number },
): Promise<OpenDisputeResult> {
  const reason = cut(input.reason.trim(), MAX_REASON_LENGTH)
  return deps.jobs.transaction(deps.db, async (trx, outbox): Promise<OpenDisputeResult> => {
    // A button press (not a conversation step) claims its update: a redelivery adds nothing to the ticket.
    if (input.updateId !== undefined && !(await claimUpdate(trx, desk.botId, input.updateId)))
      return { status: 'duplicate' }
    let payment: Awaited<ReturnType<typeof findPayment>>
    if (input.paymentId !== null) {
      payment = await findPayment(trx, input.paymentId)
      if (!payment || payment.bot_id !== desk.botId || payment.user_id !== input.userId)
        return { status: 'payment-unknown' }
    }
    const now = await dbNow(trx)
    // What the client is promised: an answer within the desk's rules.disputeAnswerHours of its business time.
    const replyByAt = addBusinessMinutes(deskSchedule(desk), now, desk.rules.disputeAnswerHours * 60)
    const inserted = await trx
      .insertInto('dispute')
      .values({
        bot_id: desk.botId,
        user_id: input.userId,
        payment_id: payment?.id ?? null,
        telegram_payment_charge_id: payment?.telegram_payment_charge_id ?? null,
        order_id: payment?.order_id ?? null,
        lang: input.lang,
        reason,
        reply_by: replyByAt,
      })
      .onConflict((oc) =>
        oc.expression(sql`bot_id, user_id, coalesce(payment_id, 0)`).where('state', '=', 'open').doNothing(),
      )
      .returningAll()
      .executeTakeFirst()
    const zone = await clientZone(trx, desk, input.userId)
    if (inserted) {
      const replyBy = formatInstant(replyByAt, zone, input.lang)
      await outbox.send(disputeTopicQueue, { disputeId: inserted.id })
      await notify(outbox, {
        botId: desk.botId,
        chatId: input.userId,
        lang: input.lang,
        key: 'dispute-opened',
        params: { ticket: String(inserted.id), by: String(replyBy) },
        dedupeKey: `dispute:${inserted.id}:opened`,
      })
      // The owner and admins privately, once per ticket (the topic in the staff group is the working place).
      await tellAdmins(trx, outbox, desk, {
        alertKey: `ticket:${inserted.id}`,
        key: 'alert-ticket',
        params: { ticket: String(inserted.id), user: String(input.userId), reason: cut(reason, 300) },
      })
      await audit(trx, {
        botId: desk.botId,
        actorId: input.userId,
        action: 'dispute.opened',
        subjectType: 'dispute',
        subjectId: inserted.id,
        details: { paymentId: inserted.payment_id, charge: inserted.telegram_payment_charge_id },
      })
      return { status: 'opened', dispute: inserted, replyBy }
    }
    const open = await trx
      .selectFrom('dispute')
      .selectAll()
      .where('bot_id', '=', desk.botId)
      .where('user_id', '=', input.userId)
      .where(sql<boolean>`coalesce(payment_id, 0) = ${payment?.id ?? 0}`)
      .where('state', '=', 'open')
      .forUpdate()
      .executeTakeFirstOrThrow()
    const n = await trx
      .selectFrom('audit_log')
      .select(sql<number>`count(*)::int`.as('n'))
      .where('subject_type', '=', 'dispute')
      .where('subject_id', '=', String(open.id))
      .where('action', '=', 'dispute.client_added')
      .executeTakeFirstOrThrow()
    await audit(trx, {
      botId: desk.botId,
      actorId: input.userId,
      action: 'dispute.client_added',
      subjectType: 'dispute',
      subjectId: open.id,
      details: { text: reason },
    })
    await outbox.send(disputeNoteQueue, { disputeId: open.id, seq: n.n + 1, text: reason })
    const replyBy = formatInstant(open.reply_by, zone, open.lang)
    await notify(outbox, {
      botId: desk.botId,
      chatId: input.userId,
      lang: input.lang,
      key: 'dispute-appended',
      params: { ticket: String(open.id), by: String(replyBy) },
      dedupeKey: `dispute:${open.id}:appended:${n.n + 1}`,
    })
    return { status: 'appended', dispute: open, replyBy }
  })
}

/** The client's recent payments, newest first: what /paysupport offers to open a ticket about. */
export function paymentsToDispute(deps: Deps, desk: DeskRuntime, userId: number, limit = 8) {
  return listUserPayments(deps.db, desk.botId, userId, limit)
}

export function findDisputeByThread(q: Deps['db'] | Trx, botId: number, threadId: number) {
  return q
    .selectFrom('dispute')
    .selectAll()
    .where('bot_id', '=', botId)
    .where('thread_id', '=', threadId)
    .executeTakeFirst()
}

export function findDispute(q: Deps['db'] | Trx, disputeId: number) {
  return q.selectFrom('dispute').selectAll().where('id', '=', disputeId).executeTakeFirst()
}

function lockDispute(trx: Trx, disputeId: number) {
  return trx.selectFrom('dispute').selectAll().where('id', '=', disputeId).forUpdate().executeTakeFirst()
}

export type DisputeActionResult =
  | { status: 'done'; dispute: Dispute }
  | { status: 'not-open'; dispute: Dispute }
  | { status: 'unknown' }

/** "Decline" pressed: the admin's next message in the topic becomes the reason. */
export async function awaitDeclineReason(
  deps: Deps,
  desk: DeskRuntime,
  input: { disputeId: number; adminId: number },
): Promise<DisputeActionResult> {
  return deps.db.transaction().execute(async (trx): Promise<DisputeActionResult> => {
    const d = await lockDispute(trx, input.disputeId)
    if (!d || d.bot_id !== desk.botId) return { status: 'unknown' }
    if (d.state !== 'open') return { status: 'not-open', dispute: d }
    await trx
      .updateTable('dispute')
      .set({ decline_pending_by: input.adminId, updated_at: sql`now()` })
      .where('id', '=', d.id)
      .execute()
    await audit(trx, {
      botId: desk.botId,
      actorId: input.adminId,
      action: 'dispute.decline_started',
      subjectType: 'dispute',
      subjectId: d.id,
    })
    return { status: 'done', dispute: d }
  })
}

/** Declines a ticket with the admin's reason; the client gets the reason in their language's frame. */
export async function declineDispute(
  deps: Deps,
  desk: DeskRuntime,
  input: { disputeId: number; adminId: number; reason: string },
): Promise<DisputeActionResult> {
  return resolve(deps, desk, input.disputeId, input.adminId, 'declined', cut(input.reason.trim(), 1000))
}

export async function closeDispute(
  deps: Deps,
  desk: DeskRuntime,
  input: { disputeId: number; adminId: number },
): Promise<DisputeActionResult> {
  return resolve(deps, desk, input.disputeId, input.adminId, 'closed', null)
}

async function resolve(
  deps: Deps,
  desk: DeskRuntime,
  disputeId: number,
  adminId: number,
  state: 'declined' | 'closed',
  reason: string | null,
): Promise<DisputeActionResult> {
  return deps.jobs.transaction(deps.db, async (trx, outbox): Promise<DisputeActionResult> => {
    const d = await lockDispute(trx, disputeId)
    if (!d || d.bot_id !== desk.botId) return { status: 'unknown' }
    if (d.state !== 'open') return { status: 'not-open', dispute: d }
    const updated = await trx
      .updateTable('dispute')
      .set({
        state,
        resolution: reason ?? state,
        resolved_by: adminId,
        resolved_at: sql`now()`,
        decline_pending_by: null,
        updated_at: sql`now()`,
      })
      .where('id', '=', d.id)
      .returningAll()
      .executeTakeFirstOrThrow()
    await audit(trx, {
      botId: desk.botId,
      actorId: adminId,
      action: `dispute.${state}`,
      subjectType: 'dispute',
      subjectId: d.id,
      details: reason ? { reason } : {},
    })
    await notify(outbox, {
      botId: desk.botId,
      chatId: d.user_id,
      lang: d.lang,
      key: state === 'declined' ? 'dispute-declined' : 'dispute-closed',
      params: { ticket: String(d.id), reason: reason ?? '' },
      dedupeKey: `dispute:${d.id}:${state}`,
    })
    if (d.thread_id) await outbox.send(disputeCloseTopicQueue, { disputeId: d.id })
    return { status: 'done', dispute: updated }
  })
}

/** A staff message in a ticket's topic: queued for copying to the client (an internal note prefix stays). */
export async function relayStaffMessage(
  deps: Deps,
  desk: DeskRuntime,
  input: { dispute: Dispute; fromId: number; messageId: number },
): Promise<void> {
  await deps.jobs.transaction(deps.db, async (trx, outbox) => {
    await outbox.send(disputeRelayQueue, {
      disputeId: input.dispute.id,
      fromChatId: desk.staffChatId,
      messageId: input.messageId,
    })
    await audit(trx, {
      botId: desk.botId,
      actorId: input.fromId,
      action: 'dispute.staff_message',
      subjectType: 'dispute',
      subjectId: input.dispute.id,
      details: { messageId: input.messageId },
    })
  })
}
