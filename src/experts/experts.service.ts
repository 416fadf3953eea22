import { audit } from '../audit/audit'
import { isStaff, mayActIn, mayActOn } from '../config/access'
import type { DeskRuntime } from '../config/load'
import { pick } from '../config/load'
import { SNIPPET_NAME } from '../config/schema'
import { staffChatOf } from '../config/staff-groups'
import type { Db, Trx } from '../db/database'
import { claimUpdate } from '../db/once'
import type { Deps } from '../deps'
import type { Outbox } from '../jobs/jobs'
import { jobId } from '../jobs/queue'
import { lockConsultationView } from '../orders/orders.repository'
import { ensureDeskConsultation, setDeskFlags } from '../routing/desk-consultation.repository'
import { insertNote } from '../routing/notes'
import { activeRoute } from '../routing/routes.repository'
import { wakeLane } from '../routing/routing.jobs'
import { type Notification, notify } from '../telegram/notify'
import { topicLink } from './alerts'
import { everyStaff, isAvailable, staffName } from './availability'
import {
  assignmentHistory,
  currentAssignment,
  deleteSnippet,
  profile,
  profiles,
  putSnippet,
  recordAssignment,
  setMuted,
  storedSnippet,
  storedSnippets,
  upsertProfile,
} from './experts.repository'
import { handoffSummaryQueue } from './handoff.jobs'

/**
 * What staff commands of src/experts do (the bot's handlers call these; they return plain values): hand-over,
 * /away and /back, /mute and /unmute, snippets; and the reads the card, /report and the SLA reminder use.
 * Changes run once per update (the update id is claimed in the same transaction) and answer through the outbox.
 */

/** Where a command's answer goes: a chat (and thread) of the staff group, or a private chat. */
export interface ReplyTo {
  chatId: number
  threadId?: number
}

function reply(outbox: Outbox, desk: DeskRuntime, to: ReplyTo, key: string, updateId: number, params = {}) {
  const n: Notification = {
    botId: desk.botId,
    chatId: to.chatId,
    ...(to.threadId ? { threadId: to.threadId } : {}),
    lang: desk.defaultLanguage,
    key,
    params,
    dedupeKey: `experts:reply:${desk.botId}:${updateId}`,
  }
  return notify(outbox, n)
}

/** Runs `fn` once per update id, in one transaction with its outbox; undefined for a redelivery. */
async function once<T>(
  deps: Deps,
  desk: DeskRuntime,
  updateId: number,
  fn: (trx: Trx, outbox: Outbox) => Promise<T>,
): Promise<T | undefined> {
  return deps.jobs.transaction(deps.db, async (trx, outbox) => {
    if (!(await claimUpdate(trx, desk.botId, updateId))) return undefined
    return fn(trx, outbox)
  })
}

// -------------------------------------------------------------------------------------------------------------
// Owner

export interface OwnerView {
  expertId: number
  name: string
  since: Date
  away: boolean
}

/** The consultation's owner now, with their name and whether they are away (undefined: unassigned). */
export async function ownerOf(q: Db | Trx, desk: DeskRuntime, consultationId: number, at = new Date()) {
  const a = await currentAssignment(q, consultationId)
  if (!a) return undefined
  const p = await profile(q, desk.botId, a.expert_id)
  return {
    expertId: a.expert_id,
    name: staffName(desk, a.expert_id, p),
    since: a.started_at,
    away: !isAvailable(desk, a.expert_id, p, at),
  } satisfies OwnerView
}

/** Who had the consultation when, oldest first. */
export async function ownerHistory(q: Db | Trx, desk: DeskRuntime, consultationId: number) {
  const rows = await assignmentHistory(q, consultationId)
  const ps = new Map(
    (
      await profiles(
        q,
        desk.botId,
        rows.map((r) => r.expert_id),
      )
    ).map((p) => [p.user_id, p]),
  )
  return rows.map((r) => ({ ...r, name: staffName(desk, r.expert_id, ps.get(r.expert_id)) }))
}

/** The staff /assign offers in a staff group, with names: its experts, then the admins. */
export async function assignChoices(deps: Deps, desk: DeskRuntime, chatId: number) {
  const ids = everyStaff(desk).filter((id) => mayActIn(desk, chatId, id))
  const ps = new Map((await profiles(deps.db, desk.botId, ids)).map((p) => [p.user_id, p]))
  return ids.map((id) => ({ id, name: staffName(desk, id, ps.get(id)) }))
}

/** Who the SLA reminder goes to: the owner when available; the admins when the owner is away or there is none. */
export async function reminderRecipients(q: Db | Trx, desk: DeskRuntime, consultationId: number, at: Date) {
  const o = await ownerOf(q, desk, consultationId, at)
  if (o && !o.away) return { owner: o as OwnerView | undefined, people: [o.expertId], ownerAway: false }
  return { owner: o, people: [...desk.staff.admins], ownerAway: o !== undefined }
}

export type HandOverResult =
  | { status: 'handed'; from: number | null; to: number }
  | { status: 'already' }
  | { status: 'not-staff' }
  | { status: 'other-group' }
  /** The one pressing the button may not act in the consultation's own group: nothing was done. */
  | { status: 'not-yours' }
  | { status: 'unknown' }

/**
 * Hands a consultation over (a button of /assign): the current assignment ends and the new one starts at the same
 * instant, under the consultation's row lock, so two hand-overs at once happen one after the other. The topic is
 * told, its name and card are redrawn, the new owner is told in private (with the topic's link).
 */
export async function handOver(
  deps: Deps,
  desk: DeskRuntime,
  input: { consultationId: number; to: number; by: number; byLabel: string },
): Promise<HandOverResult> {
  if (!isStaff(desk, input.to)) return { status: 'not-staff' }
  return deps.jobs.transaction(deps.db, async (trx, outbox) => {
    const c = await lockConsultationView(trx, input.consultationId)
    if (!c || c.bot_id !== desk.botId) return { status: 'unknown' }
    // Judged in the consultation's own group, not in the chat where the button was pressed.
    if (!mayActOn(desk, c, input.by)) return { status: 'not-yours' }
    // The topic stays in its group: an owner who cannot act there could not answer it.
    if (!mayActIn(desk, staffChatOf(desk, c), input.to)) return { status: 'other-group' }
    const current = await currentAssignment(trx, c.id)
    if (current?.expert_id === input.to) return { status: 'already' }
    const a = await recordAssignment(trx, {
      botId: desk.botId,
      consultationId: c.id,
      expertId: input.to,
      by: input.by,
      reason: 'handover',
    })
    await audit(trx, {
      botId: desk.botId,
      actorId: input.by,
      action: 'consultation.handed_over',
      subjectType: 'consultation',
      subjectId: c.id,
      details: { from: current?.expert_id ?? null, to: input.to },
    })
    const names = new Map(
      (await profiles(trx, desk.botId, [input.to, ...(current ? [current.expert_id] : [])])).map((p) => [
        p.user_id,
        p,
      ]),
    )
    const toName = staffName(desk, input.to, names.get(input.to))
    await ensureDeskConsultation(trx, c)
    await insertNote(
      trx,
      c,
      'in',
      'experts-handover-note',
      {
        from: current ? staffName(desk, current.expert_id, names.get(current.expert_id)) : '—',
        to: toName,
        by: input.byLabel,
      },
      `experts:handover:${a.id}`,
    )
    await setDeskFlags(trx, c.id, { card_dirty: true, title_dirty: true })
    await wakeLane(outbox, c.id, 'in')
    const route = await activeRoute(trx, c.id)
    await notify(outbox, {
      botId: desk.botId,
      chatId: input.to,
      lang: desk.defaultLanguage,
      key: 'experts-owner-handed',
      params: { id: String(c.id), title: c.title, by: input.byLabel },
      ...(route
        ? {
            replyMarkup: {
              inline_keyboard: [
                [
                  {
                    text: deps.i18n.t(desk.defaultLanguage, 'experts-alert-open'),
                    url: topicLink(route.support_chat_id, route.message_thread_id),
                  },
                ],
              ],
            },
          }
        : {}),
      dedupeKey: `experts:owner:${c.id}:${input.to}:handover:${a.id}`,
    })
    // A short summary for the new owner, drafted by the LLM in a job (charged like a draft, never to the client).
    await outbox.send(
      handoffSummaryQueue,
      { botId: desk.botId, consultationId: c.id, assignmentId: a.id, to: input.to },
      { id: jobId(`${handoffSummaryQueue.name}:${a.id}`) },
    )
    return { status: 'handed', from: current?.expert_id ?? null, to: input.to }
  })
}

// -------------------------------------------------------------------------------------------------------------
// Availability and mutes

export type AwayResult = 'changed' | 'unchanged' | 'duplicate'

/** /away (away = true) or /back: no new assignments while away; the answer says so. */
export async function setAway(
  deps: Deps,
  desk: DeskRuntime,
  input: { updateId: number; userId: number; name: string; away: boolean; replyTo: ReplyTo },
): Promise<AwayResult> {
  const r = await once(deps, desk, input.updateId, async (trx, outbox) => {
    const before = await profile(trx, desk.botId, input.userId)
    const was = !!before?.away_since
    await upsertProfile(trx, desk.botId, input.userId, {
      name: input.name,
      ...(was !== input.away ? { away_since: input.away ? new Date() : null } : {}),
    })
    if (was !== input.away)
      await audit(trx, {
        botId: desk.botId,
        actorId: input.userId,
        action: input.away ? 'expert.away' : 'expert.back',
        subjectType: 'expert',
        subjectId: input.userId,
        details: {},
      })
    const key = input.away
      ? was
        ? 'experts-away-already'
        : 'experts-away-set'
      : was
        ? 'experts-back-set'
        : 'experts-back-already'
    await reply(outbox, desk, input.replyTo, key, input.updateId, { name: staffName(desk, input.userId) })
    return was !== input.away ? ('changed' as const) : ('unchanged' as const)
  })
  return r ?? 'duplicate'
}

/** /mute or /unmute in a topic: the expert's private alerts of this consultation. */
export async function setAlertsMuted(
  deps: Deps,
  desk: DeskRuntime,
  input: { updateId: number; consultationId: number; expertId: number; muted: boolean },
): Promise<boolean | undefined> {
  return once(deps, desk, input.updateId, async (trx, outbox) => {
    const changed = await setMuted(trx, input.consultationId, input.expertId, input.muted)
    const c = { id: input.consultationId, bot_id: desk.botId }
    await insertNote(
      trx,
      c,
      'in',
      input.muted ? 'experts-muted' : 'experts-unmuted',
      { name: staffName(desk, input.expertId, await profile(trx, desk.botId, input.expertId)) },
      `experts:mute:${desk.botId}:${input.updateId}`,
    )
    await wakeLane(outbox, c.id, 'in')
    return changed
  })
}

/** Remembers the name Telegram shows for a staff member (cards and notes use it when config names nobody). */
export async function rememberStaffName(deps: Deps, desk: DeskRuntime, userId: number, name: string) {
  const p = await profile(deps.db, desk.botId, userId)
  if (p?.name !== name) await upsertProfile(deps.db, desk.botId, userId, { name })
}

// -------------------------------------------------------------------------------------------------------------
// Snippets

export interface Snippet {
  name: string
  text: string
  source: 'config' | 'stored'
}

/** A snippet by name, in a language: stored ones (added with /snippet add) first, then config's. */
export async function findSnippet(
  q: Db | Trx,
  desk: DeskRuntime,
  name: string,
  lang: string,
): Promise<Snippet | undefined> {
  const stored = await storedSnippet(q, desk.botId, name)
  if (stored) return { name, text: stored.text, source: 'stored' }
  const c = desk.expertSettings.snippets[name]
  if (c === undefined) return undefined
  return { name, text: typeof c === 'string' ? c : pick(c, lang, desk.defaultLanguage), source: 'config' }
}

export async function listSnippets(deps: Deps, desk: DeskRuntime): Promise<Snippet[]> {
  const stored = await storedSnippets(deps.db, desk.botId)
  const names = new Set(stored.map((s) => s.name))
  const fromConfig = Object.entries(desk.expertSettings.snippets)
    .filter(([n]) => !names.has(n))
    .map(([name, t]) => ({
      name,
      text: typeof t === 'string' ? t : pick(t, desk.defaultLanguage, desk.defaultLanguage),
      source: 'config' as const,
    }))
  return [
    ...stored.map((s) => ({ name: s.name, text: s.text, source: 'stored' as const })),
    ...fromConfig,
  ].sort((a, b) => a.name.localeCompare(b.name))
}

export type SnippetEdit =
  | 'added'
  | 'replaced'
  | 'deleted'
  | 'missing'
  | 'config-only'
  | 'bad-name'
  | 'duplicate'

/** /snippet add NAME text, /snippet del NAME (admins; the handler checks the role). */
export async function editSnippet(
  deps: Deps,
  desk: DeskRuntime,
  input: { updateId: number; op: 'add' | 'del'; name: string; text?: string; by: number; replyTo: ReplyTo },
): Promise<SnippetEdit> {
  if (!SNIPPET_NAME.test(input.name)) return 'bad-name'
  const r = await once(deps, desk, input.updateId, async (trx, outbox): Promise<SnippetEdit> => {
    let out: SnippetEdit
    if (input.op === 'add') {
      const inserted = await putSnippet(trx, {
        botId: desk.botId,
        name: input.name,
        text: input.text!,
        by: input.by,
      })
      out = inserted ? 'added' : 'replaced'
    } else if (await deleteSnippet(trx, desk.botId, input.name)) out = 'deleted'
    else out = desk.expertSettings.snippets[input.name] !== undefined ? 'config-only' : 'missing'
    if (out === 'added' || out === 'replaced' || out === 'deleted')
      await audit(trx, {
        botId: desk.botId,
        actorId: input.by,
        action: `snippet.${out}`,
        subjectType: 'snippet',
        subjectId: input.name,
        details: input.op === 'add' ? { text: input.text } : {},
      })
    await reply(outbox, desk, input.replyTo, `experts-snippet-${out}`, input.updateId, { name: input.name })
    return out
  })
  return r ?? 'duplicate'
}
