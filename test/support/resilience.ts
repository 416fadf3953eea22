import type { Update, User } from 'grammy/types'
import { sql } from 'kysely'
import { afterAll, beforeAll, expect } from 'vitest'
import { createI18n } from '../../src/bot/i18n'
import { type DeskRuntime, loadConfig } from '../../src/config/load'
import { Jobs } from '../../src/jobs/jobs'
import { quietLogger } from '../../src/log'
import { QUEUES } from '../../src/workers'
import { activateClient } from './activate'
import { STAFF_CHAT_ID, TEST_BOT_ID, TEST_CONFIG, TEST_TOKEN } from './app'
import {
  type BotApiStandIn,
  type PushResult,
  type StartOptions,
  startBotApi,
  type UpdateDraft,
} from './bot-api'
import { createTestDatabase, type TestDatabase } from './db'
import { eventually } from './fixtures'
import { removeConfigs } from './processes'

/**
 * What the tests of processes under faults share (kill -9, database outages): the Bot API stand-in, a database,
 * active consultations made by the real activation (written from this process, handled by the app's processes),
 * delivery as Telegram does it (a webhook POST without a 200 is delivered again) and the checks that nothing was
 * lost.
 */
export interface FaultWorld {
  tg: BotApiStandIn
  db: TestDatabase
  desk: DeskRuntime
  /** pg-boss in this process, only to write jobs (the app's workers run them). */
  jobs: Jobs
  close(): Promise<void>
}

export async function startFaultWorld(tgOptions: StartOptions = {}): Promise<FaultWorld> {
  const tg = await startBotApi({ defaultWaitTimeoutMs: 60_000, ...tgOptions })
  tg.forum({ id: STAFF_CHAT_ID, title: 'Staff' })
  const db = await createTestDatabase()
  const jobs = Jobs.create(db.url, QUEUES, quietLogger(), { schedule: false })
  await jobs.start()
  const desk = loadConfig({
    CONFIG_FILE: TEST_CONFIG,
    BOT_TOKEN: TEST_TOKEN,
    DATABASE_URL: db.url,
    TELEGRAM_API_ROOT: tg.root,
  }).desks[0]!
  return {
    tg,
    db,
    desk,
    jobs,
    async close() {
      await jobs.stop()
      await db.drop()
      await tg.close()
    },
  }
}

/** Registers the file's world: started before its tests, closed (and the process configs removed) after them. */
export function useFaultWorld(set: (w: FaultWorld) => void, tgOptions: StartOptions = {}): void {
  let world: FaultWorld | undefined
  beforeAll(async () => {
    world = await startFaultWorld(tgOptions)
    set(world)
  })
  afterAll(async () => {
    await world?.close()
    removeConfigs()
  })
}

const i18n = createI18n('ru')

/** A client with an active consultation (its topic is created by the app's workers). */
export async function activeClient(
  w: FaultWorld,
  n: number,
): Promise<{ user: User; consultationId: number }> {
  const user = w.tg.user({ first_name: `Client${n}`, language_code: 'en' })
  return { user, consultationId: await activateClient(w.jobs, w.db.db, w.desk, i18n, user) }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * Delivers an update as Telegram does: polling = queued until a getUpdates confirms it; webhook = POSTed until the
 * answer is a 200 (a refused connection, a 500 or a process killed mid-request means "again, a little later").
 */
export async function deliver(tg: BotApiStandIn, draft: UpdateDraft): Promise<PushResult> {
  let r = await tg.push(TEST_BOT_ID, draft)
  for (let i = 0; r.mode === 'webhook' && r.status !== 200; i++) {
    if (i > 600) throw new Error(`update ${r.update.update_id} not accepted after ${i} deliveries`)
    await sleep(Math.min(100 * 2 ** i, 1000))
    r = await tg.redeliver(TEST_BOT_ID, r)
  }
  return r
}

export interface Sent {
  user: User
  consultationId: number
  messageIds: number[]
}

/**
 * A stream of client messages: each client sends `perClient` texts `gapMs` apart (their chats in parallel, each in
 * order, as people type), delivered as Telegram does. Returns what was sent.
 */
export async function stream(
  w: FaultWorld,
  clients: { user: User; consultationId: number }[],
  perClient: number,
  gapMs: number,
): Promise<Sent[]> {
  return Promise.all(
    clients.map(async (c, k) => {
      const ids: number[] = []
      await sleep(k * (gapMs / clients.length))
      for (let i = 0; i < perClient; i++) {
        const draft = w.tg.privateText(c.user, `question ${i} from client ${k}`) as UpdateDraft & {
          message: NonNullable<Update['message']>
        }
        ids.push(draft.message.message_id)
        await deliver(w.tg, draft)
        await sleep(gapMs)
      }
      return { ...c, messageIds: ids }
    }),
  )
}

/**
 * Waits until every sent message is accepted and copied into its consultation's topic, then checks: in order
 * within each consultation, one live topic per consultation. Returns the duplicate copies (a message copied more
 * than once: only possible when a worker died between Telegram's answer and its record).
 *
 * The wait is bounded by progress, not by the clock: it fails when no message has been copied for `stallMs` (a
 * lost message stops the count below the total for good). A slow machine only makes the tail longer; a total
 * bound here failed CI on a loaded machine while every message was on its way.
 */
export async function expectAllDelivered(w: FaultWorld, sent: Sent[], stallMs = 90_000): Promise<number> {
  const total = sent.reduce((n, s) => n + s.messageIds.length, 0)
  const chats = sent.map((s) => s.user.id)
  const count = async () => {
    const r = await sql<{ n: number }>`
      select count(*)::int as n from desk_message
        where bot_id = ${TEST_BOT_ID} and chat_id = any (${chats}::bigint[]) and direction = 'in'
          and kind = 'copy' and state = 'sent'`.execute(w.db.db)
    return r.rows[0]!.n
  }
  try {
    let last = -1
    let since = Date.now()
    await eventually(
      async () => {
        // An update the stand-in got below the offset the bot had confirmed is lost by the harness, not the app.
        const late = w.tg.lateUpdates(TEST_BOT_ID).map((u) => u.update_id)
        if (late.length)
          throw new Error(`the test delivered updates ${late.join(', ')} after later ones were confirmed`)
        const n = await count()
        if (n > last) [last, since] = [n, Date.now()]
        else if (Date.now() - since > stallMs)
          throw new Error(`${last} of ${total} messages copied, none for ${stallMs} ms`)
        return n >= total
      },
      `${total} messages copied to their topics`,
      Number.POSITIVE_INFINITY,
    )
  } catch (e) {
    // In the error itself: a CI log keeps the failure's summary when it cuts the stderr printed before it.
    const where = await diagnose(w, chats).catch((d) => `(no diagnosis: ${(d as Error).message})`)
    throw new Error(`${(e as Error).message}\nwhere things stand: ${JSON.stringify(where)}`, { cause: e })
  }
  let duplicates = 0
  for (const s of sent) {
    const rows = await w.db.db
      .selectFrom('desk_message')
      .select(['message_id', 'state', 'mirror_message_id', 'mirror_thread_id'])
      .where('bot_id', '=', TEST_BOT_ID)
      .where('chat_id', '=', s.user.id)
      .orderBy('message_id')
      .execute()
    // Every message accepted (none refused, none lost), once.
    expect(rows.map((r) => r.message_id)).toEqual(s.messageIds)
    expect(rows.every((r) => r.state === 'sent')).toBe(true)
    // In the topic in the order the client wrote them.
    const mirrors = rows.map((r) => r.mirror_message_id!)
    expect(mirrors).toEqual([...mirrors].sort((a, b) => a - b))
    const routes = await w.db.db
      .selectFrom('desk_route')
      .select('message_thread_id')
      .where('consultation_id', '=', s.consultationId)
      .where('state', '=', 'active')
      .execute()
    expect(routes).toHaveLength(1)
    for (const id of s.messageIds) {
      const copies = w.tg
        .callsTo(['copyMessage', 'copyMessages'], (p) => p.from_chat_id === s.user.id, { ok: true })
        .filter((c) => (c.payload.message_ids ?? [c.payload.message_id]).includes(id)).length
      duplicates += Math.max(0, copies - 1)
    }
  }
  return duplicates
}

/** Where things stand, for a failure message: messages, inbox, lane jobs and leases. */
async function diagnose(w: FaultWorld, chats: number[]) {
  const q = async (text: ReturnType<typeof sql>) => (await text.execute(w.db.db)).rows
  return {
    messages: await q(sql`select state, count(*)::int from desk_message
      where chat_id = any (${chats}::bigint[]) group by state`),
    inbox: await q(sql`select state, count(*)::int, max(attempts) as attempts, max(tries) as tries,
      min(last_error) as error from inbox_update group by state`),
    jobs: await q(sql`select name, state, count(*)::int from pgboss.job group by name, state order by name`),
    leases: await q(
      sql`select consultation_id, in_lease, in_lease_until, in_queued, card_dirty from desk_consultation`,
    ),
    pending: await q(sql`select consultation_id, count(*)::int, min(created_at) from desk_message
      where state = 'pending' group by consultation_id`),
    // What the stand-in still holds for a polling bot, and what it got too late to give (see BotState.late).
    unconfirmed: w.tg.pendingUpdates(TEST_BOT_ID).map((u) => u.update_id),
    late: w.tg.lateUpdates(TEST_BOT_ID).map((u) => u.update_id),
    now: await q(sql`select now()`),
  }
}
