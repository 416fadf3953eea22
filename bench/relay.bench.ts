/**
 * npm run bench:relay — messages through the whole app within Telegram's limits, both directions.
 *
 * The built app as a bot process and two worker processes (test/support/processes.ts, as `npm run bot` / `npm run
 * worker` start them) on one database (embedded unless DATABASE_URL is set), against the Bot API stand-in enforcing
 * Telegram's limits (test/support/telegram-limits.ts: 20 per window into a group, 3 per window into a private chat,
 * 30 per second overall; 429 + retry_after past them) with a BENCH_RTT_MS (50) round trip on every call.
 *
 * 1. Clients to the staff group: BENCH_CLIENTS (50) active consultations with their topics, each client sends
 *    BENCH_MESSAGES (10) messages at once. Telegram's windows run scaled by BENCH_SCALE (0.1: 20 per 6 s instead of
 *    per minute) in the stand-in and the app alike; the efficiency ratio means the same either way:
 *    messages delivered per (scaled) minute / (20 x staff groups). Printed: `efficiency: X`, `delivered: N/M`,
 *    `429s: N`, `duplicates: N`, and the time to the last delivery (scaled and in real minutes). BENCH_GROUPS (1):
 *    staff groups of the desk (desks[].staffGroups), one expert each; consultations spread over them at activation.
 * 2. Staff to clients: after a warm-up of 4 answers (the processes restart between the parts), the expert answers
 *    each client BENCH_ANSWERS (4) times in its topic, all at once; windows unscaled (the per-second limits are what is measured). Printed: `answers per second: X` (target >= 25; the
 *    bot's overall limit is 30).
 */
import { execFileSync } from 'node:child_process'
import type { User } from 'grammy/types'
import { sql } from 'kysely'
import { createI18n } from '../src/bot/i18n'
import { loadConfig } from '../src/config/load'
import { Jobs } from '../src/jobs/jobs'
import { quietLogger } from '../src/log'
import { QUEUES } from '../src/workers'
import { activateClient } from '../test/support/activate'
import { STAFF_CHAT_ID, TEST_BOT_ID, TEST_TOKEN } from '../test/support/app'
import { startBotApi } from '../test/support/bot-api'
import {
  type AppProcess,
  configFile,
  removeConfigs,
  spawnApp,
  stopGracefully,
} from '../test/support/processes'
import { BenchRun, migratedDatabase, ROOT } from './support'

const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 50)
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 10)
const ANSWERS = Number(process.env.BENCH_ANSWERS ?? 4)
const SCALE = Number(process.env.BENCH_SCALE ?? 0.1)
const RTT_MS = Number(process.env.BENCH_RTT_MS ?? 50)
const GROUP_LIMIT = 20
const GROUPS = Number(process.env.BENCH_GROUPS ?? 1)
/** The staff groups and their experts: the test desk's group and expert first, then one more of each per group. */
const GROUP_IDS = Array.from({ length: GROUPS }, (_, i) => STAFF_CHAT_ID - i)
const EXPERT_IDS = Array.from({ length: GROUPS }, (_, i) => 900002 + (i ? i + 10 : 0))
const groupsYaml = (yaml: string) =>
  GROUPS === 1
    ? yaml
    : yaml
        .replace('      experts: [900002]\n', `      experts: [${EXPERT_IDS.join(', ')}]\n`)
        .replace(
          '    holdMinutes: 30\n',
          `    holdMinutes: 30\n    staffGroups:\n${GROUP_IDS.map((g, i) => `      - { chatId: ${g}, experts: [${EXPERT_IDS[i]}] }\n`).join('')}`,
        )

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function until(what: string, probe: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(50)
  }
}

async function main() {
  const run = new BenchRun()
  run.hold(null, () => removeConfigs())
  try {
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' })
    const { url, handle } = await migratedDatabase(run, 'relay_bench', 8)
    const db = handle.db
    const jobs = run.hold(Jobs.create(url, QUEUES, quietLogger(), { schedule: false }), (j) => j.stop())
    await jobs.start()
    const tg = run.hold(await startBotApi({ defaultWaitTimeoutMs: 60_000, limits: { scale: SCALE } }), (t) =>
      t.close(),
    )
    tg.delay('*', RTT_MS, { times: Number.POSITIVE_INFINITY, when: (_p, c) => c.method !== 'getUpdates' })
    for (const [i, id] of GROUP_IDS.entries()) tg.forum({ id, title: `Staff ${i + 1}` })
    const config = configFile({ mode: 'polling', edit: groupsYaml })
    const desk = loadConfig({
      CONFIG_FILE: config,
      BOT_TOKEN: TEST_TOKEN,
      DATABASE_URL: url,
      TELEGRAM_API_ROOT: tg.root,
    }).desks[0]!
    const i18n = createI18n(desk.defaultLanguage)
    const experts = EXPERT_IDS.map((id, i) =>
      tg.user({ id, first_name: `Expert${i + 1}`, language_code: 'ru' }),
    )

    process.stdout.write(`activating ${CLIENTS} consultations... `)
    const clients: User[] = []
    for (let i = 0; i < CLIENTS; i++) {
      const u = tg.user({ first_name: `Relay${i}`, language_code: 'en' })
      await activateClient(jobs, db, desk, i18n, u)
      clients.push(u)
    }
    console.log('ok')
    if (GROUPS > 1) {
      const per = await sql<{ chat: number; n: number }>`select staff_chat_id as chat, count(*)::int as n
        from consultation where state = 'active' group by 1 order by 1`.execute(db)
      console.log(`consultations per staff group: ${per.rows.map((r) => `${r.chat}: ${r.n}`).join(', ')}`)
    }

    const procs: AppProcess[] = []
    const start = async (scale: number) => {
      for (const [i, role] of (['bot', 'worker', 'worker'] as const).entries())
        procs.push(
          spawnApp({
            name: `${role}-${i}`,
            role,
            databaseUrl: url,
            apiRoot: tg.root,
            configFile: config,
            unthrottled: false,
            env: { TELEGRAM_WINDOW_SCALE: String(scale) },
          }),
        )
      await Promise.all(procs.map((p) => p.started))
    }
    const stop = async () => {
      await Promise.all(procs.splice(0).map((p) => stopGracefully(p)))
    }
    run.hold(null, () => stop())

    // ---- 1. clients -> staff group (scaled windows)
    await start(SCALE)
    process.stdout.write('topics and cards... ')
    await until(
      'topics',
      async () => {
        const r = await sql<{ n: number }>`select count(*)::int as n from desk_route
          where state = 'active' and card_pinned_message_id = card_message_id and not summary_pending`.execute(
          db,
        )
        return r.rows[0]!.n === CLIENTS
      },
      20 * 60_000,
    )
    // Quiet: what the activation queued into the group has left its window.
    await sleep(60_000 * SCALE + 500)
    console.log('ok')
    const total = CLIENTS * MESSAGES
    const ids = clients.map(() => [] as number[])
    const t0 = Date.now()
    await Promise.all(
      clients.map(async (c, k) => {
        for (let i = 0; i < MESSAGES; i++) {
          const u = tg.privateText(c, `message ${i} from client ${k}`)
          ids[k]!.push(u.message.message_id)
          await tg.push(TEST_BOT_ID, u)
        }
      }),
    )
    const chats = clients.map((c) => c.id)
    const delivered = async () => {
      const r = await sql<{ n: number; last: Date | null }>`
        select count(*)::int as n, max(sent_at) as last from desk_message
          where chat_id = any (${chats}::bigint[]) and direction = 'in' and kind = 'copy' and state = 'sent'`.execute(
        db,
      )
      return r.rows[0]!
    }
    let last = t0
    await until(
      'deliveries',
      async () => {
        const r = await delivered()
        if (r.n >= total) last = Date.now()
        return r.n >= total
      },
      60 * 60_000,
    )
    const got = (await delivered()).n
    let duplicates = 0
    const copies = new Map<string, number>()
    for (const call of tg.callsTo(
      ['copyMessage', 'copyMessages'],
      (p) => chats.includes(Number(p.from_chat_id)),
      {
        ok: true,
      },
    ))
      for (const id of call.payload.message_ids ?? [call.payload.message_id]) {
        const key = `${call.payload.from_chat_id}:${id}`
        copies.set(key, (copies.get(key) ?? 0) + 1)
      }
    for (const n of copies.values()) duplicates += Math.max(0, n - 1)
    const seconds = (last - t0) / 1000
    const minutes = seconds / (60 * SCALE)
    const efficiency = got / minutes / (GROUP_LIMIT * GROUPS)
    console.log(
      `clients -> group: ${total} messages, windows x${SCALE}: last delivered after ${seconds.toFixed(1)} s ` +
        `(${minutes.toFixed(2)} Telegram minutes)`,
    )
    console.log(`efficiency: ${efficiency.toFixed(3)}`)
    console.log(`delivered: ${got}/${total}`)
    console.log(`429s: ${tg.limiter!.refused}`)
    if (tg.limiter!.refused) console.log(`  refused by key: ${JSON.stringify([...tg.limiter!.refusedBy])}`)
    console.log(`duplicates: ${duplicates}`)

    // ---- 2. staff -> clients (unscaled windows: the per-second limits)
    await stop()
    tg.limiter!.rescale(1)
    await start(1)
    const answeredCount = async () => {
      const r = await sql<{ n: number }>`select count(*)::int as n from desk_message
        where direction = 'out' and kind in ('copy', 'text') and state = 'sent'`.execute(db)
      return r.rows[0]!.n
    }
    const threads = await sql<{ user_id: number; chat: number; thread: number }>`
      select c.user_id, r.support_chat_id as chat, r.message_thread_id as thread from desk_route r
        join consultation c on c.id = r.consultation_id where r.state = 'active'`.execute(db)
    const topicOf = new Map(threads.rows.map((r) => [Number(r.user_id), r]))
    const answer = (c: User, text: string) => {
      const topic = topicOf.get(c.id)!
      return tg.push(
        TEST_BOT_ID,
        tg.groupTopicMessage(topic.chat, topic.thread, experts[GROUP_IDS.indexOf(topic.chat)]!, text),
      )
    }
    // Warm-up (the processes were just restarted): a few answers through every path, not measured; then their
    // clients' windows clear.
    const warm = await answeredCount()
    for (const c of clients.slice(0, 4)) await answer(c, 'warm-up')
    await until('warm-up', async () => (await answeredCount()) >= warm + 4, 60_000)
    await sleep(3500)
    const refusedBefore = tg.limiter!.refused
    const answers = CLIENTS * ANSWERS
    const answeredBefore = await answeredCount()
    const a0 = Date.now()
    const mark0 = tg.mark()
    for (let i = 0; i < ANSWERS; i++) for (const c of clients) await answer(c, `answer ${i}`)
    const answered = async () => (await answeredCount()) - answeredBefore
    let a1 = a0
    await until(
      'answers',
      async () => {
        const n = await answered()
        if (n >= answers) a1 = Date.now()
        return n >= answers
      },
      30 * 60_000,
    )
    console.log(
      `staff -> clients: ${answers} answers in ${((a1 - a0) / 1000).toFixed(1)} s, RTT ${RTT_MS} ms`,
    )
    console.log(`answers per second: ${(answers / ((a1 - a0) / 1000)).toFixed(1)}`)
    const admitted = await sql<{
      s: number
    }>`select extract(epoch from max(created_at) - min(created_at))::float8 as s
      from desk_message where direction = 'out' and kind in ('copy', 'text') and created_at >= ${new Date(a0)}`.execute(
      db,
    )
    console.log(
      `  (the bot admitted them over ${admitted.rows[0]!.s?.toFixed(1)} s: each topic is its own chat key in the intake)`,
    )
    console.log(`429s (answers): ${tg.limiter!.refused - refusedBefore}`)
    // What the answers cost in calls (receipts of part 1 still trailing count against the bot's budget too).
    const byMethod = new Map<string, number>()
    for (const c of tg.calls)
      if (c.seq > mark0 && c.method !== 'getUpdates')
        byMethod.set(c.method, (byMethod.get(c.method) ?? 0) + 1)
    console.log(`  calls meanwhile: ${[...byMethod].map(([m, n]) => `${m} ${n}`).join(', ')}`)
    // Per second since the first answer was pushed: answers admitted by the bot / answers sent to the clients.
    const perSecond = await sql<{ s: number; admitted: number; sent: number }>`
      with m as (select created_at, sent_at from desk_message
                   where direction = 'out' and kind in ('copy', 'text') and created_at >= ${new Date(a0)})
      select g.s,
        (select count(*)::int from m where floor(extract(epoch from m.created_at - ${new Date(a0)}::timestamptz)) = g.s)
          as admitted,
        (select count(*)::int from m where floor(extract(epoch from m.sent_at - ${new Date(a0)}::timestamptz)) = g.s)
          as sent
      from generate_series(0, ${Math.ceil((a1 - a0) / 1000)}) as g(s)`.execute(db)
    console.log(
      `  per second (admitted/sent): ${perSecond.rows.map((r) => `${r.admitted}/${r.sent}`).join(' ')}`,
    )
  } finally {
    await run.close()
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e)
    process.exit(1)
  },
)
