import type { MessageEntity } from 'grammy/types'
import { audit } from '../audit/audit'
import { clientZone } from '../clients/clients.service'
import type { DeskRuntime } from '../config/load'
import { extendWindow, postToTopic, refreshTopic } from '../consultations/desk.service'
import { clockNow } from '../db/clock'
import type { Trx } from '../db/database'
import type { Deps } from '../deps'
import { reminderRecipients } from '../experts/experts.service'
import { staffNames } from '../experts/names'
import type { Outbox } from '../jobs/jobs'
import { LedgerTx } from '../ledger/ledger.service'
import { APPEALS_UNIT, CONSULTATION_SCOPE } from '../orders/allowances'
import { lockOrder } from '../orders/order-state'
import { type DeskConsultationView, lockConsultationView } from '../orders/orders.repository'
import type { BreachPolicy } from '../orders/orders.tables'
import { insertItemOnce } from '../routing/messages.repository'
import { wakeLane } from '../routing/routing.jobs'
import { notify } from '../telegram/notify'
import { formatInstant, staffZone } from '../time/format'
import { businessMinutesLeft, formatDuration, reminderAt } from '../time/instants'
import {
  clientBlockedAt,
  ensureAppealSla,
  findAppeal,
  markBreached,
  markReminded,
  noteClientBlocked,
  recordBreachPolicy,
} from './lifecycle.repository'
import type { BreachOutcome } from './lifecycle.tables'
import { flagForRefund } from './sla.refund-flag'

/**
 * The SLA of an appeal after it opened (the due time and the receipt are the admission's; the first response is
 * the answer's): a reminder in the topic before the due time, the breach at the due time with the tariff's breach
 * policy, and the refund question for an appeal still unanswered when the consultation is over (sla.refund-flag.ts).
 *
 * Each runs in one transaction that locks the consultation (the lock every admission and every answer takes; the
 * order row first when the window may move, the order every writer uses) and decides with a conditional UPDATE, so
 * a job that runs twice, or a job and the sweeper at once, do it once. Instants come from the database clock unless
 * a caller passes `now` (tests of the job logic).
 *
 * A client who blocked the bot pauses nothing: the clock runs, the policy applies, the messages to them are
 * recorded as blocked by the notify job; the appeal notes that the client had blocked the bot.
 */

export interface SlaOptions {
  /** The instant to decide at; default the database clock. */
  now?: Date
}

export type ReminderResult = 'reminded' | 'not-due' | 'done' | 'not-open'

/** The reminder before the due time: one message in the topic mentioning the desk's experts. */
export async function runReminder(
  deps: Deps,
  appealId: number,
  opts: SlaOptions = {},
): Promise<ReminderResult> {
  const head = await findAppeal(deps.db, appealId)
  if (!head) return 'not-open'
  const desk = deps.desk(head.bot_id)
  return deps.jobs.transaction(deps.db, async (trx, outbox) => {
    const v = await lockConsultationView(trx, head.consultation_id)
    const a = await findAppeal(trx, appealId)
    if (!v || !a || a.state !== 'open' || a.breached_at) return 'not-open'
    if (v.state === 'revoked' && v.refund_policy === 'stop') return 'not-open'
    const now = opts.now ?? (await clockNow(trx))
    const at = reminderAt(desk, a)
    if (!at || now.getTime() < at.getTime()) return 'not-due'
    // Past the due time a reminder is no help: the breach speaks now.
    if (now.getTime() >= a.due_at.getTime()) return 'not-due'
    await ensureAppealSla(trx, a)
    if (!(await markReminded(trx, a.id, now))) return 'done'
    const blocked = await clientBlockedAt(trx, v.id)
    if (blocked) await noteClientBlocked(trx, a.id, blocked)
    const lang = desk.defaultLanguage
    const t = (key: string, p?: Record<string, string | number>) => deps.i18n.t(lang, key, p)
    // To the owner (src/experts); to the admins when the owner is away or there is none.
    const to = await reminderRecipients(trx, desk, v.id, now)
    const params = {
      number: a.number,
      due: formatInstant(a.due_at, staffZone(desk), lang),
      left: formatDuration(businessMinutesLeft(desk, now, a.due_at), lang),
    }
    const awayLine =
      to.ownerAway && to.owner ? `\n${t('sla-reminder-owner-away', { name: to.owner.name })}` : ''
    // Each person by name (src/experts/names.ts); "expert" / "expert 2" only for someone the desk cannot name.
    const people = to.people.length ? to.people : mentioned(desk)
    const names = await staffNames(trx, desk, people)
    const { text, entities } = withMentions(
      `${t('sla-reminder', params)}${awayLine}`,
      people.map((id, i, all) => ({
        id,
        label: names.get(id) ?? t('sla-expert-mention', { n: all.length > 1 ? i + 1 : 0 }),
      })),
    )
    await insertItemOnce(trx, {
      bot_id: v.bot_id,
      consultation_id: v.id,
      direction: 'in',
      kind: 'text',
      content_type: 'text',
      content: JSON.stringify({ text, entities }),
      state: 'pending',
      dedupe_key: `sla:reminder:${a.id}`,
    })
    await wakeLane(outbox, v.id, 'in')
    for (const id of to.people)
      await notify(outbox, {
        botId: desk.botId,
        chatId: id,
        lang,
        key: 'experts-sla-reminder-private',
        params: { ...params, id: String(v.id) },
        dedupeKey: `sla:reminder:${a.id}:private:${id}`,
      })
    return 'reminded'
  })
}

/** Who the reminder mentions: the desk's experts, else its admins. */
function mentioned(desk: DeskRuntime): number[] {
  return desk.staff.experts.length ? desk.staff.experts : desk.staff.admins
}

/**
 * The text with a line of mentions: a text_mention entity per person (by id: Telegram notifies them without a
 * username). Offsets are UTF-16 code units, as Telegram counts them and as JavaScript strings are.
 */
export function withMentions(
  text: string,
  people: { id: number; label: string }[],
): { text: string; entities: MessageEntity[] } {
  let out = `${text}\n👤 `
  const entities: MessageEntity[] = []
  people.forEach((p, i) => {
    if (i > 0) out += ', '
    entities.push({
      type: 'text_mention',
      offset: out.length,
      length: p.label.length,
      user: { id: p.id, is_bot: false, first_name: p.label },
    })
    out += p.label
  })
  return { text: out, entities }
}

export type BreachResult =
  | { status: 'breached'; outcome: BreachOutcome; detail: Record<string, unknown> }
  | { status: 'not-due' | 'not-open' }

/**
 * The due time has come: if the appeal is still open it is marked breached (once), the topic's name shows it (the
 * lane renames it), the admins are told, and the order's breach policy is applied in the same transaction:
 * `none`; `extend_window` (the desk's extendWindow: access_until and the ledger period move, audited, the window
 * jobs are scheduled for the new end); `extra_appeal` (one more unit granted on the ledger, by a request id of the
 * appeal, so it is granted once). The client is told what they received. A policy can only apply while the window
 * is open; after it, the appeal is flagged to the admins for a refund decision instead.
 */
export async function runBreach(deps: Deps, appealId: number, opts: SlaOptions = {}): Promise<BreachResult> {
  const head = await findAppeal(deps.db, appealId)
  if (!head) return { status: 'not-open' }
  const desk = deps.desk(head.bot_id)
  return deps.jobs.transaction(deps.db, async (trx, outbox): Promise<BreachResult> => {
    const c = await trx
      .selectFrom('consultation')
      .select('order_id')
      .where('id', '=', head.consultation_id)
      .executeTakeFirstOrThrow()
    const order = await lockOrder(trx, c.order_id)
    const v = await lockConsultationView(trx, head.consultation_id)
    if (!order || !v) return { status: 'not-open' }
    // Refunded under "stop": nothing is owed for the questions any more.
    if (v.state === 'revoked' && v.refund_policy === 'stop') return { status: 'not-open' }
    const now = opts.now ?? (await clockNow(trx))
    const a = await markBreached(trx, appealId, now)
    if (!a) {
      const cur = await findAppeal(trx, appealId)
      return { status: cur?.state === 'open' && !cur.breached_at ? 'not-due' : 'not-open' }
    }
    await ensureAppealSla(trx, a)
    const blocked = await clientBlockedAt(trx, v.id)
    const policy = (order.breach_policy ?? { kind: 'none' }) as BreachPolicy
    const windowOpen =
      v.state === 'active' && v.access_until !== null && now.getTime() < v.access_until.getTime()
    const applied = windowOpen
      ? await applyPolicy(trx, outbox, deps, desk, v, a, policy)
      : {
          outcome: 'skipped' as const,
          detail: { reason: v.state === 'revoked' ? 'refunded' : 'window_ended' },
        }
    await recordBreachPolicy(trx, a.id, { policy, ...applied, clientBlockedAt: blocked })
    await audit(trx, {
      botId: desk.botId,
      actorId: null,
      action: 'sla.breached',
      subjectType: 'appeal',
      subjectId: a.id,
      details: {
        consultationId: v.id,
        number: a.number,
        acceptedAt: a.accepted_at.toISOString(),
        dueAt: a.due_at.toISOString(),
        breachedAt: now.toISOString(),
        policy,
        outcome: applied.outcome,
        ...applied.detail,
        clientBlocked: blocked !== null,
      },
    })

    const zone = await clientZone(trx, desk, v.user_id)
    const due = formatInstant(a.due_at, zone, v.lang)
    const clientKey = {
      none: 'sla-breach-client-none',
      extended: 'sla-breach-client-extended',
      extra_appeal: 'sla-breach-client-extra-appeal',
      skipped: v.state === 'revoked' ? undefined : 'sla-breach-client-after-window',
    }[applied.outcome]
    if (clientKey)
      await notify(outbox, {
        botId: desk.botId,
        chatId: v.user_id,
        lang: v.lang,
        key: clientKey,
        params: {
          number: a.number,
          due,
          ...(applied.detail.hours !== undefined ? { hours: Number(applied.detail.hours) } : {}),
          ...(typeof applied.detail.to === 'string'
            ? { end: formatInstant(new Date(applied.detail.to), zone, v.lang) }
            : {}),
          ...(applied.detail.left !== undefined ? { left: Number(applied.detail.left) } : {}),
        },
        consultationId: v.id,
        dedupeKey: `sla:${a.id}:breach:client`,
      })

    const lang = desk.defaultLanguage
    const staffDue = formatInstant(a.due_at, staffZone(desk), lang)
    const policyLine = policyText(deps, desk, applied)
    await notify(outbox, {
      botId: desk.botId,
      chatId: desk.staffChatId,
      lang,
      key: 'sla-breach-admins',
      params: {
        consultation: String(v.id),
        title: v.title,
        user: String(v.user_id),
        number: a.number,
        accepted: formatInstant(a.accepted_at, staffZone(desk), lang),
        due: staffDue,
        policy: policyLine,
      },
      ...(blocked ? { more: [{ key: 'sla-client-blocked' }] } : {}),
      dedupeKey: `sla:${a.id}:breach:admins`,
    })
    await postToTopic(trx, outbox, {
      consultationId: v.id,
      botId: desk.botId,
      key: 'sla-breach-topic',
      params: { number: a.number, due: staffDue, policy: policyLine },
      dedupeKey: `sla:breach:${a.id}`,
    })
    // The topic's name shows the breach (🔴), renamed by the lane: a job, not a call from here.
    await refreshTopic(trx, outbox, v)
    if (!windowOpen) await flagForRefund(trx, outbox, deps, desk, v, a, now)
    return { status: 'breached', ...applied }
  })
}

interface Applied {
  outcome: BreachOutcome
  detail: Record<string, unknown>
}

async function applyPolicy(
  trx: Trx,
  outbox: Outbox,
  deps: Deps,
  desk: DeskRuntime,
  v: DeskConsultationView,
  a: { id: number; number: number },
  policy: BreachPolicy,
): Promise<Applied> {
  switch (policy.kind) {
    case 'extend_window': {
      const r = await extendWindow(trx, outbox, desk, {
        consultationId: v.id,
        hours: policy.hours,
        actorId: null,
        actorLabel: 'SLA',
        reason: `sla breach of appeal #${a.number}`,
        // The client hears it once, in the breach message that says why.
        notifyClient: false,
      })
      if (r.status !== 'extended') return { outcome: 'skipped', detail: { reason: `not ${r.state}` } }
      return {
        outcome: 'extended',
        detail: { hours: policy.hours, from: r.previous.toISOString(), to: r.accessUntil.toISOString() },
      }
    }
    case 'extra_appeal': {
      const g = await new LedgerTx(trx, deps.config.ledger.overrunPolicy, 0).grant({
        requestId: `sla:breach:${a.id}:extra-appeal`,
        scope: CONSULTATION_SCOPE,
        subject: v.id,
        unit: APPEALS_UNIT,
        periodStart: v.starts_at!,
        periodEnd: v.access_until!,
        amount: 1,
        timeZone: desk.schedule.timezone,
      })
      if (!g.ok) {
        deps.log.warn({ appeal: a.id, reason: g.reason }, 'breach policy: extra appeal not granted')
        return { outcome: 'skipped', detail: { reason: `ledger ${g.reason}` } }
      }
      await refreshTopic(trx, outbox, v, { card: true })
      return {
        outcome: 'extra_appeal',
        detail: { granted: 1, left: g.account.available, accountId: g.accountId },
      }
    }
    default:
      return { outcome: 'none', detail: {} }
  }
}

/** The policy's outcome in the desk's language, for the staff. */
function policyText(deps: Deps, desk: DeskRuntime, r: Applied): string {
  const lang = desk.defaultLanguage
  const d = r.detail
  switch (r.outcome) {
    case 'extended':
      return deps.i18n.t(lang, 'sla-policy-extended', {
        hours: Number(d.hours),
        end: formatInstant(new Date(String(d.to)), staffZone(desk), lang),
      })
    case 'extra_appeal':
      return deps.i18n.t(lang, 'sla-policy-extra-appeal', { left: Number(d.left) })
    case 'skipped':
      return deps.i18n.t(
        lang,
        d.reason === 'refunded' ? 'sla-policy-skipped-refunded' : 'sla-policy-skipped-window',
      )
    default:
      return deps.i18n.t(lang, 'sla-policy-none')
  }
}
