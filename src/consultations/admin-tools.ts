import { sql } from 'kysely'
import { audit } from '../audit/audit'
import { findClient } from '../clients/clients.repository'
import { clientZone, setClientZone } from '../clients/clients.service'
import type { DeskRuntime } from '../config/load'
import { deskLanguage } from '../config/rules.schema'
import { claimUpdate } from '../db/once'
import type { Deps } from '../deps'
import { APPEALS_UNIT, CONSULTATION_SCOPE } from '../orders/allowances'
import { canTransition, lockOrder, moveOrder } from '../orders/order-state'
import { lockConsultationView } from '../orders/orders.repository'
import { isDeskAdminNow } from '../settings/settings'
import { notify } from '../telegram/notify'
import { cut, MESSAGE_TEXT_MAX } from '../text'
import { formatInstant, staffZone } from '../time/format'
import { consultationActivatedQueue, scheduleWindowJobs } from './consultations.jobs'
import { postToTopic, refreshTopic, setClientBan } from './desk.service'

/**
 * What an admin does from Telegram that had no command before (issue 25; the handlers are in
 * src/bot/features/admin-tools.ts): grant extra questions, reopen a consultation closed by mistake, set a client's
 * time zone, write to a client outside a topic. Each runs in one transaction, writes an audit row, and reaches the
 * client through the notify outbox. A command's effects are claimed with its update id in the same transaction, so a
 * redelivered update does nothing twice; the state checks (active, closed, the zone already set) make a repeat say
 * so instead of acting again. The actor's right is checked again in each transaction, against the desk's committed
 * staff (isDeskAdminNow): an admin demoted after the command or button was shown changes nothing ('forbidden').
 */

type Actor = { actorId: number; actorLabel: string; updateId: number }

export type GrantResult =
  | { status: 'granted'; count: number; granted: number; left: number }
  | { status: 'duplicate' }
  | { status: 'unknown' }
  | { status: 'not-active'; state: string }
  | { status: 'forbidden' }

/**
 * More questions for an active consultation: a grant on its appeals account for its window, exact on the ledger
 * (request id from the update, so a replay grants nothing more). The client and the topic are told.
 */
export async function grantQuestions(
  deps: Deps,
  desk: DeskRuntime,
  input: Actor & { consultationId: number; count: number },
): Promise<GrantResult> {
  return deps.jobs.transaction(deps.db, async (trx, outbox): Promise<GrantResult> => {
    if (!(await isDeskAdminNow(trx, desk.botId, input.actorId))) return { status: 'forbidden' }
    if (!(await claimUpdate(trx, desk.botId, input.updateId))) return { status: 'duplicate' }
    const head = await consultationHead(trx, desk, input.consultationId)
    if (!head) return { status: 'unknown' }
    await lockOrder(trx, head.order_id)
    const c = await lockConsultationView(trx, input.consultationId)
    if (c?.state !== 'active' || !c.starts_at || !c.access_until)
      return { status: 'not-active', state: c?.state ?? 'unknown' }
    const g = await deps.ledger.in(trx).grant({
      requestId: `admin-grant:${desk.botId}:${input.updateId}`,
      scope: CONSULTATION_SCOPE,
      subject: c.id,
      unit: APPEALS_UNIT,
      periodStart: c.starts_at,
      periodEnd: c.access_until,
      amount: input.count,
      timeZone: desk.schedule.timezone,
    })
    if (!g.ok) throw new Error(`consultation ${c.id}: grant refused (${g.reason})`)
    await audit(trx, {
      botId: desk.botId,
      actorId: input.actorId,
      action: 'consultation.questions_granted',
      subjectType: 'consultation',
      subjectId: c.id,
      details: { count: input.count, granted: g.account.granted, available: g.account.available },
    })
    await notify(outbox, {
      botId: desk.botId,
      chatId: c.user_id,
      lang: c.lang,
      key: 'adm-granted-client',
      params: { count: input.count, left: g.account.available },
      consultationId: c.id,
      dedupeKey: `admin:granted:${desk.botId}:${input.updateId}`,
    })
    await postToTopic(trx, outbox, {
      consultationId: c.id,
      botId: desk.botId,
      key: 'adm-granted-topic',
      params: { by: input.actorLabel, count: input.count, left: g.account.available },
      dedupeKey: `admin:note:granted:${desk.botId}:${input.updateId}`,
    })
    await refreshTopic(trx, outbox, c, { card: true })
    return { status: 'granted', count: input.count, granted: g.account.granted, left: g.account.available }
  })
}

export type ReopenResult =
  | { status: 'reopened'; accessUntil: Date }
  | { status: 'duplicate' }
  | { status: 'unknown' }
  | { status: 'not-closed'; state: string }
  | { status: 'plan' }
  | { status: 'forbidden' }

/**
 * Reopens a consultation that was closed (by /close or by its window's end), not refunded: the consultation and its
 * order are active again, until the later of its own window's end and now + `hours`. So one closed early by
 * mistake gets its window back, and one whose window ran out gets `hours` more. Its ledger accounts (questions,
 * drafts) take the new end as their period's end and admit again; the closing jobs are scheduled for the new end;
 * the topic is reopened by its lane at the next post. A support plan's window follows its payments: refused.
 */
export async function reopenConsultation(
  deps: Deps,
  desk: DeskRuntime,
  input: Actor & { consultationId: number; hours: number },
): Promise<ReopenResult> {
  return deps.jobs.transaction(deps.db, async (trx, outbox): Promise<ReopenResult> => {
    if (!(await isDeskAdminNow(trx, desk.botId, input.actorId))) return { status: 'forbidden' }
    if (!(await claimUpdate(trx, desk.botId, input.updateId))) return { status: 'duplicate' }
    const head = await consultationHead(trx, desk, input.consultationId)
    if (!head) return { status: 'unknown' }
    const order = await lockOrder(trx, head.order_id)
    const c = await lockConsultationView(trx, input.consultationId)
    if (!order || !c) return { status: 'unknown' }
    if (order.kind !== 'consultation') return { status: 'plan' }
    if (c.state !== 'closed' || c.revoked_at || !c.starts_at || !canTransition(order.state, 'active'))
      return { status: 'not-closed', state: order.state === 'refunded' ? 'refunded' : c.state }
    const now = (await sql<{ now: Date }>`select now() as now`.execute(trx)).rows[0]!.now
    const wanted = now.getTime() + Math.round(input.hours * 3_600_000)
    const until = new Date(Math.max(wanted, c.access_until?.getTime() ?? 0))
    await trx
      .updateTable('consultation')
      .set({ state: 'active', closed_at: null, access_until: until, updated_at: sql`now()` })
      .where('id', '=', c.id)
      .execute()
    await moveOrder(trx, order, 'active')
    const accounts = await trx
      .updateTable('ledger_account')
      .set({ period_end: until, active: true })
      .where('scope', '=', CONSULTATION_SCOPE)
      .where('subject', '=', String(c.id))
      .where('period_start', '=', c.starts_at)
      .returning('id')
      .execute()
    // The topic was closed after the window: it is marked open again, and the lane reopens it at its next post.
    await trx
      .updateTable('consultation_lifecycle')
      .set({ window_closed_at: null, topic_closed_at: null })
      .where('consultation_id', '=', c.id)
      .execute()
    await audit(trx, {
      botId: desk.botId,
      actorId: input.actorId,
      action: 'consultation.reopened',
      subjectType: 'consultation',
      subjectId: c.id,
      details: {
        hours: input.hours,
        closedAt: c.closed_at?.toISOString() ?? null,
        from: c.access_until?.toISOString() ?? null,
        to: until.toISOString(),
        accounts: accounts.length,
      },
    })
    await scheduleWindowJobs(outbox, desk, { id: c.id, starts_at: c.starts_at, access_until: until })
    await outbox.send(consultationActivatedQueue, { consultationId: c.id })
    const zone = await clientZone(trx, desk, c.user_id)
    await notify(outbox, {
      botId: desk.botId,
      chatId: c.user_id,
      lang: c.lang,
      key: 'adm-reopened-client',
      params: { title: c.title, end: formatInstant(until, zone, c.lang) },
      consultationId: c.id,
      dedupeKey: `admin:reopened:${c.id}:${until.getTime()}`,
    })
    await postToTopic(trx, outbox, {
      consultationId: c.id,
      botId: desk.botId,
      key: 'adm-reopened-topic',
      params: {
        by: input.actorLabel,
        end: formatInstant(until, staffZone(desk), desk.defaultLanguage),
      },
      dedupeKey: `admin:note:reopened:${c.id}:${until.getTime()}`,
    })
    await refreshTopic(trx, outbox, c)
    return { status: 'reopened', accessUntil: until }
  })
}

export type ZoneResult =
  | { status: 'set'; zone: string }
  | { status: 'unchanged'; zone: string }
  | { status: 'unknown-client' }
  | { status: 'bad-zone' }
  | { status: 'forbidden' }

/** Sets a client's time zone (the one they see times in), audited; the client is told in their zone's words. */
export async function setZoneByAdmin(
  deps: Deps,
  desk: DeskRuntime,
  input: Omit<Actor, 'actorLabel'> & { userId: number; zone: string },
): Promise<ZoneResult> {
  return deps.jobs.transaction(deps.db, async (trx, outbox): Promise<ZoneResult> => {
    if (!(await isDeskAdminNow(trx, desk.botId, input.actorId))) return { status: 'forbidden' }
    const client = await trx
      .selectFrom('client')
      .select(['time_zone', 'language_code'])
      .where('bot_id', '=', desk.botId)
      .where('user_id', '=', input.userId)
      .forUpdate()
      .executeTakeFirst()
    if (!client) return { status: 'unknown-client' }
    if (client.time_zone === input.zone) return { status: 'unchanged', zone: input.zone }
    if (!(await setClientZone(trx, desk.botId, input.userId, input.zone))) return { status: 'bad-zone' }
    await audit(trx, {
      botId: desk.botId,
      actorId: input.actorId,
      action: 'client.zone_set',
      subjectType: 'client',
      subjectId: input.userId,
      details: { from: client.time_zone, to: input.zone },
    })
    await notify(outbox, {
      botId: desk.botId,
      chatId: input.userId,
      lang: langOf(desk, client.language_code),
      key: 'adm-zone-client',
      params: { zone: input.zone },
      dedupeKey: `admin:zone:${desk.botId}:${input.updateId}`,
    })
    return { status: 'set', zone: input.zone }
  })
}

export type WriteResult =
  | { status: 'queued' }
  | { status: 'duplicate' }
  | { status: 'unknown-client' }
  | { status: 'forbidden' }

/**
 * A message from the desk to a client outside any topic: through the notify outbox (the private chat's budget, a
 * 403 recorded as blocked), once per update, audited with its text (which /forget erases with the client's data).
 */
export async function writeToClient(
  deps: Deps,
  desk: DeskRuntime,
  input: Omit<Actor, 'actorLabel'> & { userId: number; text: string },
): Promise<WriteResult> {
  return deps.jobs.transaction(deps.db, async (trx, outbox): Promise<WriteResult> => {
    if (!(await isDeskAdminNow(trx, desk.botId, input.actorId))) return { status: 'forbidden' }
    if (!(await claimUpdate(trx, desk.botId, input.updateId))) return { status: 'duplicate' }
    const client = await findClient(trx, desk.botId, input.userId)
    if (!client || client.forgotten_at) return { status: 'unknown-client' }
    const text = cut(input.text, MESSAGE_TEXT_MAX - 200)
    await audit(trx, {
      botId: desk.botId,
      actorId: input.actorId,
      action: 'client.written',
      subjectType: 'client',
      subjectId: input.userId,
      details: { text },
    })
    await notify(outbox, {
      botId: desk.botId,
      chatId: input.userId,
      lang: langOf(desk, client.language_code),
      key: 'adm-desk-message',
      params: { text },
      dedupeKey: `admin:write:${desk.botId}:${input.updateId}`,
    })
    return { status: 'queued' }
  })
}

function consultationHead(trx: Parameters<typeof lockOrder>[0], desk: DeskRuntime, id: number) {
  return (
    trx
      .selectFrom('consultation')
      .select(['order_id'])
      .where('id', '=', id)
      // Only this desk's consultation: another desk's id finds nothing.
      .where('bot_id', '=', desk.botId)
      .executeTakeFirst()
  )
}

function langOf(desk: DeskRuntime, code: string | null): string {
  return deskLanguage(desk, code)
}

export type BanResult =
  | { status: 'done' }
  | { status: 'already' }
  | { status: 'unknown-client' }
  | { status: 'forbidden' }

/**
 * Bans or unbans a client by id, with or without a topic (the topic's /ban does it from the topic): the desk's
 * setClientBan, audited there; a second ban (or unban) changes nothing and says so.
 */
export async function banById(
  deps: Deps,
  desk: DeskRuntime,
  input: { userId: number; banned: boolean; actorId: number; actorLabel: string },
): Promise<BanResult> {
  if (!(await findClient(deps.db, desk.botId, input.userId))) return { status: 'unknown-client' }
  const r = await setClientBan(deps, desk, input)
  return { status: r }
}

export interface BannedClient {
  userId: number
  name: string
  bannedAt: Date
  bannedBy: number | null
}

/** The desk's banned clients, most recent first. */
export async function bannedClients(deps: Deps, desk: DeskRuntime, limit = 30): Promise<BannedClient[]> {
  const rows = await deps.db
    .selectFrom('client')
    .select(['user_id', 'first_name', 'last_name', 'username', 'banned_at', 'banned_by'])
    .where('bot_id', '=', desk.botId)
    .where('banned_at', 'is not', null)
    .orderBy('banned_at', 'desc')
    .limit(limit)
    .execute()
  return rows.map((r) => ({
    userId: r.user_id,
    name: [r.first_name, r.last_name].filter(Boolean).join(' ') + (r.username ? ` @${r.username}` : ''),
    bannedAt: r.banned_at!,
    bannedBy: r.banned_by,
  }))
}
