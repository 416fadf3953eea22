import { sql } from 'kysely'
import type { DeskRuntime } from '../config/load'
import { claimUpdate } from '../db/once'
import type { Deps } from '../deps'
import { buildTranscript } from '../lifecycle/transcript'
import { sendFileOnce } from '../telegram/send-file-once'
import { type ExportJob, exportQueue } from './privacy.jobs'

/**
 * /mydata (issues 18, 26): everything this desk holds about one client, as a JSON file sent by a job (sendDocument)
 * - their client row, orders, payments, consultations, questions (appeals), the messages they gave and received
 * (their own messages, and what was sent into their chat, with its stored content), their ratings with comments,
 * disputes with their follow-ups, and the transcript of each finished consultation. Only this desk's rows (bot_id):
 * the same person on another desk of the deployment is another client. Not included, being the staff's working
 * notes and not the client's: the notes in the staff topic (an AI draft with its model, token counts and cost, who
 * closed it), the drafts themselves, provider and delivery error texts, staff /note texts, who an expert is.
 */

/** One export per client and desk per this many minutes: 25 /mydata in a row queue one file, not 25. */
export const EXPORT_EVERY_MINUTES = 10

export type ExportRequest =
  | { status: 'queued' }
  | { status: 'duplicate' }
  /** An export was queued less than EXPORT_EVERY_MINUTES ago: the client may ask again from `nextAt`. */
  | { status: 'too-soon'; nextAt: Date }

/**
 * Queues the export; one file per update (a redelivered /mydata finds its claim and queues nothing) and one per
 * client every EXPORT_EVERY_MINUTES. The limit is one upsert in the same transaction (data_export_request): the
 * time moves forward only once the interval has passed, so requests at once queue one export, whatever the process.
 */
export async function requestExport(
  deps: Deps,
  desk: DeskRuntime,
  input: { userId: number; lang: string; updateId: number },
): Promise<ExportRequest> {
  return deps.jobs.transaction(deps.db, async (trx, outbox) => {
    if (!(await claimUpdate(trx, desk.botId, input.updateId))) return { status: 'duplicate' }
    const taken = await sql<{ requested_at: Date }>`
      insert into data_export_request as r (bot_id, user_id, requested_at)
      values (${desk.botId}, ${input.userId}, now())
      on conflict (bot_id, user_id) do update set requested_at = now()
        where r.requested_at <= now() - make_interval(mins => ${EXPORT_EVERY_MINUTES})
      returning r.requested_at`.execute(trx)
    if (!taken.rows.length) {
      // The conflicting row is locked by the upsert: this reads the export that was queued.
      const last = await sql<{ next_at: Date }>`
        select requested_at + make_interval(mins => ${EXPORT_EVERY_MINUTES}) as next_at from data_export_request
        where bot_id = ${desk.botId} and user_id = ${input.userId}`.execute(trx)
      return { status: 'too-soon', nextAt: last.rows[0]!.next_at }
    }
    await outbox.send(exportQueue, {
      botId: desk.botId,
      userId: input.userId,
      lang: input.lang,
      key: `mydata:${desk.botId}:${input.userId}:${input.updateId}`,
    })
    return { status: 'queued' }
  })
}

/** What the desk `botId` holds about `userId`, as one JSON-ready object. */
export async function collectClientData(deps: Deps, desk: DeskRuntime, userId: number, lang: string) {
  const db = deps.db
  const botId = desk.botId
  const client = await db
    .selectFrom('client')
    .selectAll()
    .where('bot_id', '=', botId)
    .where('user_id', '=', userId)
    .executeTakeFirst()
  const orders = await db
    .selectFrom('orders')
    .selectAll()
    .where('bot_id', '=', botId)
    .where('user_id', '=', userId)
    .orderBy('id')
    .execute()
  const payments = await db
    .selectFrom('payment')
    .select([
      'id',
      'order_id',
      'telegram_payment_charge_id',
      'currency',
      'total_amount',
      'kind',
      'created_at',
    ])
    .select(['refunded_at', 'refund_started_at'])
    .where('bot_id', '=', botId)
    .where('user_id', '=', userId)
    .orderBy('id')
    .execute()
  const consultations = await db
    .selectFrom('consultation')
    .select(['id', 'order_id', 'state', 'starts_at', 'access_until', 'closed_at', 'revoked_at', 'created_at'])
    .where('bot_id', '=', botId)
    .where('user_id', '=', userId)
    .orderBy('id')
    .execute()
  const ids = consultations.map((c) => c.id)
  const appeals = ids.length
    ? await db
        .selectFrom('desk_appeal')
        .select(['id', 'consultation_id', 'number', 'state', 'accepted_at', 'due_at', 'first_response_at'])
        .select(['in_time', 'breached_at'])
        .where('consultation_id', 'in', ids)
        .orderBy('id')
        .execute()
    : []
  const messages = await db
    .selectFrom('desk_message')
    .select(['id', 'consultation_id', 'appeal_id', 'direction', 'kind', 'content_type', 'content', 'state'])
    .select(['accepted_at', 'sent_at', 'created_at'])
    .where('bot_id', '=', botId)
    .where((eb) =>
      eb.or([eb('chat_id', '=', userId), ...(ids.length ? [eb('consultation_id', 'in', ids)] : [])]),
    )
    // What their chat showed (the transcript's rule): their own messages, and what was sent to them.
    .where((eb) =>
      eb.or([
        eb.and([eb('direction', '=', 'in'), eb('kind', '=', 'copy')]),
        eb.and([eb('direction', '=', 'out'), eb('state', '=', 'sent')]),
      ]),
    )
    .orderBy('id')
    .execute()
  const ratings = await db
    .selectFrom('consultation_rating')
    .select(['consultation_id', 'score', 'comment', 'created_at', 'updated_at'])
    .where('bot_id', '=', botId)
    .where('user_id', '=', userId)
    .orderBy('consultation_id')
    .execute()
  const disputes = await db
    .selectFrom('dispute')
    .select(['id', 'payment_id', 'telegram_payment_charge_id', 'order_id', 'reason', 'state', 'resolution'])
    .select(['created_at', 'resolved_at'])
    .where('bot_id', '=', botId)
    .where('user_id', '=', userId)
    .orderBy('id')
    .execute()
  const followUps = disputes.length
    ? await db
        .selectFrom('audit_log')
        .select(['subject_id', 'details', 'at'])
        .where('bot_id', '=', botId)
        .where('action', '=', 'dispute.client_added')
        .where('subject_type', '=', 'dispute')
        .where(
          'subject_id',
          'in',
          disputes.map((d) => String(d.id)),
        )
        .orderBy('id')
        .execute()
    : []
  const transcripts: { consultation_id: number; text: string }[] = []
  for (const c of consultations)
    if (c.state === 'closed' || c.state === 'revoked')
      transcripts.push({ consultation_id: c.id, text: await buildTranscript(deps, desk, c.id, lang) })
  return {
    generated_at: new Date().toISOString(),
    desk: desk.slug,
    user_id: userId,
    client: client
      ? {
          first_name: client.first_name,
          last_name: client.last_name,
          username: client.username,
          language_code: client.language_code,
          time_zone: client.time_zone,
          banned_at: client.banned_at,
          created_at: client.created_at,
          forgotten_at: client.forgotten_at,
        }
      : null,
    orders: orders.map((o) => ({
      id: o.id,
      kind: (o as { kind?: string }).kind,
      tariff: o.tariff_code,
      title: o.title,
      price_stars: o.price_stars,
      state: o.state,
      lang: o.lang,
      terms_version: o.terms_version,
      created_at: o.created_at,
      paid_at: o.paid_at,
    })),
    payments,
    consultations,
    appeals,
    messages,
    ratings,
    disputes: disputes.map((d) => ({
      ...d,
      follow_ups: followUps
        .filter((f) => f.subject_id === String(d.id))
        .map((f) => ({ text: (f.details as { text?: string } | null)?.text ?? null, at: f.at })),
    })),
    transcripts,
  }
}

/** The job: build the file and send it, recording the result under the request's key before completing. */
export function runExport(deps: Deps, job: ExportJob): Promise<void> {
  return sendFileOnce(deps, job, async () => {
    const desk = deps.desk(job.botId)
    const data = await collectClientData(deps, desk, job.userId, job.lang)
    return {
      body: `${JSON.stringify(data, null, 2)}\n`,
      filename: `mydata-${desk.slug}.json`,
      caption: deps.i18n.t(job.lang, 'privacy-mydata-caption'),
    }
  })
}
