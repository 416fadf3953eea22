/**
 * npm run bench:dashboard — the dashboard's JSON endpoints over a year of a busy desk.
 *
 * Seeds, in SQL (generate_series, a few statements), 100,000 consultations spread evenly over the last 365 days
 * (~24,700 in the last 90) with their orders and payments (3% refunded), 1-3 questions each answered by one of
 * four staff members (200,000), the conversation (a client message and an answer per question: 400,000 rows of
 * text in Russian and English, under the full-text index), 50,000 AI drafts, ledger and admission refusals, 20,000
 * clients. Then starts the app (role worker: its HTTP server, no bot) and calls each endpoint as the page does
 * (Authorization: tma <initData> signed with the desk's token), one request at a time: p50/p99 per endpoint.
 *
 * Baseline, same run: the overview's SQL alone (buildReport and the three series for the same range, in parallel
 * on the app's pool), so the ratio overview / SQL says what HTTP, the initData check and JSON add.
 * Target (issue 15): the 90-day overview under 300 ms on this machine.
 *
 * BENCH_CONSULTATIONS (default 100000), BENCH_REQUESTS per endpoint (default 40), PostgreSQL: DATABASE_URL or an
 * embedded server.
 */
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { sql } from 'kysely'
import { startApp } from '../src/app'
import { loadConfig } from '../src/config/load'
import { dayRange } from '../src/dashboard/dashboard.service'
import { migrateToLatest } from '../src/db/migrator'
import { createDb } from '../src/db/pool'
import { quietLogger } from '../src/log'
import { buildReport } from '../src/reports/reports.service'
import { appealsByWeek, draftsByDay, revenueByDay } from '../src/reports/series.repository'
import { startBotApi } from '../test/support/bot-api'
import { signInitData } from '../test/support/dashboard'
import { benchDatabase, percentile } from './support'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const N = Number(process.env.BENCH_CONSULTATIONS ?? 100_000)
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 40)
const TOKEN = `7000001:${'D'.repeat(35)}`
const BOT_ID = 7000001
const ADMIN = 900001
const STAFF = [900001, 900002, 900003, 900004]
const STAFF_CHAT = -1009000000001

const PHRASES = [
  'Репликация базы данных отстаёт после переезда на новый кластер',
  'Как настроить ретраи вебхука без дублей?',
  'Очередь задач растёт ночью, воркеры простаивают',
  'Нужен разбор схемы авторизации между сервисами',
  'Миграция схемы на большой таблице без простоя',
  'Our webhook receives every update twice after the deploy',
  'The cache is not invalidated after prices change',
  'Payment provider callbacks time out under load',
  'How should we shard the orders table?',
  'Kubernetes pods restart during the nightly batch',
]

async function seed(db: ReturnType<typeof createDb>['db']): Promise<void> {
  const t0 = Date.now()
  const step = async (what: string, q: ReturnType<typeof sql>) => {
    const s = Date.now()
    await q.execute(db)
    console.log(`  ${what}: ${((Date.now() - s) / 1000).toFixed(1)} s`)
  }
  console.log(`seeding ${N.toLocaleString('en')} consultations...`)
  await step(
    'clients',
    sql`insert into client (bot_id, user_id, first_name, last_name, username, language_code)
      select ${BOT_ID}, 5000000000 + g, (array['Анна','Boris','Марина','John','Елена','Peter'])[1 + g % 6],
        'Client' || g, 'client_' || g, case when g % 2 = 0 then 'ru' else 'en' end
      from generate_series(0, 19999) g`,
  )
  await step(
    'orders, consultations',
    sql`with o as (
        insert into orders (bot_id, user_id, tariff_code, title, price_stars, window_minutes, appeals, drafts,
          sla_minutes, start_mode, breach_policy, terms_version, lang, state, paid_at, created_at, updated_at)
        select ${BOT_ID}, 5000000000 + g % 20000, case when g % 3 = 0 then 'later' else 'quick' end,
          case when g % 3 = 0 then 'Start when ready' else 'Quick review' end,
          case when g % 3 = 0 then 150 else 100 end, 1440, 3, 5, 240,
          case when g % 3 = 0 then 'on_request' else 'immediate' end, '{"kind":"none"}', 't-1', 'en',
          case when g % 33 = 0 then 'refunded' when g < ${Math.ceil(N / 365)} then 'active' else 'closed' end,
          t, t, t
        from generate_series(0, ${N - 1}) g,
          lateral (select now() - (g::float8 / ${N}) * interval '365 days' as t) x
        returning id, user_id, state, created_at)
      insert into consultation (bot_id, order_id, user_id, state, starts_at, access_until, closed_at, revoked_at,
        refund_policy, created_at, updated_at)
      select ${BOT_ID}, id, user_id,
        case state when 'refunded' then 'revoked' when 'active' then 'active' else 'closed' end,
        created_at, created_at + interval '24 hours',
        case when state = 'closed' then created_at + interval '24 hours' end,
        case when state = 'refunded' then created_at + interval '1 day' end,
        case when state = 'refunded' then 'deliver' end, created_at, created_at
      from o`,
  )
  await step(
    'payments',
    sql`insert into payment (bot_id, order_id, user_id, telegram_payment_charge_id, currency, total_amount, kind,
        created_at, refunded_at, refunded_by, refund_source)
      select bot_id, id, user_id, 'bench-' || id, 'XTR', price_stars, 'payment', created_at,
        case when state = 'refunded' then created_at + interval '1 day' end,
        case when state = 'refunded' then ${ADMIN}::bigint end,
        case when state = 'refunded' then 'admin' end
      from orders where bot_id = ${BOT_ID}`,
  )
  await step(
    'questions',
    sql`insert into desk_appeal (bot_id, consultation_id, number, state, request_id, opened_by_message_id,
        accepted_at, sla_minutes, due_at, first_response_at, answered_by, response_business_minutes, in_time,
        breached_at)
      select ${BOT_ID}, c.id, n, case when open then 'open' else 'answered' end, 'bench:' || c.id || ':' || n,
        c.id * 4 + n, acc, 240, acc + interval '4 hours',
        case when not open then acc + m * interval '1 minute' end,
        case when not open then (${sql.raw(`array[${STAFF.join(',')}]`)})[1 + (c.id + n) % 4] end,
        case when not open then m end, case when not open then m <= 240 end,
        case when m > 240 then acc + interval '4 hours' end
      from consultation c, generate_series(1, 1 + (c.id % 3)::int) n,
        lateral (select c.created_at + n * interval '1 hour' as acc, ((c.id * 37 + n * 11) % 400)::int as m,
          c.created_at > now() - interval '1 day' and n = 1 as open) x
      where c.bot_id = ${BOT_ID}`,
  )
  await step(
    'conversation (2 messages per question)',
    sql`insert into desk_message (bot_id, consultation_id, direction, kind, chat_id, message_id, from_id, appeal_id,
        content_type, content, state, accepted_at, sent_at, created_at)
      select ${BOT_ID}, a.consultation_id, d.direction, 'copy',
        case when d.direction = 'in' then c.user_id else ${STAFF_CHAT}::bigint end,
        a.id * 2 + case when d.direction = 'in' then 0 else 1 end,
        case when d.direction = 'in' then c.user_id else a.answered_by end, a.id, 'text',
        jsonb_build_object('text', case when d.direction = 'in'
          then (${sql.val(PHRASES)}::text[])[1 + a.id % ${PHRASES.length}] || ' (ticket' || (a.id % 10000) || ')'
          else 'Start with the metrics and the logs; подробности ниже.' end),
        'sent', a.accepted_at, coalesce(a.first_response_at, a.accepted_at), a.accepted_at
      from desk_appeal a join consultation c on c.id = a.consultation_id,
        (values ('in'), ('out')) d(direction)
      where a.bot_id = ${BOT_ID} and (d.direction = 'in' or a.first_response_at is not null)`,
  )
  await step(
    'AI drafts',
    sql`insert into draft (bot_id, consultation_id, request_id, requested_by, source, source_chat_id,
        source_message_id, state, model, input_tokens, output_tokens, cost, created_at)
      select ${BOT_ID}, id, 'bench-draft:' || id, ${sql.raw(String(STAFF[1]))}, 'command', ${STAFF_CHAT}, id,
        'sent', 'gpt-4o-mini', 1800, 400, 3, created_at + interval '2 hours'
      from consultation where bot_id = ${BOT_ID} and id % 2 = 0`,
  )
  await step(
    'refusals',
    sql`with l as (
        insert into ledger_reservation (request_id, state, account_ids, amounts, fingerprint, decision, created_at)
        select 'bench-refused:' || id, 'refused', '{null}', '{1}', 'f',
          jsonb_build_object('reason', 'exhausted', 'line', 0, 'lines',
            jsonb_build_array(jsonb_build_object('scope', 'consultation', 'subject', id::text, 'unit', 'appeals'))),
          created_at + interval '20 hours'
        from consultation where bot_id = ${BOT_ID} and id % 20 = 0 returning 1)
      insert into desk_message (bot_id, consultation_id, direction, kind, chat_id, message_id, from_id, content_type,
        content, state, refusal, created_at)
      select ${BOT_ID}, id, 'in', 'copy', user_id, 900000000 + id, user_id, 'text', '{"text":"one more?"}',
        'refused', '{"reason":"window_closed","numbers":{}}', created_at + interval '30 hours'
      from consultation where bot_id = ${BOT_ID} and id % 33 = 1`,
  )
  // A desk that has run for a year has been vacuumed: the visibility map lets the overview's counts use index-only
  // scans (autovacuum keeps it so in production).
  await step('vacuum analyze', sql`vacuum analyze`)
  console.log(`seeded in ${((Date.now() - t0) / 1000).toFixed(1)} s`)
}

function stats(ms: number[]) {
  const s = [...ms].sort((a, b) => a - b)
  return { p50: percentile(s, 50), p99: percentile(s, 99) }
}

async function time(f: () => Promise<unknown>, n: number, warm = 3): Promise<number[]> {
  for (let i = 0; i < warm; i++) await f() // warm: plans, caches, connections
  const out: number[] = []
  for (let i = 0; i < n; i++) {
    const t = performance.now()
    await f()
    out.push(performance.now() - t)
  }
  return out
}

async function main() {
  const database = await benchDatabase('cd_bench_dash')
  const tg = await startBotApi({ defaultWaitTimeoutMs: 60_000 })
  const handle = createDb(database.url, 4)
  let app: Awaited<ReturnType<typeof startApp>> | undefined
  try {
    await migrateToLatest(handle.db)
    await seed(handle.db)
    const config = loadConfig({
      CONFIG_FILE: path.join(ROOT, 'test/support/desk.test.yaml'),
      BOT_TOKEN: TOKEN,
      DATABASE_URL: database.url,
      TELEGRAM_API_ROOT: tg.root,
    })
    // The HTTP server and the dashboard's routes; no bot (nothing polls), the workers idle.
    app = await startApp(config, { role: 'worker', log: quietLogger() })
    const desk = config.desks[0]!
    const base = `http://127.0.0.1:${app.httpPort}/dashboard/${desk.slug}`
    const initData = signInitData(TOKEN, { user: { id: ADMIN } })
    const get = async (p: string) => {
      const r = await fetch(`${base}/${p}`, { headers: { authorization: `tma ${initData}` } })
      if (r.status !== 200) throw new Error(`${p}: ${r.status} ${await r.text()}`)
      return r.text()
    }
    const some = (
      await handle.db
        .selectFrom('consultation')
        .select('id')
        .where('bot_id', '=', BOT_ID)
        .orderBy('id', 'desc')
        .offset(5000)
        .limit(1)
        .executeTakeFirstOrThrow()
    ).id
    const exportLink = async (days: number) => {
      const r = await fetch(`${base}/api/export`, {
        method: 'POST',
        headers: { authorization: `tma ${initData}`, 'content-type': 'application/json' },
        body: JSON.stringify({ kind: 'questions', days }),
      })
      return ((await r.json()) as { url: string }).url
    }

    const endpoints: [string, () => Promise<unknown>, number][] = [
      ['GET api/me', () => get('api/me'), REQUESTS],
      ['GET api/overview?days=7', () => get('api/overview?days=7'), REQUESTS],
      ['GET api/overview?days=30', () => get('api/overview?days=30'), REQUESTS],
      ['GET api/overview?days=90', () => get('api/overview?days=90'), REQUESTS],
      ['GET api/consultations', () => get('api/consultations'), REQUESTS],
      [
        'GET api/consultations?state=active&tariff=quick',
        () => get('api/consultations?state=active&tariff=quick'),
        REQUESTS,
      ],
      [
        `GET api/consultations?expert=${STAFF[2]}`,
        () => get(`api/consultations?expert=${STAFF[2]}`),
        REQUESTS,
      ],
      [
        'GET api/consultations?q=ticket4242 (rare word)',
        () => get('api/consultations?q=ticket4242'),
        REQUESTS,
      ],
      [
        'GET api/consultations?q=репликации (1 in 10)',
        () => get(`api/consultations?q=${encodeURIComponent('репликации')}`),
        REQUESTS,
      ],
      [
        'GET api/consultations?q=client_4242 (a client)',
        () => get('api/consultations?q=client_4242'),
        REQUESTS,
      ],
      [`GET api/consultations/${some}`, () => get(`api/consultations/${some}`), REQUESTS],
      ['GET api/payments', () => get('api/payments'), REQUESTS],
      ['GET api/payments?status=refunded', () => get('api/payments?status=refunded'), REQUESTS],
      ['GET export/questions.csv (30 days)', async () => get(await exportLink(30)), Math.min(REQUESTS, 10)],
    ]
    console.log(`\n${REQUESTS} requests per endpoint, one at a time (ms):`)
    for (const [name, f, n] of endpoints) {
      const s = stats(await time(f, n))
      console.log(
        `  ${name.padEnd(52)} p50 ${s.p50.toFixed(1).padStart(7)}   p99 ${s.p99.toFixed(1).padStart(7)}`,
      )
    }

    // Baseline: the 90-day overview's statements without HTTP, auth or JSON, on the app's own pool; measured in
    // turns with the endpoint (B E, E B, ...) so the machine's other load weighs on both alike.
    const db = app.deps.db
    const overviewSql = async () => {
      const { from, to } = dayRange(desk, 90, new Date())
      const r = { botId: BOT_ID, from, to, zone: desk.schedule.timezone }
      await Promise.all([
        buildReport(db, BOT_ID, from, to),
        revenueByDay(db, r),
        appealsByWeek(db, r),
        draftsByDay(db, r),
      ])
    }
    const overview90 = () => get('api/overview?days=90')
    const sqlTimes: number[] = []
    const endpointTimes: number[] = []
    for (let i = 0; i < REQUESTS; i++) {
      const pair: [() => Promise<unknown>, number[]][] = [
        [overviewSql, sqlTimes],
        [overview90, endpointTimes],
      ]
      if (i % 2) pair.reverse()
      for (const [f, into] of pair) into.push(...(await time(f, 1, 0)))
    }
    const base90 = stats(sqlTimes)
    const o90 = stats(endpointTimes)
    console.log(
      `\n90-day overview, in turns with its SQL alone:     p50 ${o90.p50.toFixed(1).padStart(7)}   p99 ${o90.p99.toFixed(1).padStart(7)}`,
    )
    console.log(
      `baseline: the 90-day overview's SQL alone        p50 ${base90.p50.toFixed(1).padStart(7)}   p99 ${base90.p99.toFixed(1).padStart(7)}`,
    )
    console.log(`ratio overview / its SQL (p50): ${(o90.p50 / base90.p50).toFixed(2)}`)
    const inRange = await sql<{ n: number }>`select count(*)::int as n from consultation
      where bot_id = ${BOT_ID} and created_at >= now() - interval '90 days'`.execute(handle.db)
    console.log(
      `90-day overview over ${inRange.rows[0]!.n.toLocaleString('en')} consultations in range ` +
        `(${N.toLocaleString('en')} in all): p50 ${o90.p50.toFixed(0)} ms, p99 ${o90.p99.toFixed(0)} ms; ` +
        `target < 300 ms: ${o90.p99 < 300 ? 'met' : o90.p50 < 300 ? 'met at p50, not at p99' : 'NOT met'}`,
    )
  } finally {
    await app?.stop()
    await handle.close()
    await tg.close()
    await database.close()
  }
}

await main()
