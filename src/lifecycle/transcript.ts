import { clientZone } from '../clients/clients.service'
import type { DeskRuntime } from '../config/load'
import { pick } from '../config/load'
import type { PlanConfig } from '../config/schema'
import type { Db } from '../db/database'
import { claimUpdate } from '../db/once'
import type { Deps } from '../deps'
import { consultationPlan } from '../orders/plan-features'
import { sendFileOnce } from '../telegram/send-file-once'
import { formatInstant } from '../time/format'
import type { TranscriptJob } from './lifecycle.jobs'
import { transcriptQueue } from './lifecycle.jobs'

/**
 * The transcript of a closed consultation: a text file of the conversation as the client saw it, built from what
 * the desk stores (desk_message: the client's messages with their text or caption, the staff answers delivered to
 * them, bot texts sent into their chat), in their language and time zone. Asked for with the button on the
 * "window closed" message or /transcript; sent by a job (sendDocument), once per request.
 */

export type TranscriptRequest =
  | { status: 'queued'; consultationId: number }
  | { status: 'duplicate' }
  | { status: 'none' }
  | { status: 'not-closed'; consultationId: number }
  /** The consultation's support plan does not include transcript export (src/orders/plan-features.ts). */
  | { status: 'not-in-plan'; consultationId: number; plan: PlanConfig }

/**
 * Queues the transcript of `consultationId` (or, without one, the client's latest closed consultation). Only the
 * client's own consultation, only once it closed (or was refunded), and not for a support plan whose features
 * exclude the transcript (refused with the plan named; /mydata still holds it). One file per update: a redelivered update
 * finds its claim and queues nothing.
 */
export async function requestTranscript(
  deps: Deps,
  desk: DeskRuntime,
  input: { userId: number; consultationId?: number; lang: string; updateId: number },
): Promise<TranscriptRequest> {
  return deps.jobs.transaction(deps.db, async (trx, outbox): Promise<TranscriptRequest> => {
    let q = trx
      .selectFrom('consultation')
      .select(['id', 'state'])
      .where('bot_id', '=', desk.botId)
      .where('user_id', '=', input.userId)
    q =
      input.consultationId !== undefined
        ? q.where('id', '=', input.consultationId)
        : q.where('state', 'in', ['closed', 'revoked'])
    const c = await q.orderBy('id', 'desc').executeTakeFirst()
    if (!c) return { status: 'none' }
    if (c.state !== 'closed' && c.state !== 'revoked') return { status: 'not-closed', consultationId: c.id }
    const plan = await consultationPlan(trx, desk, c.id)
    if (plan && !plan.features.transcriptExport) return { status: 'not-in-plan', consultationId: c.id, plan }
    if (!(await claimUpdate(trx, desk.botId, input.updateId))) return { status: 'duplicate' }
    await outbox.send(transcriptQueue, {
      botId: desk.botId,
      consultationId: c.id,
      userId: input.userId,
      lang: input.lang,
      key: `transcript:${c.id}:${input.updateId}`,
    })
    return { status: 'queued', consultationId: c.id }
  })
}

/** The job: build the file and send it, recording the result under the request's key before completing. */
export function runTranscript(deps: Deps, job: TranscriptJob): Promise<void> {
  return sendFileOnce(deps, job, async () => ({
    body: await buildTranscript(deps, deps.desk(job.botId), job.consultationId, job.lang),
    filename: `consultation-${job.consultationId}.txt`,
    caption: deps.i18n.t(job.lang, 'transcript-caption', { id: String(job.consultationId) }),
  }))
}

const MEDIA_LABEL: Record<string, { en: string; ru: string }> = {
  photo: { en: 'photo', ru: 'фото' },
  video: { en: 'video', ru: 'видео' },
  video_note: { en: 'video message', ru: 'видеосообщение' },
  voice: { en: 'voice message', ru: 'голосовое сообщение' },
  audio: { en: 'audio', ru: 'аудио' },
  document: { en: 'file', ru: 'файл' },
  animation: { en: 'GIF', ru: 'GIF' },
  sticker: { en: 'sticker', ru: 'стикер' },
  location: { en: 'location', ru: 'геопозиция' },
  venue: { en: 'place', ru: 'место' },
  contact: { en: 'contact', ru: 'контакт' },
  poll: { en: 'poll', ru: 'опрос' },
  dice: { en: 'dice', ru: 'кубик' },
  story: { en: 'story', ru: 'история' },
}

/**
 * How staff read a transcript (the dashboard): the client is "Client", each staff answer is named by who wrote it
 * (src/experts/names.ts; "Expert" when the desk has no name for them), and a consultation that has not ended says
 * so instead of "ended" in its last line.
 */
export interface StaffReader {
  names: ReadonlyMap<number, string>
}

/** The transcript text: a header, then each message the client's chat showed, oldest first. */
export async function buildTranscript(
  deps: Deps,
  desk: DeskRuntime,
  consultationId: number,
  lang: string,
  staff?: StaffReader,
): Promise<string> {
  const db: Db = deps.db
  const t = (key: string, p?: Record<string, string | number>) => deps.i18n.t(lang, key, p)
  const c = await db
    .selectFrom('consultation as c')
    .innerJoin('orders as o', 'o.id', 'c.order_id')
    .select(['c.id', 'c.user_id', 'c.state', 'c.starts_at', 'c.access_until', 'c.closed_at', 'o.title'])
    .where('c.id', '=', consultationId)
    .executeTakeFirstOrThrow()
  const zone = await clientZone(db, desk, c.user_id)
  const at = (d: Date | null) => (d ? formatInstant(d, zone, lang) : '—')
  const appeals = await db
    .selectFrom('desk_appeal')
    .selectAll()
    .where('consultation_id', '=', consultationId)
    .execute()
  const byId = new Map(appeals.map((a) => [a.id, a]))
  const items = await db
    .selectFrom('desk_message')
    .select([
      'id',
      'direction',
      'kind',
      'content_type',
      'content',
      'state',
      'appeal_id',
      'refusal',
      'from_id',
    ])
    .select(['accepted_at', 'sent_at', 'created_at'])
    .where('consultation_id', '=', consultationId)
    .orderBy('id')
    .execute()

  const lines = [
    t('transcript-title', {
      id: String(c.id),
      title: c.title,
      desk: pick(desk.name, lang, desk.defaultLanguage),
    }),
    t('transcript-window', { start: at(c.starts_at), end: at(c.access_until) }),
    '',
  ]
  const headed = new Set<number>()
  for (const m of items) {
    // What the client's chat showed: their own messages, and what was delivered into it. Topic-only notes, staff
    // messages withheld after a refund or not delivered (blocked, failed, still pending) are not part of it.
    const mine = m.direction === 'in' && m.kind === 'copy'
    const toThem = m.direction === 'out' && m.state === 'sent'
    if (!mine && !toThem) continue
    if (mine && m.appeal_id !== null && !headed.has(m.appeal_id)) {
      headed.add(m.appeal_id)
      const a = byId.get(m.appeal_id)
      if (a) {
        if (lines[lines.length - 1] !== '') lines.push('')
        lines.push(
          t('transcript-appeal', {
            number: a.number,
            accepted: at(a.accepted_at),
            due: at(a.due_at),
            answered: a.first_response_at ? at(a.first_response_at) : t('transcript-not-answered'),
          }),
        )
      }
    }
    const when = mine ? (m.accepted_at ?? m.created_at) : (m.sent_at ?? m.created_at)
    const who = mine
      ? t(staff ? 'transcript-client' : 'transcript-you')
      : m.kind === 'note'
        ? t('transcript-bot')
        : ((m.from_id !== null ? staff?.names.get(m.from_id) : undefined) ?? t('transcript-expert'))
    let body: string
    // A note erased by /forget has no content left: an empty line.
    if (m.kind === 'note')
      body = m.content?.key ? deps.i18n.t(lang, m.content.key, m.content.params ?? {}) : ''
    else {
      const text = m.content?.text ?? m.content?.caption ?? ''
      const label = MEDIA_LABEL[m.content_type]
      body = label ? `[${lang === 'ru' ? label.ru : label.en}]${text ? ` ${text}` : ''}` : text
    }
    let mark = ''
    if (mine && m.state === 'refused')
      mark = ` ${t('transcript-refused', { reason: String(m.refusal?.reason ?? '') })}`
    else if (mine && m.state === 'failed') mark = ` ${t('transcript-failed')}`
    lines.push(`[${at(when)}] ${who}${mark}: ${indent(body)}`)
  }
  if (headed.size === 0 && !items.some((m) => m.direction === 'out' && m.state === 'sent'))
    lines.push(t('transcript-empty'))
  lines.push('', footer(t, c.state, at, c))
  return `${lines.join('\n')}\n`
}

/** The last line: when it ended, or (a staff member reading it early) that it is still running and until when. */
function footer(
  t: (key: string, p?: Record<string, string | number>) => string,
  state: string,
  at: (d: Date | null) => string,
  c: { starts_at: Date | null; access_until: Date | null; closed_at: Date | null },
): string {
  if (state === 'active') return t('transcript-footer-active', { until: at(c.access_until) })
  if (state === 'waiting')
    return c.starts_at
      ? t('transcript-footer-waiting', { start: at(c.starts_at) })
      : t('transcript-footer-unscheduled')
  return t('transcript-footer', { at: at(c.closed_at ?? c.access_until) })
}

/** Continuation lines of a multi-line message, indented under its first line. */
function indent(text: string): string {
  return text.replace(/\n/g, '\n    ')
}
