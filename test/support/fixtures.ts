import { autoRetry } from '@grammyjs/auto-retry'
import { Api } from 'grammy'
import type { Message, User } from 'grammy/types'
import { sql } from 'kysely'
import { expect } from 'vitest'
import type { App, Role } from '../../src/app'
import { upsertClient } from '../../src/clients/clients.repository'
import type { LoadedConfig } from '../../src/config/load'
import { activateConsultation } from '../../src/consultations/activation'
import type { Trx } from '../../src/db/database'
import type { Deps } from '../../src/deps'
import { pendingCount } from '../../src/intake/inbox.repository'
import type { Logger } from '../../src/log'
import { termsHash } from '../../src/orders/orders.service'
import { findTariff, snapshotTariff } from '../../src/orders/tariffs'
import type { Item } from '../../src/routing/messages.repository'
import type { Route } from '../../src/routing/routes.repository'
import {
  ADMIN_ID,
  EXPERT_ID,
  STAFF_CHAT_ID,
  startTestApp,
  TEST_BOT_ID,
  TEST_TOKEN,
  type TestApp,
} from './app'
import {
  type BotApiStandIn,
  type MessageExtra,
  type MessageUpdateDraft,
  startBotApi,
  type TopicMessageOptions,
} from './bot-api'
import type { TestDatabase } from './db'

/**
 * Fixtures for the desk's tests: the real app against the Bot API stand-in, consultations made active by the real
 * activation function (on order/consultation rows inserted as the payment flow would), and bounded waits on the
 * database instead of sleeps. Over 400 lines on purpose: the one home of what nearly every e2e test starts from (the
 * world, its clients and consultations, the waits), so a helper is not written again beside it.
 */

export { ADMIN_ID, EXPERT_ID, STAFF_CHAT_ID, TEST_BOT_ID }

export interface DeskWorld {
  tg: BotApiStandIn
  t: TestApp
  deps: Deps
  admin: User
  expert: User
  stop(): Promise<void>
}

/** A world without the expert user (the payment tests). */
export type World = Omit<DeskWorld, 'expert'>

export interface DeskWorldOptions {
  role?: Role
  configure?: (c: LoadedConfig) => void
  /** Share a database (a second process on the same data). */
  database?: TestDatabase
  /** An existing stand-in (a second process talks to the same Telegram). */
  tg?: BotApiStandIn
  /**
   * Keep the production Api with its throttler (20 messages a minute in the staff group, 1 a second per chat).
   * Default false: tests send dozens of group messages a minute, so jobs get an Api with auto-retry (429
   * retry_after) but without the in-process throttle. Some tests run with it on.
   */
  throttled?: boolean
  mode?: 'polling' | 'webhook'
  /** More environment for the config (e.g. LLM_API_KEY). */
  env?: Record<string, string>
  log?: Logger
  /** The admin the stand-in knows (id ADMIN_ID; default Ada, en). */
  admin?: Partial<User>
  /** The expert the stand-in knows (id EXPERT_ID; default Ed, ru); false: none. */
  expert?: Partial<User> | false
}

/**
 * The one world builder of the app's tests: the Bot API stand-in with the staff forum, the real app (src/app.ts) on
 * a fresh database, the desk's admin and expert as Telegram users. paidConsultation / consultationWithTopic add a
 * client with an active consultation (and its topic); payments-support.ts and drafting.ts build on it.
 */
export function startDeskWorld(opts: DeskWorldOptions & { expert: false }): Promise<World>
export function startDeskWorld(opts?: DeskWorldOptions): Promise<DeskWorld>
export async function startDeskWorld(opts: DeskWorldOptions = {}): Promise<DeskWorld | World> {
  const tg = opts.tg ?? (await startBotApi({ defaultWaitTimeoutMs: 15_000 }))
  tg.forum({ id: STAFF_CHAT_ID, title: 'Staff' })
  const t = await startApp(tg, opts)
  const admin = tg.user({ id: ADMIN_ID, first_name: 'Ada', language_code: 'en', ...opts.admin })
  const expert =
    opts.expert === false
      ? undefined
      : tg.user({ id: EXPERT_ID, first_name: 'Ed', language_code: 'ru', ...opts.expert })
  return {
    tg,
    t,
    deps: t.app.deps,
    admin,
    ...(expert ? { expert } : {}),
    async stop() {
      await t.stop()
      if (!opts.tg) await tg.close()
    },
  } as DeskWorld
}

async function startApp(
  tg: BotApiStandIn,
  opts: DeskWorldOptions & { database?: TestDatabase },
): Promise<TestApp> {
  const t = await startTestApp({
    apiRoot: tg.root,
    ...(opts.role ? { role: opts.role } : {}),
    ...(opts.configure ? { configure: opts.configure } : {}),
    ...(opts.database ? { database: opts.database } : {}),
    ...(opts.mode ? { mode: opts.mode } : {}),
    ...(opts.env ? { env: opts.env } : {}),
    ...(opts.log ? { log: opts.log } : {}),
  })
  if (!opts.throttled) useUnthrottledApi(t.app)
  return t
}

/**
 * The same world after a restart: a new app process on the world's database and stand-in, with the same users
 * (the caller has stopped the old app). Stopping the returned world drops the database as the first one would.
 */
export async function restartWorld<W extends World>(w: W, opts: DeskWorldOptions = {}): Promise<W> {
  const t = await startApp(w.tg, { ...opts, database: w.t.db })
  return {
    ...w,
    t,
    deps: t.app.deps,
    async stop() {
      await t.stop()
      await w.t.db.drop()
      if (!opts.tg) await w.tg.close()
    },
  }
}

/** Jobs of this app send through an Api with auto-retry (honours 429 retry_after) but no throttle. */
export function useUnthrottledApi(app: App): void {
  // One Api per desk, with that desk's token (a deployment with two desks sends as the right bot).
  const apis = new Map<number, Api>()
  app.deps.api = (botId: number) => {
    let api = apis.get(botId)
    if (!api) {
      const token = app.deps.config.desks.find((d) => d.botId === botId)?.token ?? TEST_TOKEN
      api = new Api(token, { apiRoot: app.deps.config.secrets.telegramApiRoot })
      api.config.use(autoRetry({ maxRetryAttempts: 3, maxDelaySeconds: 60 }))
      apis.set(botId, api)
    }
    return api
  }
}

let clientCounter = 0

/** A client of the desk (known to the stand-in and recorded as the payment flow would). */
export async function newClient(w: DeskWorld, init: Partial<User> = {}): Promise<User> {
  const n = ++clientCounter
  const u = w.tg.user({
    first_name: init.first_name ?? `Client${n}`,
    language_code: init.language_code ?? 'en',
    ...(init.username ? { username: init.username } : {}),
    ...(init.id ? { id: init.id } : {}),
  })
  await upsertClient(w.deps.db, TEST_BOT_ID, u)
  return u
}

export interface ConsultationOptions {
  tariff?: string
  lang?: string
}

/** An order snapshot of the tariff and its waiting consultation, inserted as the payment flow inserts them. */
async function insertConsultation(
  trx: Trx,
  w: DeskWorld,
  client: User,
  opts: ConsultationOptions,
  order: { state?: 'paid_waiting'; needs_start_date?: boolean } = {},
): Promise<{ consultationId: number; orderId: number }> {
  const desk = w.t.desk
  const tariff = findTariff(desk, opts.tariff ?? 'quick')!
  const lang = opts.lang ?? client.language_code ?? 'en'
  const o = await trx
    .insertInto('orders')
    .values({ bot_id: desk.botId, user_id: client.id, ...snapshotTariff(desk, tariff, lang), ...order })
    .returning('id')
    .executeTakeFirstOrThrow()
  const c = await trx
    .insertInto('consultation')
    .values({ bot_id: desk.botId, order_id: o.id, user_id: client.id })
    .returning('id')
    .executeTakeFirstOrThrow()
  return { consultationId: c.id, orderId: o.id }
}

/**
 * An active consultation for the client: an order snapshot of the tariff and a waiting consultation inserted as
 * the payment flow inserts them, then the real activateConsultation (window from the database clock, ledger
 * grants, the consultation.activated job) in one unit of work.
 */
export async function activeConsultation(
  w: DeskWorld,
  client: User,
  opts: ConsultationOptions = {},
): Promise<{ consultationId: number; orderId: number }> {
  return w.deps.jobs.transaction(w.deps.db, async (trx, outbox) => {
    const c = await insertConsultation(trx, w, client, opts)
    const r = await activateConsultation(trx, outbox, w.deps, {
      consultationId: c.consultationId,
      actorId: null,
      reason: 'admin',
    })
    expect(r.status).toBe('activated')
    return c
  })
}

/**
 * A paid order that waits for its start (paid_waiting) and its consultation, not active: a start on request, or
 * with `needsStartDate` one the admin has to offer (/startdate). Inserted as the payment flow inserts them.
 */
export function waitingConsultation(
  w: DeskWorld,
  client: User,
  opts: ConsultationOptions & { needsStartDate?: boolean } = {},
): Promise<{ consultationId: number; orderId: number }> {
  return w.deps.db.transaction().execute((trx) =>
    insertConsultation(trx, w, client, opts, {
      state: 'paid_waiting',
      ...(opts.needsStartDate ? { needs_start_date: true } : {}),
    }),
  )
}

/**
 * The common start of a desk test: a new client (see newClient) with an active consultation (see
 * activeConsultation), written the way the payment flow writes them.
 */
export async function paidConsultation(
  w: DeskWorld,
  clientInit: Partial<User> = {},
  opts: ConsultationOptions = {},
): Promise<{ client: User; consultationId: number; orderId: number }> {
  const client = await newClient(w, clientInit)
  const { consultationId, orderId } = await activeConsultation(w, client, opts)
  return { client, consultationId, orderId }
}

/** paidConsultation, once its staff topic exists with the card posted (the route is returned). */
export async function consultationWithTopic(
  w: DeskWorld,
  clientInit: Partial<User> = {},
  opts: ConsultationOptions = {},
): Promise<{ client: User; consultationId: number; orderId: number; route: Route }> {
  const c = await paidConsultation(w, clientInit, opts)
  return { ...c, route: await topicReady(w, c.consultationId) }
}

/** Polls until `probe` returns something other than undefined/false (bounded; no fixed sleeps in tests). */
export async function eventually<T>(
  probe: () => Promise<T | undefined | false | null>,
  what: string,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  let delay = 10
  for (;;) {
    const v = await probe()
    if (v !== undefined && v !== false && v !== null) return v
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise((r) => setTimeout(r, delay))
    delay = Math.min(delay * 2, 100)
  }
}

/**
 * Every update stored in the inbox has been handled (done or parked). With the durable intake a webhook's 200 (or
 * the next getUpdates) means "stored", not "handled": tests that check effects after a push wait for this.
 */
export function inboxDrained(db: Deps['db'], timeoutMs = 15_000): Promise<true> {
  return eventually(async () => (await pendingCount(db)) === 0, 'the inbox to be drained', timeoutMs)
}

/**
 * Every notification job has run (none queued, waiting to retry or running): what the set-up told a client is out,
 * so a mark taken now separates it from what the step under test says.
 */
export function notificationsSent(db: Deps['db'], timeoutMs = 15_000): Promise<true> {
  return eventually(async () => (await pendingNotifications(db)) === 0, 'the notifications sent', timeoutMs)
}

/** Notification jobs not yet done (queued, waiting to retry, running). */
export async function pendingNotifications(db: Deps['db']): Promise<number> {
  const r = await sql<{ n: number }>`select count(*)::int as n from pgboss.job
    where name like 'tg.notify%' and state in ('created', 'retry', 'active')`.execute(db)
  return r.rows[0]!.n
}

/** The consultation's live topic, once the lane has created it and posted its card. */
export function topicReady(w: DeskWorld, consultationId: number): Promise<Route> {
  return eventually(async () => {
    const r = await w.deps.db
      .selectFrom('desk_route')
      .selectAll()
      .where('consultation_id', '=', consultationId)
      .where('state', '=', 'active')
      .executeTakeFirst()
    return r?.card_message_id ? r : undefined
  }, `the topic of consultation ${consultationId}`)
}

export function items(w: DeskWorld, consultationId: number): Promise<Item[]> {
  return w.deps.db
    .selectFrom('desk_message')
    .selectAll()
    .where('consultation_id', '=', consultationId)
    .orderBy('id')
    .execute()
}

/** The desk_message row of a source message, once it is in `state` (e.g. 'sent'). */
export function itemIn(w: DeskWorld, chatId: number, messageId: number, state: Item['state']): Promise<Item> {
  return eventually(async () => {
    const r = await w.deps.db
      .selectFrom('desk_message')
      .selectAll()
      .where('bot_id', '=', TEST_BOT_ID)
      .where('chat_id', '=', chatId)
      .where('message_id', '=', messageId)
      .executeTakeFirst()
    return r?.state === state ? r : undefined
  }, `message ${chatId}/${messageId} to be ${state}`)
}

export function appeals(w: DeskWorld, consultationId: number) {
  return w.deps.db
    .selectFrom('desk_appeal')
    .selectAll()
    .where('consultation_id', '=', consultationId)
    .orderBy('number')
    .execute()
}

/** Pushes a client's message; returns the message as Telegram delivered it. */
export async function clientSends(
  w: DeskWorld,
  client: User,
  content: string | MessageExtra,
): Promise<MessageUpdateDraft['message']> {
  const draft =
    typeof content === 'string' ? w.tg.privateText(client, content) : w.tg.privateMessage(client, content)
  await w.tg.push(TEST_BOT_ID, draft)
  return draft.message
}

/** Pushes a message in a topic of the staff group. */
export async function staffSends(
  w: DeskWorld,
  threadId: number,
  from: User,
  content: string | Partial<Message>,
  opts: TopicMessageOptions = {},
): Promise<MessageUpdateDraft> {
  const draft = w.tg.groupTopicMessage(STAFF_CHAT_ID, threadId, from, content, opts)
  await w.tg.push(TEST_BOT_ID, draft)
  return draft
}

/** Everything the desk's jobs have left to do is done (no pending items, no lane held). */
export function lanesIdle(w: DeskWorld, consultationId: number): Promise<true> {
  return eventually(async () => {
    const pending = await w.deps.db
      .selectFrom('desk_message')
      .select('id')
      .where('consultation_id', '=', consultationId)
      .where('state', '=', 'pending')
      .executeTakeFirst()
    const dc = await w.deps.db
      .selectFrom('desk_consultation')
      .select(['in_lease', 'out_lease', 'card_dirty', 'title_dirty'])
      .where('consultation_id', '=', consultationId)
      .executeTakeFirst()
    return (
      !pending && !dc?.in_lease && !dc?.out_lease && !dc?.card_dirty && !dc?.title_dirty ? true : undefined
    ) as true | undefined
  }, `the lanes of consultation ${consultationId} to go idle`)
}

/**
 * The real payment path through the stand-in: the tariff's buy button, the invoice, pre-checkout, successful
 * payment; resolves once the consultation is active.
 */
export async function payThroughTelegram(
  w: DeskWorld,
  client: User,
  code = 'quick',
): Promise<{ consultationId: number; orderId: number }> {
  const since = w.tg.mark()
  await w.tg.push(TEST_BOT_ID, w.tg.callback(client, `tf:buy:${code}:${termsHash(w.t.desk.terms.version)}`))
  const invoice = await w.tg.waitFor('sendInvoice', { chat_id: client.id }, { since })
  const p = invoice.payload as { payload: string; prices: { amount: number }[] }
  const amount = p.prices[0]!.amount
  const q = w.tg.preCheckout(client, { invoice_payload: p.payload, total_amount: amount })
  await w.tg.push(TEST_BOT_ID, q)
  await w.tg.waitFor('answerPreCheckoutQuery', { pre_checkout_query_id: q.pre_checkout_query!.id, ok: true })
  await w.tg.push(
    TEST_BOT_ID,
    w.tg.successfulPayment(client, { invoice_payload: p.payload, total_amount: amount }),
  )
  return eventually(async () => {
    const c = await w.deps.db
      .selectFrom('consultation')
      .select(['id', 'order_id', 'state'])
      .where('bot_id', '=', TEST_BOT_ID)
      .where('user_id', '=', client.id)
      .orderBy('id', 'desc')
      .executeTakeFirst()
    return c?.state === 'active' ? { consultationId: c.id, orderId: c.order_id } : undefined
  }, `a paid consultation of ${client.id}`)
}
