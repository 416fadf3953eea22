import type { IncomingMessage, ServerResponse } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { metricsRoute } from '../../src/server/metrics'
import { createApi } from '../../src/telegram/api'
import { TEST_TOKEN } from '../support/app'
import {
  consultationWithQuestion,
  type DraftWorld,
  draftIn,
  drafts,
  startDraftWorld,
} from '../support/drafting'
import {
  appeals,
  clientSends,
  type DeskWorld,
  eventually,
  itemIn,
  newClient,
  payThroughTelegram,
  staffSends,
  startDeskWorld,
  TEST_BOT_ID,
  topicReady,
} from '../support/fixtures'
import { fastForward } from '../support/lifecycle-clock'

/**
 * GET /metrics: Prometheus text with the desk's counters and the outbox's queues read from the database, behind a
 * bearer token (METRICS_TOKEN) or, without one, for the loopback address only.
 */

const TOKEN = 'metrics-secret-1'

/** The value of one sample line (`name{labels} value`), 0 when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue
    return Number(line.slice(line.lastIndexOf(' ') + 1))
  }
  return 0
}

describe('/metrics with METRICS_TOKEN', () => {
  let w: DeskWorld
  let url: string
  beforeAll(async () => {
    w = await startDeskWorld({ env: { METRICS_TOKEN: TOKEN } })
    url = `http://127.0.0.1:${w.t.app.httpPort}/metrics`
  })
  afterAll(() => w?.stop())

  const scrape = async () => {
    const r = await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` } })
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
    return r.text()
  }

  it('refuses a missing or wrong token (401), even from localhost; the token works through a proxy', async () => {
    expect((await fetch(url)).status).toBe(401)
    expect((await fetch(url, { headers: { 'x-forwarded-for': '203.0.113.9' } })).status).toBe(401)
    const proxied = await fetch(url, {
      headers: { 'x-forwarded-for': '203.0.113.9', authorization: `Bearer ${TOKEN}` },
    })
    expect(proxied.status).toBe(200)
    expect((await fetch(url, { headers: { authorization: 'Bearer nope' } })).status).toBe(401)
    expect((await fetch(url, { headers: { authorization: TOKEN } })).status).toBe(401)
  })

  it('counts updates, handler latency, payments and Stars, deliveries; reads queues and the pool', async () => {
    const before = await scrape()
    const client = await newClient(w, { language_code: 'en' })
    const { consultationId } = await payThroughTelegram(w, client)
    await topicReady(w, consultationId)
    const m = await clientSends(w, client, 'A question for the metrics')
    await itemIn(w, client.id, m.message_id, 'sent')
    const after = await scrape()
    const delta = (name: string, labels: Record<string, string> = {}) =>
      sample(after, name, labels) - sample(before, name, labels)

    expect(delta('desk_updates_total', { type: 'message', outcome: 'done' })).toBeGreaterThanOrEqual(1)
    expect(delta('desk_updates_total', { type: 'successful_payment', outcome: 'done' })).toBe(1)
    expect(delta('desk_update_handler_seconds_count', { type: 'message' })).toBeGreaterThanOrEqual(1)
    expect(after).toMatch(/desk_update_handler_seconds_bucket\{le="0\.05",type="message"/)
    expect(delta('desk_payments_total', { kind: 'activated' })).toBe(1)
    expect(delta('desk_payment_stars_total', { kind: 'activated' })).toBe(100)
    expect(delta('desk_deliveries_total', { result: 'sent' })).toBeGreaterThanOrEqual(1)
    expect(delta('ledger_reserves_total', { outcome: 'reserved' })).toBeGreaterThanOrEqual(1)
    // The day's first purchase opens its capacity account on the way: nobody was refused, nothing is counted so.
    expect(delta('ledger_refusals_total', { reason: 'no_account' })).toBe(0)
    expect(delta('ledger_reserves_total', { outcome: 'refused' })).toBe(0)
    expect(after).not.toMatch(/^desk_deliveries_total\{[^}]*direction=/m)
    expect(after).toMatch(/^# HELP desk_deliveries_total .*by result/m)
    expect(after).not.toMatch(/^# HELP desk_deliveries_total .*direction/m)
    // Read from the database at scrape time.
    expect(after).toMatch(/^outbox_jobs_due\{queue="[a-z.-]+"\} \d+$/m)
    expect(after).toMatch(/^outbox_dead_letters 0$/m)
    // Every queue has a series, an empty one too; pg-boss's own are not shown.
    expect(after).toMatch(/^outbox_jobs_due\{queue="ops.retention"\} \d+$/m)
    expect(after).toMatch(/^outbox_oldest_due_job_age_seconds\{queue="tg.notify"\} [\d.e+-]+$/m)
    expect(after).not.toMatch(/queue="__pgboss/)
    expect(
      sample(after, 'db_pool_connections', { state: 'total', pool: 'app', server: 'external' }),
    ).toBeGreaterThan(0)
    // pg-boss's own pool (its fetches and completions) is there too.
    expect(
      sample(after, 'db_pool_connections', { state: 'total', pool: 'jobs', server: 'external' }),
    ).toBeGreaterThan(0)
    expect(after).toMatch(/^desk_database_up 1$/m)
    expect(after).toMatch(/^process_resident_memory_bytes/m)
  })

  it('counts an SLA reminder and a breach as their jobs fire', async () => {
    const before = await scrape()
    const client = await newClient(w, { language_code: 'en' })
    const { consultationId } = await payThroughTelegram(w, client)
    await topicReady(w, consultationId)
    const q = await clientSends(w, client, 'A question that waits')
    await itemIn(w, client.id, q.message_id, 'sent')
    await eventually(async () => (await appeals(w, consultationId))[0], 'the appeal')
    // The SLA is 4 h, the reminder 30 min before: 3 h 31 min on, then past the due time.
    await fastForward(w.deps.db, consultationId, (3 * 60 + 31) * 60_000)
    await eventually(async () => {
      const m = await scrape()
      return (
        sample(m, 'desk_sla_reminders_total') - sample(before, 'desk_sla_reminders_total') === 1 || undefined
      )
    }, 'the reminder counted')
    await fastForward(w.deps.db, consultationId, 30 * 60_000)
    await eventually(async () => {
      const m = await scrape()
      const d = (l: string) =>
        sample(m, 'desk_sla_breaches_total', { outcome: l }) -
        sample(before, 'desk_sla_breaches_total', { outcome: l })
      return d('none') === 1 || undefined
    }, 'the breach counted')
  })

  it('counts a refund and its Stars once, whatever is pressed again', async () => {
    const before = await scrape()
    const client = await newClient(w, { language_code: 'en' })
    const { orderId } = await payThroughTelegram(w, client)
    const payment = await w.deps.db
      .selectFrom('payment')
      .select(['id', 'telegram_payment_charge_id'])
      .where('order_id', '=', orderId)
      .executeTakeFirstOrThrow()
    await w.tg.push(TEST_BOT_ID, w.tg.command(w.admin, '/refund', payment.telegram_payment_charge_id))
    const confirm = await w.tg.waitForSent(w.admin.id, /Refund payment/)
    await w.tg.push(TEST_BOT_ID, w.tg.callback(w.admin, `rf:yes:${payment.id}`, confirm))
    await w.tg.waitFor('editMessageText', (p) => /✅ Refunded: payment/.test(p.text))
    await w.tg.push(TEST_BOT_ID, w.tg.callback(w.admin, `rf:yes:${payment.id}`, confirm))
    await w.tg.waitFor('editMessageText', (p) => /is already refunded/.test(p.text))
    const after = await scrape()
    const d = (name: string) =>
      sample(after, name, { source: 'admin' }) - sample(before, name, { source: 'admin' })
    expect(d('desk_refunds_total')).toBe(1)
    expect(d('desk_refund_stars_total')).toBe(100)
  })

  it('counts a 429 and its retry_after on the Api jobs use', async () => {
    const before = await scrape()
    const chat = (await newClient(w)).id
    w.tg.fail('sendMessage', {
      error_code: 429,
      description: 'Too Many Requests: retry after 1',
      parameters: { retry_after: 1 },
    })
    await createApi({
      token: TEST_TOKEN,
      apiRoot: w.tg.root,
      botId: w.deps.config.desks[0]!.botId,
      budget: w.deps.budget,
    }).sendMessage(chat, 'after a 429')
    const after = await scrape()
    expect(
      sample(after, 'telegram_429_total', { method: 'sendMessage' }) -
        sample(before, 'telegram_429_total', { method: 'sendMessage' }),
    ).toBe(1)
    expect(
      sample(after, 'telegram_retry_after_seconds_total', { method: 'sendMessage' }) -
        sample(before, 'telegram_retry_after_seconds_total', { method: 'sendMessage' }),
    ).toBe(1)
  })
})

describe('/metrics without a token', () => {
  let w: DeskWorld
  beforeAll(async () => {
    w = await startDeskWorld()
  })
  afterAll(() => w?.stop())

  it('answers the loopback address, refuses any other (403) and any forwarded request (a proxy on this host)', async () => {
    const r = await fetch(`http://127.0.0.1:${w.t.app.httpPort}/metrics`)
    expect(r.status).toBe(200)
    expect(await r.text()).toContain('desk_updates_total')
    // A reverse proxy on the same host connects from 127.0.0.1 and says whom for: that is not local.
    const forwarded: Record<string, string>[] = [
      { 'x-forwarded-for': '203.0.113.9' },
      { forwarded: 'for=203.0.113.9;proto=https' },
      { 'x-real-ip': '203.0.113.9' },
      { 'x-forwarded-for': '127.0.0.1' },
    ]
    for (const headers of forwarded) {
      const f = await fetch(`http://127.0.0.1:${w.t.app.httpPort}/metrics`, { headers })
      expect(f.status, JSON.stringify(headers)).toBe(403)
      expect(await f.text()).not.toContain('desk_payment_stars_total')
    }
    // A request from another host, as the handler sees it.
    const route = metricsRoute(w.deps, undefined)
    let status = 0
    const res = {
      writeHead(s: number) {
        status = s
        return this
      },
      end() {
        return this
      },
    } as unknown as ServerResponse
    await route({ headers: {}, socket: { remoteAddress: '10.1.2.3' } } as unknown as IncomingMessage, res)
    expect(status).toBe(403)
    await route({ headers: {}, socket: { remoteAddress: '::1' } } as unknown as IncomingMessage, res)
    expect(status).toBe(200)
  })
})

describe('/metrics: drafts and the ledger', () => {
  let w: DraftWorld
  beforeAll(async () => {
    w = await startDraftWorld()
  })
  afterAll(() => w?.stop())

  const scrape = async () => (await fetch(`http://127.0.0.1:${w.t.app.httpPort}/metrics`)).text()

  it('counts LLM tokens and cost of a draft, and ledger refusals by reason', async () => {
    const before = await scrape()
    const { consultationId, thread } = await consultationWithQuestion(w)
    await staffSends(w, thread, w.expert, '/draft')
    const d = await eventually(async () => (await drafts(w, consultationId))[0], 'a draft')
    const ready = await draftIn(w, d.id, ['ready'])
    const refused = await w.deps.ledger.reserve({
      requestId: 'metrics-probe-no-account',
      lines: [{ account: { accountId: 987_654_321 }, amount: 1 }],
    })
    expect(refused).toMatchObject({ admitted: false, reason: 'no_account' })
    const after = await scrape()
    const delta = (name: string, labels: Record<string, string> = {}) =>
      sample(after, name, labels) - sample(before, name, labels)
    expect(delta('llm_tokens_total', { direction: 'input' })).toBe(ready.input_tokens)
    expect(delta('llm_tokens_total', { direction: 'output' })).toBe(ready.output_tokens)
    expect(delta('llm_cost_minor_total', { currency: 'USD' })).toBe(Number(ready.cost))
    expect(delta('ledger_refusals_total', { reason: 'no_account' })).toBe(1)
    expect(delta('ledger_reserves_total', { outcome: 'refused' })).toBeGreaterThanOrEqual(1)
  })
})
