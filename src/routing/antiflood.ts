import { sql } from 'kysely'
import type { Deps } from '../deps'
import type { DeskConsultationView } from '../orders/orders.repository'
import { notify } from '../telegram/notify'
import { mediaKind, preview } from './content'
import type { Item } from './messages.repository'

/**
 * Anti-flood per client (the desk's antiFlood.perMinute, else the deployment's; 0 = off): a client's messages go into the topic one by one up to
 * the rate in any minute (scaled like Telegram's windows: telegramLimits.windowScale). Past it they are kept pending
 * (admitted as usual: the ledger saw them once, at admission, and sees nothing here) and, when the window has room
 * for one more send, everything pending goes together as a digest: one message ("5 more messages from the client:"
 * + the texts, in order, with a line in the place of each photo or file), then the photos and files themselves in
 * one copyMessages right below it. The client is told once per question. An album (media_group_id) ends the digest
 * and goes as itself, already one call; a run of media only goes as one copyMessages without the text.
 * Separate photos cannot be turned into an album by copying (Telegram keeps only an original album's grouping, and
 * sendMediaGroup would need file ids, which the desk does not keep): they arrive as consecutive messages.
 */

const DIGEST_MAX_CHARS = 3800
const DIGEST_MAX_ITEMS = 50
/** Media copied below a digest in its one copyMessages: each counts against the group's 20 a minute. */
const DIGEST_MAX_MEDIA = 10

/** A text goes inside the digest message; anything else is copied below it. */
export function inDigestText(item: Item): boolean {
  return typeof item.content?.text === 'string'
}

export type FloodDecision =
  | { kind: 'send' }
  | { kind: 'wait'; seconds: number }
  | { kind: 'digest'; items: Item[] }

export async function floodDecision(
  deps: Deps,
  v: DeskConsultationView,
  head: Item,
  pending: () => Promise<Item[]>,
): Promise<FloodDecision> {
  const rate = (deps.desk(v.bot_id).antiFlood ?? deps.config.antiFlood).perMinute
  if (rate <= 0 || head.direction !== 'in' || head.kind !== 'copy' || head.chat_id === null)
    return { kind: 'send' }
  const window = 60 * deps.config.telegramLimits.windowScale
  // Sends of this client's messages into the topic in the window (a digest is one send: its items share the mirror).
  const r = await sql<{ sends: number; wait: number | null }>`
    with s as (
      select mirror_message_id, min(sent_at) as at from desk_message
        where consultation_id = ${v.id} and direction = 'in' and chat_id is not null and state = 'sent'
          and sent_at > now() - make_interval(secs => ${window})
        group by mirror_message_id)
    select count(*)::int as sends,
           extract(epoch from (select min(at) from s) + make_interval(secs => ${window}) - now())::float8 as wait
      from s`.execute(deps.db)
  const { sends, wait } = r.rows[0]!
  if (sends >= rate) {
    await tellOnce(deps, v, head)
    return { kind: 'wait', seconds: Math.max(0.2, wait ?? 0.2) }
  }
  if (sends < rate - 1) return { kind: 'send' }
  // The window's last send: everything pending of the client goes together, up to an album.
  const run: Item[] = []
  let chars = 0
  let media = 0
  for (const item of await pending()) {
    if (item.kind !== 'copy' || item.chat_id === null || item.media_group_id) break
    if (run.length >= DIGEST_MAX_ITEMS) break
    const line = inDigestText(item)
      ? item.content!.text!.length
      : preview(item.content_type, item.content, (k) => k).length
    if (chars + line + 2 > DIGEST_MAX_CHARS) break
    if (!inDigestText(item) && ++media > DIGEST_MAX_MEDIA) break
    run.push(item)
    chars += line + 2
  }
  return run.length > 1 ? { kind: 'digest', items: run } : { kind: 'send' }
}

/** The digest's text: the header and each message in order (a text, or a line for a photo or file copied below). */
export function digestText(deps: Deps, lang: string, items: Item[]): string {
  const header = deps.i18n.t(lang, 'desk-flood-digest', { count: items.length })
  const lines = items.map((i) =>
    inDigestText(i)
      ? i.content!.text!
      : deps.i18n.t(lang, 'desk-flood-digest-media', {
          what: preview(i.content_type, i.content, mediaKind(deps.i18n, lang)),
        }),
  )
  return [header, ...lines].join('\n\n')
}

async function tellOnce(deps: Deps, v: DeskConsultationView, head: Item): Promise<void> {
  await deps.jobs.transaction(deps.db, async (trx, outbox) => {
    const r =
      await sql`insert into desk_flood_told (consultation_id, appeal_id) values (${v.id}, ${head.appeal_id ?? 0})
      on conflict do nothing`.execute(trx)
    if (Number(r.numAffectedRows ?? 0) === 0) return
    await notify(outbox, {
      botId: v.bot_id,
      chatId: v.user_id,
      lang: v.lang,
      key: 'desk-flood-told',
      consultationId: v.id,
      dedupeKey: `desk:flood:${v.id}:${head.appeal_id ?? 0}`,
    })
  })
}
