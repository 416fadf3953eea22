import net from 'node:net'
import { Writable } from 'node:stream'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type {
  ConsultationDetailDto,
  ConsultationItemDto,
  ExportLinkDto,
  MeDto,
  OverviewDto,
  PaymentDto,
  RefundResultDto,
} from '../../src/dashboard/dashboard.model'
import { MESSAGE_TSV, tsQuery } from '../../src/dashboard/dashboard.repository'
import { monthlyPeriod } from '../../src/ledger/ledger.periods'
import { createLogger } from '../../src/log'
import { buildReport } from '../../src/reports/reports.service'
import { signInitData, tamper } from '../support/dashboard'
import { type DashboardSeed, seedDashboard } from '../support/dashboard-seed'
import {
  ADMIN_ID,
  type DeskWorld,
  EXPERT_ID,
  eventually,
  STAFF_CHAT_ID,
  startDeskWorld,
  TEST_BOT_ID,
} from '../support/fixtures'

/**
 * The dashboard's JSON API against the real app (its HTTP server, its database, the Bot API stand-in for refunds)
 * on a seeded month of desk history: who gets what, the numbers against /report's, search, filters, a
 * consultation's page, CSV exports, refunds. One file over the house's ~400 lines on purpose: every case reads the
 * same seeded month (test/support/dashboard-seed.ts), and a second file would seed and start a second app.
 */

const TOKEN = `${TEST_BOT_ID}:${'T'.repeat(35)}`
const CLIENT_ID = 777_001

let w: DeskWorld
let seed: DashboardSeed
let base: string
/** The app's log lines (info and up). */
const logged: { level: number; msg: string }[] = []

const auth = (userId: number, lang = 'en') =>
  signInitData(TOKEN, { user: { id: userId, language_code: lang } })

async function call(
  path: string,
  initData: string | undefined,
  init: { method?: string; body?: unknown } = {},
) {
  const res = await fetch(`${base}/dashboard/test/${path}`, {
    method: init.method ?? 'GET',
    headers: {
      ...(initData ? { authorization: `tma ${initData}` } : {}),
      ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  })
  const text = await res.text()
  return { status: res.status, headers: res.headers, text, json: () => JSON.parse(text) as any }
}

async function get<T>(path: string, who = ADMIN_ID): Promise<T> {
  const r = await call(`api/${path}`, auth(who))
  expect(r.status, r.text).toBe(200)
  return r.json() as T
}

beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n')) if (l.trim()) logged.push(JSON.parse(l))
      done()
    },
  })
  w = await startDeskWorld({
    log: createLogger('info', sink),
    configure: (c) => {
      c.dashboard.publicUrl = 'https://desk.example.com'
      c.llm.drafting.monthlyBudget = { unit: 'money', amount: 5000 }
    },
  })
  seed = await seedDashboard(w.deps.db, w.t.desk, {
    admin: ADMIN_ID,
    expert: EXPERT_ID,
    user: (init) => w.tg.user(init),
  })
  base = `http://127.0.0.1:${w.t.app.httpPort}`
})
afterAll(() => w?.stop())

describe('access', () => {
  it('without launch data, with forged or stale data: 401 and nothing but the status', async () => {
    const forged = tamper(auth(EXPERT_ID), 'user', JSON.stringify({ id: ADMIN_ID, first_name: 'A' }))
    const stale = signInitData(TOKEN, {
      user: { id: ADMIN_ID },
      authDate: Math.floor(Date.now() / 1000) - 7200,
    })
    const otherBot = signInitData(`7000009:${'X'.repeat(35)}`, { user: { id: ADMIN_ID } })
    for (const initData of [undefined, forged, stale, otherBot])
      for (const path of [
        'me',
        'overview?days=30',
        'consultations',
        `consultations/${seed.refundable.id}`,
        'payments',
      ]) {
        const r = await call(`api/${path}`, initData)
        expect(r.status).toBe(401)
        expect(r.json()).toEqual({ error: 'unauthorized' })
      }
    const refund = await call(`api/payments/${seed.refundable.paymentId}/refund`, forged, {
      method: 'POST',
      body: { confirmCharge: seed.refundable.charge },
    })
    expect(refund.status).toBe(401)
    expect(w.tg.callsTo('refundStarPayment')).toHaveLength(0)
  })

  it('signed and fresh but not staff: 403; an unknown desk: 404', async () => {
    const r = await call('api/overview?days=30', auth(CLIENT_ID))
    expect(r.status).toBe(403)
    expect(r.json()).toEqual({ error: 'forbidden' })
    expect((await call('api/me', auth(ADMIN_ID)).then((x) => x.status)) === 200).toBe(true)
    const other = await fetch(`${base}/dashboard/nope/api/me`, {
      headers: { authorization: `tma ${auth(ADMIN_ID)}` },
    })
    expect(other.status).toBe(404)
  })

  it('experts: their own figures and consultations; payments, exports and refunds are for admins', async () => {
    const me = await get<MeDto>('me', EXPERT_ID)
    expect(me).toMatchObject({ role: 'expert', desk: { slug: 'test', zone: 'Europe/Moscow' } })
    const o = await get<OverviewDto>('overview?days=30', EXPERT_ID)
    expect(o.revenue).toBeNull()
    expect(o.refusals).toBeNull()
    expect(o.experts.map((e) => e.staffId)).toEqual([EXPERT_ID])
    const mine = await get<ConsultationItemDto[]>('consultations', EXPERT_ID)
    const answered = await sql<{ id: number }>`select distinct consultation_id as id from desk_appeal
      where answered_by = ${EXPERT_ID} order by 1 desc`.execute(w.deps.db)
    expect(mine.map((c) => c.id)).toEqual(answered.rows.map((r) => r.id))
    // A consultation only the admin answered.
    const adminsOnly = seed.consultations[1]!
    expect(mine.map((c) => c.id)).not.toContain(adminsOnly.id)
    expect((await call(`api/consultations/${adminsOnly.id}`, auth(EXPERT_ID))).status).toBe(404)
    expect((await call('api/payments', auth(EXPERT_ID))).status).toBe(403)
    expect(
      (await call('api/export', auth(EXPERT_ID), { method: 'POST', body: { kind: 'payments', days: 30 } }))
        .status,
    ).toBe(403)
    expect(
      (
        await call(`api/payments/${seed.refundable.paymentId}/refund`, auth(EXPERT_ID), {
          method: 'POST',
          body: { confirmCharge: seed.refundable.charge },
        })
      ).status,
    ).toBe(403)
  })
})

describe('overview: the numbers of /report, per day and week', () => {
  for (const days of [7, 30, 90])
    it(`${days} days: totals are buildReport's for the same range, and the series add up to them`, async () => {
      const o = await get<OverviewDto>(`overview?days=${days}`)
      const report = await buildReport(w.deps.db, TEST_BOT_ID, new Date(o.range.from), new Date(o.range.to))
      expect(o.range).toMatchObject({ days, zone: 'Europe/Moscow' })
      expect(o.revenue!.totals).toEqual(report.revenue)
      expect(o.consultations).toEqual(report.consultations)
      expect(o.appeals.totals).toEqual(report.appeals)
      expect(o.experts).toEqual(report.experts)
      expect(o.refusals).toEqual({ ledger: report.ledger, admission: report.admission })
      expect(o.revenue!.byDay).toHaveLength(days)
      const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0)
      expect(sum(o.revenue!.byDay.map((d) => d.paidStars))).toBe(report.revenue.paidStars)
      expect(sum(o.revenue!.byDay.map((d) => d.refundedStars))).toBe(report.revenue.refundedStars)
      expect(sum(o.revenue!.byDay.map((d) => d.paidCount))).toBe(report.revenue.paidCount)
      for (const k of [
        'accepted',
        'answeredInTime',
        'answeredLate',
        'breached',
        'open',
        'openBreached',
      ] as const)
        expect(sum(o.appeals.byWeek.map((x) => x[k]))).toBe(report.appeals[k])
      expect(o.ratings).toBeNull()
    })

  it('what the seed holds: revenue, a refund, states, medians, refusals in the last 30 days', async () => {
    const o = await get<OverviewDto>('overview?days=30')
    const paid = seed.consultations.reduce((a, c) => a + c.price, 0)
    expect(o.revenue!.totals).toMatchObject({
      paidCount: 10,
      paidStars: paid,
      refundedCount: 1,
      refundedStars: 100,
    })
    expect(o.consultations).toEqual([
      { state: 'active', count: 2 },
      { state: 'closed', count: 6 },
      { state: 'revoked', count: 1 },
      { state: 'waiting', count: 1 },
    ])
    expect(o.appeals.totals).toMatchObject({ accepted: 14, answeredInTime: 9, answeredLate: 3, open: 2 })
    // Expert: 35, 80, 50, 20, 260, 45, 120, 300, 25 -> median 50; admin: 310, 90, 15 -> 90.
    expect(o.experts).toEqual([
      { staffId: EXPERT_ID, answered: 9, inTime: 7, medianMinutes: 50 },
      { staffId: ADMIN_ID, answered: 3, inTime: 2, medianMinutes: 90 },
    ])
    expect(o.refusals!.ledger).toEqual([
      { reason: 'exhausted', scope: 'consultation', unit: 'appeals', count: 2 },
    ])
    expect(o.refusals!.admission).toEqual([{ reason: 'window_closed', scope: null, unit: null, count: 1 }])
    expect(o.drafts.byDay.reduce((a, d) => a + d.drafts, 0)).toBe(6)
    expect(o.drafts.byDay.reduce((a, d) => a + d.costMinor, 0)).toBe(3 + 3 + 4 + 3 + 3 + 3)
    const week = await get<OverviewDto>('overview?days=7')
    const recent = seed.consultations.filter((c) => c.daysAgo <= 5)
    expect(week.revenue!.totals.paidStars).toBe(recent.reduce((a, c) => a + c.price, 0))
  })

  it("the month's AI budget is the ledger's account: limit, used, held", async () => {
    const o0 = await get<OverviewDto>('overview?days=30')
    // No draft this month asked for the budget line yet: the configured limit, nothing used.
    expect(o0.drafts.budget).toMatchObject({ unit: 'money', limit: 5000, used: 0, held: 0 })
    const period = monthlyPeriod(new Date(), 'Europe/Moscow')
    await sql`insert into ledger_account (scope, subject, unit, period_start, period_end, time_zone, granted, reserved,
        used, holds)
      values ('desk', ${String(TEST_BOT_ID)}, 'llm_money', ${period.start}, ${period.end}, 'Europe/Moscow', 5000, 30,
        120, 1)`.execute(w.deps.db)
    const o = await get<OverviewDto>('overview?days=30')
    expect(o.drafts.budget).toEqual({
      unit: 'money',
      limit: 5000,
      used: 120,
      held: 30,
      periodStart: period.start.toISOString(),
      periodEnd: period.end.toISOString(),
    })
    expect((await get<OverviewDto>('overview?days=30', EXPERT_ID)).drafts.budget).toBeNull()
  })

  it('only 7, 30 or 90 days', async () => {
    expect((await call('api/overview?days=8', auth(ADMIN_ID))).status).toBe(400)
  })
})

describe('consultations: filters, search, a consultation page', () => {
  it('full-text search finds a consultation by a word of its conversation, in another word form', async () => {
    const r = await get<ConsultationItemDto[]>(`consultations?q=${encodeURIComponent(seed.searchable.query)}`)
    expect(r.map((c) => c.id)).toEqual([seed.searchable.consultationId])
    expect(r[0]!.match).toMatch(/«Репликация»/)
    // English stemming too: "retrying" finds "retries" nowhere, but "updates" finds "update".
    const en = await get<ConsultationItemDto[]>('consultations?q=updates%20twice')
    expect(en.length).toBeGreaterThan(0)
    expect(en.every((c) => /update/i.test(c.match ?? ''))).toBe(true)
    expect(await get<ConsultationItemDto[]>('consultations?q=квантовый')).toEqual([])
  })

  it("the search's expression is the index's: the planner can use desk_message_fts", async () => {
    // Sequential scans off, so a tiny table still shows whether the index matches the query at all.
    const plan = await w.deps.db.connection().execute(async (db) => {
      await sql`set enable_seqscan = off`.execute(db)
      const r = await sql<{ 'QUERY PLAN': string }>`explain select m.id from desk_message m
        where ${MESSAGE_TSV} @@ ${tsQuery('репликации')}`.execute(db)
      await sql`reset enable_seqscan`.execute(db)
      return r.rows.map((x) => x['QUERY PLAN']).join('\n')
    })
    expect(plan).toContain('desk_message_fts')
  })

  it('by client name, @username, client id; by state, tariff, expert and dates', async () => {
    const anna = seed.consultations.filter((c) => c.userId === seed.clients[0]!.id).map((c) => c.id)
    expect((await get<ConsultationItemDto[]>('consultations?q=%40anna_s')).map((c) => c.id).sort()).toEqual(
      anna.sort(),
    )
    expect((await get<ConsultationItemDto[]>('consultations?q=Смирнова')).length).toBe(anna.length)
    expect((await get<ConsultationItemDto[]>(`consultations?q=${seed.clients[0]!.id}`)).length).toBe(
      anna.length,
    )
    expect((await get<ConsultationItemDto[]>('consultations?state=closed')).length).toBe(6)
    expect(
      (await get<ConsultationItemDto[]>('consultations?tariff=later')).every((c) => c.tariffCode === 'later'),
    ).toBe(true)
    const byAdmin = await get<ConsultationItemDto[]>(`consultations?expert=${ADMIN_ID}`)
    expect(byAdmin.length).toBe(3)
    expect(byAdmin.every((c) => c.experts.includes(ADMIN_ID))).toBe(true)
    const today = new Date().toISOString().slice(0, 10)
    const old = new Date(Date.now() - 40 * 86_400_000).toISOString().slice(0, 10)
    expect((await get<ConsultationItemDto[]>(`consultations?from=${old}&to=${today}`)).length).toBe(10)
    expect((await get<ConsultationItemDto[]>(`consultations?to=${old}`)).length).toBe(0)
  })

  it('@username is that username: "_" in it is a letter, not a wildcard', async () => {
    const anna = seed.clients[0]!
    expect(anna.username).toBe('anna_s')
    expect((await get<ConsultationItemDto[]>('consultations?q=%40ANNA_S')).length).toBeGreaterThan(0)
    for (const q of ['@ann__s', '@_nna_s', '@anna__', '@a____s'])
      expect(await get<ConsultationItemDto[]>(`consultations?q=${encodeURIComponent(q)}`), q).toEqual([])
  })

  it("a consultation's card, timeline and transcript", async () => {
    const c = seed.consultations[0]!
    const d = await get<ConsultationDetailDto>(`consultations/${c.id}`)
    expect(d.card).toMatchObject({
      id: c.id,
      state: 'closed',
      client: { username: 'anna_s' },
      appealsUsed: 2,
    })
    const types = d.timeline.map((e) => e.type)
    expect(types).toEqual(
      expect.arrayContaining(['created', 'payment', 'question', 'answer', 'draft', 'closed']),
    )
    expect(d.timeline.filter((e) => e.type === 'answer')).toHaveLength(2)
    expect(d.payments.map((p) => p.id)).toEqual([c.paymentId])
    expect(d.transcript).toContain('Репликация базы данных PostgreSQL')
    expect(d.transcript).toContain('Начните с метрик')
    const refused = await get<ConsultationDetailDto>(`consultations/${seed.consultations[1]!.id}`)
    expect(refused.timeline).toContainEqual(
      expect.objectContaining({ type: 'refusal', reason: 'window_closed' }),
    )
  })
})

describe('CSV exports', () => {
  const parse = (csv: string) =>
    csv
      .replace(/^\uFEFF/, '')
      .trimEnd()
      .split('\r\n')
      .map((l) => l.split(','))

  it('payments, consultations, questions: stable columns, the desk zone, a signed short link', async () => {
    const link = await call('api/export', auth(ADMIN_ID), {
      method: 'POST',
      body: { kind: 'payments', days: 30 },
    })
    expect(link.status).toBe(200)
    const { url, filename } = link.json() as ExportLinkDto
    expect(filename).toMatch(/^test-payments-\d{4}-\d{2}-\d{2}_\d{4}-\d{2}-\d{2}\.csv$/)
    // The link works without the initData header (Telegram's downloadFile cannot send one).
    const res = await fetch(`${base}/dashboard/test/${url}`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8')
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="${filename}"`)
    const rows = parse(await res.text())
    expect(rows[0]).toEqual([
      'payment_id',
      'paid_at',
      'user_id',
      'first_name',
      'last_name',
      'username',
      'kind',
      'amount',
      'currency',
      'order_id',
      'consultation_id',
      'tariff',
      'telegram_payment_charge_id',
      'refunded_at',
      'refund_source',
      'refunded_by',
    ])
    expect(rows).toHaveLength(1 + 10)
    expect(rows.slice(1).every((r) => /\+03:00$/.test(r[1]!))).toBe(true)
    const refunded = rows.slice(1).find((r) => r[13] !== '')!
    expect(refunded[14]).toBe('admin')

    for (const [kind, header, count] of [
      ['consultations', 'consultation_id,created_at,state,user_id', 10],
      [
        'questions',
        'consultation_id,question_number,user_id,tariff,state,accepted_at,sla_business_minutes',
        14,
      ],
    ] as const) {
      const l = (
        await call('api/export', auth(ADMIN_ID), { method: 'POST', body: { kind, days: 30 } })
      ).json()
      const body = await (await fetch(`${base}/dashboard/test/${l.url}`)).text()
      expect(body.replace(/^\uFEFF/, '').startsWith(header)).toBe(true)
      expect(parse(body)).toHaveLength(1 + count)
    }
  })

  it('a token changed, used for another file, or missing: 401 and no rows', async () => {
    const { url } = (
      await call('api/export', auth(ADMIN_ID), { method: 'POST', body: { kind: 'payments', days: 7 } })
    ).json()
    const token = new URL(url, 'http://x/').searchParams.get('t')!
    const [payload, sig] = token.split('.')
    const widened = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), f: 0 }),
    ).toString('base64url')
    for (const bad of [
      `export/payments.csv?t=${widened}.${sig}`,
      `export/consultations.csv?t=${encodeURIComponent(token)}`,
      'export/payments.csv',
    ]) {
      const r = await fetch(`${base}/dashboard/test/${bad}`)
      expect(r.status).toBe(401)
      expect(await r.text()).toBe('{"error":"unauthorized"}')
    }
  })
})

describe('refunds from the page', () => {
  it('the confirmation must name the payment; then the bot refund runs once, audited, and repeats change nothing', async () => {
    const c = seed.refundable
    const wrong = await call(`api/payments/${c.paymentId}/refund`, auth(ADMIN_ID), {
      method: 'POST',
      body: { confirmCharge: 'someone-else' },
    })
    expect(wrong.status).toBe(409)
    expect(w.tg.callsTo('refundStarPayment')).toHaveLength(0)

    const ok = await call(`api/payments/${c.paymentId}/refund`, auth(ADMIN_ID), {
      method: 'POST',
      body: { confirmCharge: c.charge },
    })
    expect(ok.status).toBe(200)
    expect(ok.json()).toMatchObject({
      status: 'refunded',
      payment: { id: c.paymentId, refundSource: 'admin' },
    })
    expect(w.tg.callsTo('refundStarPayment', { telegram_payment_charge_id: c.charge })).toHaveLength(1)
    const again = (await call(`api/payments/${c.paymentId}/refund`, auth(ADMIN_ID), {
      method: 'POST',
      body: { confirmCharge: c.charge },
    }).then((r) => r.json())) as RefundResultDto
    expect(again.status).toBe('already-refunded')
    expect(w.tg.callsTo('refundStarPayment', { telegram_payment_charge_id: c.charge })).toHaveLength(1)

    const state = await sql<{ state: string; by: number; order_state: string }>`
      select c.state, p.refunded_by as by, o.state as order_state from consultation c
        join payment p on p.order_id = c.order_id join orders o on o.id = c.order_id
      where c.id = ${c.id}`.execute(w.deps.db)
    expect(state.rows[0]).toEqual({ state: 'revoked', by: ADMIN_ID, order_state: 'refunded' })
    const audit = await sql<{ action: string; n: number }>`select action, count(*)::int as n from audit_log
      where subject_type = 'payment' and subject_id = ${String(c.paymentId)} group by 1 order by 1`.execute(
      w.deps.db,
    )
    expect(audit.rows).toEqual([
      { action: 'dashboard.refund_requested', n: 2 },
      { action: 'payment.refunded', n: 1 },
    ])
    const listed = await get<PaymentDto[]>('payments?status=refunded')
    expect(listed.map((p) => p.id)).toContain(c.paymentId)
  })

  it('two admins press at once, many times over: Telegram is asked once per payment', async () => {
    const candidates = seed.consultations
      .filter((c) => !c.refunded && c.id !== seed.refundable.id)
      .slice(0, 5)
    for (const c of candidates) {
      const answers = await Promise.all(
        [0, 1, 2].map(() =>
          call(`api/payments/${c.paymentId}/refund`, auth(ADMIN_ID), {
            method: 'POST',
            body: { confirmCharge: c.charge },
          }).then((r) => r.json() as RefundResultDto),
        ),
      )
      expect(answers.filter((a) => a.status === 'refunded')).toHaveLength(1)
      expect(answers.every((a) => ['refunded', 'already-refunded', 'in-progress'].includes(a.status))).toBe(
        true,
      )
      expect(w.tg.callsTo('refundStarPayment', { telegram_payment_charge_id: c.charge })).toHaveLength(1)
    }
  })
})

describe('buttons that open the dashboard', () => {
  const page = 'https://desk.example.com/dashboard/test/'

  it("at start, the menu button of each staff member's chat with the bot (not the default one)", () => {
    const calls = w.tg.callsTo('setChatMenuButton')
    expect(calls.map((c) => c.payload.chat_id).sort()).toEqual([ADMIN_ID, EXPERT_ID])
    for (const c of calls)
      expect(c.payload.menu_button).toEqual({ type: 'web_app', text: 'Панель', web_app: { url: page } })
  })

  it('/report in the staff group carries the Mini App direct link', async () => {
    const since = w.tg.mark()
    await w.tg.push(TEST_BOT_ID, w.tg.groupTopicMessage(STAFF_CHAT_ID, undefined, w.admin, '/report 7d'))
    const report = await w.tg.waitForSent(STAFF_CHAT_ID, /📊 Отчёт/, { since })
    expect(report.reply_markup).toEqual({
      inline_keyboard: [
        [{ text: '📈 Открыть панель', url: `https://t.me/bot${TEST_BOT_ID}?startapp=overview` }],
      ],
    })
  })

  it('/dashboard in a private chat: a Web App button and the menu button; clients are refused', async () => {
    const since = w.tg.mark()
    const before = w.tg.callsTo('setChatMenuButton').length
    await w.tg.push(TEST_BOT_ID, w.tg.command(w.expert, '/dashboard'))
    const answer = await w.tg.waitForSent(EXPERT_ID, /Панель команды/, { since })
    expect(answer.reply_markup).toEqual({
      inline_keyboard: [[{ text: '📈 Открыть панель', web_app: { url: page } }]],
    })
    expect(w.tg.callsTo('setChatMenuButton').length).toBe(before + 1)
    const client = seed.clients[1]!
    await w.tg.push(TEST_BOT_ID, w.tg.command(client, '/dashboard'))
    await w.tg.waitForSent(client.id, /for the desk's staff/, { since })
    expect(w.tg.callsTo('setChatMenuButton').length).toBe(before + 1)
  })
})

describe('a slow upload', () => {
  it('a POST body cut off by the client is one quiet line (info), never an error', async () => {
    const before = logged.length
    const { port } = new URL(base)
    const aborted = () =>
      logged.slice(before).find((l) => l.msg === 'dashboard request body aborted by the client')
    // The server must have the headers before the phone loses its network: tried again, waiting longer each time.
    for (let wait = 50; !aborted() && wait < 5000; wait *= 2) {
      const socket = net.connect(Number(port), '127.0.0.1')
      await new Promise<void>((r) => socket.once('connect', () => r()))
      socket.write(
        'POST /dashboard/test/api/export HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n' +
          `authorization: tma ${auth(ADMIN_ID)}\r\ncontent-length: 1000\r\n\r\n{"kind": "pay`,
      )
      await new Promise((r) => setTimeout(r, wait))
      socket.destroy()
      await eventually(async () => aborted() ?? null, 'the quiet line', wait * 4).catch(() => undefined)
    }
    const line = aborted()!
    expect(line).toBeDefined()
    expect(line.level).toBe(30)
    expect(logged.slice(before).filter((l) => l.level >= 50)).toEqual([])
  })
})
