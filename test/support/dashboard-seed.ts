import type { User } from 'grammy/types'
import { sql } from 'kysely'
import { upsertClient } from '../../src/clients/clients.repository'
import type { DeskRuntime } from '../../src/config/load'
import type { Db } from '../../src/db/database'
import { findTariff, snapshotTariff } from '../../src/orders/tariffs'

/**
 * A desk with a month of history for the dashboard's tests and its screenshot: clients with names, consultations in
 * every state, payments (one refunded), questions answered in time and late by an expert and an admin, open and
 * past-due ones, the conversation's text in Russian and English, AI drafts with their cost, ledger and admission
 * refusals. Rows are written straight into the tables the desk fills (as test/e2e/report.test.ts does), dated
 * relative to the database clock so "the last 7/30 days" always holds the same rows (nothing is dated between 6 and
 * 8 days back, where "the last 7 calendar days" ends depending on the hour). The descriptor it returns is
 * what the tests expect the page to show.
 */

export interface SeededConsultation {
  id: number
  orderId: number
  paymentId: number
  charge: string
  userId: number
  state: 'waiting' | 'active' | 'closed' | 'revoked'
  price: number
  daysAgo: number
  refunded: boolean
}

export interface DashboardSeed {
  consultations: SeededConsultation[]
  /** A paid, active consultation whose payment a test refunds. */
  refundable: SeededConsultation
  /** A consultation whose conversation holds `searchWord` (in a Russian sentence, in another word form). */
  searchable: { consultationId: number; query: string; userId: number }
  clients: User[]
}

interface Spec {
  client: number
  tariff: 'quick' | 'later'
  state: SeededConsultation['state']
  daysAgo: number
  refunded?: boolean
  appeals: { by?: number; minutes?: number; inTime?: boolean; breached?: boolean; q: string; a?: string }[]
  drafts?: number
}

const QUESTIONS = {
  replication:
    'Репликация базы данных PostgreSQL отстаёт на десять минут после переезда, что проверить в первую очередь?',
  webhook: 'Our webhook gets every update twice after the deploy. Is that the load balancer retrying?',
  cache: 'Как правильно инвалидировать кеш каталога после обновления цен?',
  queue: 'The job queue grows overnight and workers look idle. Where should I start?',
  auth: 'Нужна ли ротация ключей подписи для внутренних сервисов и как часто?',
  migration: 'Can we run this schema migration without downtime on a 200 GB table?',
  limits: 'Какие лимиты Telegram на отправку сообщений в группу с темами?',
  retries: 'How many retries are reasonable for a payment provider callback?',
}

const ANSWER = {
  en: 'Start with the metrics of the consumer lag and the checkpoint settings; details below.',
  ru: 'Начните с метрик задержки и настроек контрольных точек; подробности ниже.',
}

export async function seedDashboard(
  db: Db,
  desk: DeskRuntime,
  people: { admin: number; expert: number; user: (init: Partial<User>) => User },
): Promise<DashboardSeed> {
  const { admin, expert } = people
  const clients = [
    people.user({ first_name: 'Анна', last_name: 'Смирнова', username: 'anna_s', language_code: 'ru' }),
    people.user({ first_name: 'Boris', last_name: 'Ivanov', username: 'boris_iv', language_code: 'en' }),
    people.user({ first_name: 'Марина', username: 'marina_k', language_code: 'ru' }),
    people.user({ first_name: 'John', last_name: 'Doe', language_code: 'en' }),
    people.user({ first_name: 'Елена', last_name: 'Петрова', language_code: 'ru' }),
    people.user({ first_name: 'Peter', username: 'pete', language_code: 'en' }),
  ]
  for (const c of clients) await upsertClient(db, desk.botId, c)

  const specs: Spec[] = [
    {
      client: 0,
      tariff: 'quick',
      state: 'closed',
      daysAgo: 27,
      appeals: [
        { by: expert, minutes: 35, inTime: true, q: QUESTIONS.replication, a: ANSWER.ru },
        { by: expert, minutes: 80, inTime: true, q: QUESTIONS.cache, a: ANSWER.ru },
      ],
      drafts: 1,
    },
    {
      client: 1,
      tariff: 'quick',
      state: 'closed',
      daysAgo: 24,
      appeals: [
        { by: admin, minutes: 310, inTime: false, breached: true, q: QUESTIONS.webhook, a: ANSWER.en },
      ],
    },
    {
      client: 2,
      tariff: 'later',
      state: 'closed',
      daysAgo: 20,
      appeals: [
        { by: expert, minutes: 50, inTime: true, q: QUESTIONS.auth, a: ANSWER.ru },
        { by: expert, minutes: 20, inTime: true, q: QUESTIONS.limits, a: ANSWER.ru },
        { by: admin, minutes: 90, inTime: true, q: QUESTIONS.cache, a: ANSWER.ru },
      ],
      drafts: 2,
    },
    {
      client: 3,
      tariff: 'quick',
      state: 'revoked',
      refunded: true,
      daysAgo: 17,
      appeals: [
        { by: expert, minutes: 260, inTime: false, breached: true, q: QUESTIONS.queue, a: ANSWER.en },
      ],
    },
    {
      client: 4,
      tariff: 'quick',
      state: 'closed',
      daysAgo: 13,
      appeals: [{ by: expert, minutes: 45, inTime: true, q: QUESTIONS.limits, a: ANSWER.ru }],
      drafts: 1,
    },
    {
      client: 5,
      tariff: 'later',
      state: 'closed',
      daysAgo: 9,
      appeals: [
        { by: admin, minutes: 15, inTime: true, q: QUESTIONS.migration, a: ANSWER.en },
        { by: expert, minutes: 120, inTime: true, q: QUESTIONS.retries, a: ANSWER.en },
      ],
    },
    {
      client: 1,
      tariff: 'quick',
      state: 'closed',
      daysAgo: 5,
      appeals: [{ by: expert, minutes: 300, inTime: false, q: QUESTIONS.retries, a: ANSWER.en }],
      drafts: 1,
    },
    {
      client: 0,
      tariff: 'quick',
      state: 'active',
      daysAgo: 3,
      appeals: [
        { by: expert, minutes: 25, inTime: true, q: QUESTIONS.migration, a: ANSWER.ru },
        { breached: true, q: QUESTIONS.queue },
      ],
    },
    { client: 2, tariff: 'later', state: 'waiting', daysAgo: 2, appeals: [] },
    {
      client: 4,
      tariff: 'quick',
      state: 'active',
      daysAgo: 1,
      appeals: [{ q: QUESTIONS.webhook }],
      drafts: 1,
    },
  ]

  const now = (await sql<{ now: Date }>`select now() as now`.execute(db)).rows[0]!.now
  const at = (daysAgo: number, minutes = 0) =>
    new Date(now.getTime() - daysAgo * 86_400_000 + minutes * 60_000 - 6 * 3600_000)
  const orderState = { waiting: 'paid_waiting', active: 'active', closed: 'closed', revoked: 'refunded' }
  let messageId = 0
  let requestN = 0
  const consultations: SeededConsultation[] = []

  for (const [i, s] of specs.entries()) {
    const client = clients[s.client]!
    const tariff = findTariff(desk, s.tariff)!
    const lang = client.language_code ?? 'en'
    const created = at(s.daysAgo)
    const order = await db
      .insertInto('orders')
      .values({
        bot_id: desk.botId,
        user_id: client.id,
        ...snapshotTariff(desk, tariff, lang),
        state: orderState[s.state] as 'active',
        paid_at: created,
        created_at: created,
      })
      .returning('id')
      .executeTakeFirstOrThrow()
    const started = s.state === 'waiting' ? null : new Date(created.getTime() + 60_000)
    const until = started ? new Date(started.getTime() + tariff.windowHours * 3600_000) : null
    const c = await db
      .insertInto('consultation')
      .values({
        bot_id: desk.botId,
        order_id: order.id,
        user_id: client.id,
        state: s.state,
        starts_at: started,
        access_until: until,
        closed_at: s.state === 'closed' ? until : null,
        revoked_at: s.refunded ? at(s.daysAgo - 1) : null,
        refund_policy: s.refunded ? 'deliver' : null,
        created_at: created,
      })
      .returning('id')
      .executeTakeFirstOrThrow()
    // Its topic in the staff group (the page links into it).
    await db
      .insertInto('desk_route')
      .values({
        bot_id: desk.botId,
        support_chat_id: desk.staffChatId!,
        message_thread_id: 5000 + i,
        consultation_id: c.id,
        user_id: client.id,
        topic_name: `${client.first_name} #${c.id}`,
        created_at: created,
      })
      .execute()
    const charge = `seed-charge-${desk.botId}-${i + 1}`
    const payment = await db
      .insertInto('payment')
      .values({
        bot_id: desk.botId,
        order_id: order.id,
        user_id: client.id,
        telegram_payment_charge_id: charge,
        currency: 'XTR',
        total_amount: tariff.priceStars,
        kind: 'payment',
        created_at: created,
        refunded_at: s.refunded ? at(s.daysAgo - 1) : null,
        refunded_by: s.refunded ? admin : null,
        refund_source: s.refunded ? 'admin' : null,
      })
      .returning('id')
      .executeTakeFirstOrThrow()

    for (const [n, a] of s.appeals.entries()) {
      const accepted = new Date(created.getTime() + (n + 1) * 3600_000)
      const due = new Date(accepted.getTime() + tariff.slaBusinessHours * 3600_000)
      const answered = a.by !== undefined ? new Date(accepted.getTime() + (a.minutes ?? 0) * 60_000) : null
      const inId = ++messageId
      const appeal = await db
        .insertInto('desk_appeal')
        .values({
          bot_id: desk.botId,
          consultation_id: c.id,
          number: n + 1,
          state: answered ? 'answered' : 'open',
          request_id: `seed:${desk.botId}:${++requestN}`,
          opened_by_message_id: inId,
          accepted_at: accepted,
          sla_minutes: tariff.slaBusinessHours * 60,
          due_at: due,
          first_response_at: answered,
          answered_by: a.by ?? null,
          response_business_minutes: a.minutes ?? null,
          in_time: answered ? (a.inTime ?? null) : null,
          breached_at: a.breached ? due : null,
        })
        .returning('id')
        .executeTakeFirstOrThrow()
      await db
        .insertInto('desk_message')
        .values({
          bot_id: desk.botId,
          consultation_id: c.id,
          direction: 'in',
          kind: 'copy',
          chat_id: client.id,
          message_id: inId,
          from_id: client.id,
          appeal_id: appeal.id,
          content_type: 'text',
          content: JSON.stringify({ text: a.q }),
          state: 'sent',
          accepted_at: accepted,
          sent_at: accepted,
          created_at: accepted,
        })
        .execute()
      if (answered && a.a)
        await db
          .insertInto('desk_message')
          .values({
            bot_id: desk.botId,
            consultation_id: c.id,
            direction: 'out',
            kind: 'copy',
            chat_id: desk.staffChatId,
            message_id: ++messageId,
            from_id: a.by ?? null,
            appeal_id: appeal.id,
            content_type: 'text',
            content: JSON.stringify({ text: a.a }),
            state: 'sent',
            sent_at: answered,
            created_at: answered,
          })
          .execute()
    }
    for (let d = 0; d < (s.drafts ?? 0); d++)
      await db
        .insertInto('draft')
        .values({
          bot_id: desk.botId,
          consultation_id: c.id,
          request_id: `seed-draft:${desk.botId}:${c.id}:${d}`,
          requested_by: expert,
          source: 'command',
          source_chat_id: desk.staffChatId!,
          source_message_id: 1000 + messageId + d,
          state: 'sent',
          model: 'gpt-4o-mini',
          input_tokens: 1800 + 100 * d,
          output_tokens: 400,
          cost: 3 + d,
          created_at: new Date(created.getTime() + 2 * 3600_000),
        })
        .execute()
    consultations.push({
      id: c.id,
      orderId: order.id,
      paymentId: payment.id,
      charge,
      userId: client.id,
      state: s.state,
      price: tariff.priceStars,
      daysAgo: s.daysAgo,
      refunded: !!s.refunded,
    })
  }

  // Refusals: the ledger's (a consultation's questions used up, twice) and a client message after the window.
  const last = consultations[1]!
  for (const k of [1, 2]) {
    const decision = {
      reason: 'exhausted',
      line: 0,
      lines: [{ scope: 'consultation', subject: String(last.id), unit: 'appeals', accountId: null }],
    }
    await sql`insert into ledger_reservation (request_id, state, account_ids, amounts, fingerprint, decision, created_at)
      values (${`seed-refused:${desk.botId}:${k}`}, 'refused', '{null}', '{1}', 'f', ${JSON.stringify(decision)}::jsonb,
        ${at(last.daysAgo - 1)})`.execute(db)
  }
  await db
    .insertInto('desk_message')
    .values({
      bot_id: desk.botId,
      consultation_id: last.id,
      direction: 'in',
      kind: 'copy',
      chat_id: last.userId,
      message_id: ++messageId,
      from_id: last.userId,
      content_type: 'text',
      content: JSON.stringify({ text: 'One more question, please?' }),
      state: 'refused',
      refusal: JSON.stringify({ reason: 'window_closed', numbers: {} }),
      created_at: at(last.daysAgo - 2),
    })
    .execute()

  return {
    consultations,
    refundable: consultations.find((c) => c.state === 'active')!,
    searchable: {
      consultationId: consultations[0]!.id,
      query: 'репликации',
      userId: consultations[0]!.userId,
    },
    clients,
  }
}
