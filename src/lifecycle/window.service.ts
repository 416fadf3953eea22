import { audit } from '../audit/audit'
import { clientZone } from '../clients/clients.service'
import { outboxOf, scheduleWindowJobs, type WindowJob } from '../consultations/consultations.jobs'
import { postToTopic, refreshTopic } from '../consultations/desk.service'
import { ratingKeyboard } from '../consultations/ratings'
import { settleHeldAfterEnd } from '../consultations/several'
import { clockNow } from '../db/clock'
import type { Deps } from '../deps'
import { errorSummary } from '../jobs/jobs'
import { Ledger } from '../ledger/ledger.service'
import { APPEALS_UNIT, CONSULTATION_SCOPE } from '../orders/allowances'
import { canTransition, lockOrder, moveOrder } from '../orders/order-state'
import { consultationView, lockConsultationView } from '../orders/orders.repository'
import { consultationPlan, deskHasPlanWith } from '../orders/plan-features'
import { topUpButtons } from '../orders/topups'
import { activeRoute } from '../routing/routes.repository'
import { isTopicUnusable } from '../telegram/api'
import { notify } from '../telegram/notify'
import { formatInstant, staffZone } from '../time/format'
import { closingSoonAt, formatDuration } from '../time/instants'
import { requestTopicClose } from './lifecycle.jobs'
import {
  closeEndedWindow,
  ensureLifecycle,
  findLifecycle,
  markClosingSoon,
  markTopicClosed,
  markWindowClosed,
  openAppealsOf,
  topicLaneIdle,
} from './lifecycle.repository'
import { flagForRefund } from './sla.refund-flag'

/**
 * The window's lifecycle after it opened (opening is the activation's: src/consultations/activation.ts, run at
 * starts_at by the payment, the Start button or the scheduled-start job, tells the client and writes the jobs
 * below). Retries, restarts and duplicate jobs never move starts_at or access_until: nothing here writes them, and
 * every job re-reads the current access_until (an /extend may have moved it) before acting.
 */

export interface LifecycleOptions {
  /** The instant to decide at; default the database clock. */
  now?: Date
}

export type ClosingSoonResult = 'sent' | 'done' | 'moved' | 'not-active' | 'not-due'

/** "Your window closes soon": how long is left and how many appeals remain, once per end of the window. */
export async function runClosingSoon(
  deps: Deps,
  job: WindowJob,
  opts: LifecycleOptions = {},
): Promise<ClosingSoonResult> {
  const head = await consultationView(deps.db, job.consultationId)
  if (!head) return 'not-active'
  const desk = deps.desk(head.bot_id)
  return deps.jobs.transaction(deps.db, async (trx, outbox): Promise<ClosingSoonResult> => {
    const v = await lockConsultationView(trx, job.consultationId)
    if (v?.state !== 'active' || !v.starts_at || !v.access_until) return 'not-active'
    if (v.access_until.toISOString() !== job.accessUntil) {
      // Moved by /extend (whose transaction wrote the jobs for the new end); writing them again adds nothing.
      await scheduleWindowJobs(outbox, desk, v)
      return 'moved'
    }
    const now = opts.now ?? (await clockNow(trx))
    const at = closingSoonAt(desk, { starts_at: v.starts_at, access_until: v.access_until })
    if (!at || now < at) return 'not-due'
    if (now >= v.access_until) return 'not-due' // over already: the close job speaks now
    await ensureLifecycle(trx, v)
    if (!(await markClosingSoon(trx, v.id, v.access_until))) return 'done'
    const acc = await new Ledger(trx).balance(
      { scope: CONSULTATION_SCOPE, subject: v.id, unit: APPEALS_UNIT },
      v.starts_at,
    )
    const zone = await clientZone(trx, desk, v.user_id)
    const open = await openAppealsOf(trx, v.id)
    // The tariff's top-ups (more questions, more hours), offered before the window closes.
    const offer = topUpButtons((l, k, p) => deps.i18n.t(l, k, p), desk, v.tariff_code, v.lang, v.id)
    await notify(outbox, {
      botId: desk.botId,
      chatId: v.user_id,
      lang: v.lang,
      key: 'lifecycle-closing-soon',
      params: {
        title: v.title,
        end: formatInstant(v.access_until, zone, v.lang),
        left: formatDuration((v.access_until.getTime() - now.getTime()) / 60_000, v.lang),
        appealsLeft: acc ? Math.max(0, acc.available) : 0,
        appealsTotal: acc?.granted ?? v.appeals,
      },
      ...(open.length || offer.length
        ? {
            more: [
              ...(open.length
                ? [{ key: 'lifecycle-closing-soon-open', params: { count: open.length } }]
                : []),
              ...(offer.length ? [{ key: 'topup-offer' }] : []),
            ],
          }
        : {}),
      ...(offer.length ? { replyMarkup: { inline_keyboard: offer } } : {}),
      consultationId: v.id,
      dedupeKey: `lifecycle:${v.id}:closing-soon:${v.access_until.getTime()}`,
    })
    return 'sent'
  })
}

export type CloseResult = 'closed' | 'moved' | 'not-active' | 'not-due'

/**
 * The window's end: the consultation and its order close (the order through its transition table), the client is
 * told that new questions need a new consultation and that accepted ones will still be answered (with a button for
 * the transcript), the topic is told and renamed (⚪), breached appeals still open are flagged for a refund decision,
 * and the topic is closed as soon as no accepted appeal waits for an answer.
 */
export async function runWindowClose(
  deps: Deps,
  job: WindowJob,
  opts: LifecycleOptions = {},
): Promise<CloseResult> {
  const head = await consultationView(deps.db, job.consultationId)
  if (!head) return 'not-active'
  const desk = deps.desk(head.bot_id)
  return deps.jobs.transaction(deps.db, async (trx, outbox): Promise<CloseResult> => {
    const order = await lockOrder(trx, head.order_id)
    const v = await lockConsultationView(trx, job.consultationId)
    if (!order || !v || v.state !== 'active' || !v.access_until) return 'not-active'
    const now = opts.now ?? (await clockNow(trx))
    if (now < v.access_until) {
      // Extended since this job was written: the job for the current end exists (or is written now, once).
      await scheduleWindowJobs(outbox, desk, v)
      return v.access_until.toISOString() === job.accessUntil ? 'not-due' : 'moved'
    }
    const closed = await closeEndedWindow(trx, v.id, now)
    if (!closed) return 'not-active'
    if (canTransition(order.state, 'closed')) await moveOrder(trx, order, 'closed')
    await ensureLifecycle(trx, v)
    await markWindowClosed(trx, v.id, now)
    const open = await openAppealsOf(trx, v.id)
    await audit(trx, {
      botId: desk.botId,
      actorId: null,
      action: 'consultation.window_closed',
      subjectType: 'consultation',
      subjectId: v.id,
      details: {
        orderId: order.id,
        startsAt: v.starts_at?.toISOString() ?? null,
        accessUntil: v.access_until.toISOString(),
        closedBy: now.toISOString(),
        openAppeals: open.map((a) => a.number),
      },
    })
    const zone = await clientZone(trx, desk, v.user_id)
    // A support plan without transcript export offers no transcript button (src/orders/plan-features.ts).
    const plan = deskHasPlanWith(desk, 'transcriptExport', false)
      ? await consultationPlan(trx, desk, v.id)
      : undefined
    const transcript = plan?.features.transcriptExport !== false
    await notify(outbox, {
      botId: desk.botId,
      chatId: v.user_id,
      lang: v.lang,
      key: transcript ? 'lifecycle-closed' : 'lifecycle-closed-no-transcript',
      params: { title: v.title, end: formatInstant(v.access_until, zone, v.lang) },
      more: [
        ...(open.length ? [{ key: 'lifecycle-closed-open', params: { count: open.length } }] : []),
        { key: 'rating-ask' },
      ],
      replyMarkup: {
        inline_keyboard: [
          ...(transcript
            ? [[{ text: deps.i18n.t(v.lang, 'transcript-button'), callback_data: `tr:get:${v.id}` }]]
            : []),
          ...ratingKeyboard((l, k, p) => deps.i18n.t(l, k, p), v.lang, v.id).inline_keyboard,
        ],
      },
      consultationId: v.id,
      dedupeKey: `lifecycle:${v.id}:closed`,
    })
    const lang = desk.defaultLanguage
    await postToTopic(trx, outbox, {
      consultationId: v.id,
      botId: desk.botId,
      key: open.length ? 'lifecycle-topic-closed-open' : 'lifecycle-topic-closed',
      params: {
        end: formatInstant(v.access_until, staffZone(desk), lang),
        open: open.map((a) => `#${a.number}`).join(', '),
      },
      dedupeKey: `lifecycle:note:closed:${v.id}`,
    })
    await refreshTopic(trx, outbox, v)
    for (const a of open) if (a.breached_at) await flagForRefund(trx, outbox, deps, desk, v, a, now)
    if (open.length === 0) await requestTopicClose(outbox, v.id, 2)
    // Messages held for a choice between this one and others go to the one left, if one is (src/consultations).
    await settleHeldAfterEnd(outbox, { botId: desk.botId, userId: v.user_id }, `closed:${v.id}`)
    return 'closed'
  })
}

export type TopicCloseResult = 'closed' | 'not-ready' | 'busy' | 'done' | 'no-topic'

/**
 * Closes the staff topic of a closed consultation once every accepted appeal is answered and the topic lane has
 * posted everything (a post into a closed topic would make the lane reopen it). A network call, so outside any
 * transaction; the mark is written after Telegram answered, and closing an already closed topic is not an error.
 */
export async function runTopicClose(deps: Deps, consultationId: number): Promise<TopicCloseResult> {
  const v = await consultationView(deps.db, consultationId)
  if (v?.state !== 'closed') return 'not-ready'
  if ((await openAppealsOf(deps.db, v.id)).length > 0) return 'not-ready'
  const l = await findLifecycle(deps.db, v.id)
  if (l?.topic_closed_at) return 'done'
  if (!(await topicLaneIdle(deps.db, v.id))) {
    // Let the lane finish its posts (the closing note, the rename) first; one queued retry per consultation.
    await requestTopicClose(outboxOf(deps.jobs, deps.db), v.id, 3)
    return 'busy'
  }
  const route = await activeRoute(deps.db, v.id)
  if (route) {
    try {
      await deps.api(v.bot_id).closeForumTopic(route.support_chat_id, route.message_thread_id)
    } catch (err) {
      const d = (err as { description?: string }).description ?? ''
      // Closed already (TOPIC_NOT_MODIFIED), or gone: either way there is nothing left to close.
      if (!/TOPIC_NOT_MODIFIED/i.test(d) && !isTopicUnusable(err)) throw err
      deps.log.info({ consultation_id: v.id, err: errorSummary(err) }, 'topic already closed or gone')
    }
  }
  await deps.jobs.transaction(deps.db, async (trx) => {
    await ensureLifecycle(trx, v)
    await markTopicClosed(trx, v.id)
    await audit(trx, {
      botId: v.bot_id,
      actorId: null,
      action: 'consultation.topic_closed',
      subjectType: 'consultation',
      subjectId: v.id,
      details: { thread: route?.message_thread_id ?? null },
    })
  })
  return route ? 'closed' : 'no-topic'
}
