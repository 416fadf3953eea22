import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { type Browser, type BrowserContext, chromium, type Locator, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { editDesk } from '../../src/settings/edit'
import { PLAN_FIELDS, RULE_FIELDS } from '../../src/settings/fields'
import { readDesk } from '../../src/settings/settings'
import { setOwnName } from '../../src/setup/staff-admin'
import { buildDashboardWeb } from '../../web/build'
import { launchHash, signInitData, tamper } from '../support/dashboard'
import { type DashboardSeed, seedDashboard } from '../support/dashboard-seed'
import { ADMIN_ID, type DeskWorld, EXPERT_ID, startDeskWorld, TEST_BOT_ID } from '../support/fixtures'
import { buy } from './payments-support'
import { subscribeLink } from './subscriptions-support'

/**
 * The dashboard in a real browser: Debian's Chromium (headless, driven by playwright-core), a phone-sized screen,
 * the page built by esbuild and served by the app, opened the way Telegram opens a Mini App (launch parameters in
 * the URL's hash, initData signed with the desk's bot token) over a seeded month of desk history. One browser for
 * the file. Screenshots of each page go to test-artifacts/dashboard/ (not committed).
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const TOKEN = `${TEST_BOT_ID}:${'T'.repeat(35)}`
const ARTIFACTS = path.resolve('test-artifacts/dashboard')
/** Telegram's night theme, so the page visibly takes its colours from themeParams. */
const THEME = {
  bg_color: '#17212b',
  secondary_bg_color: '#0e1621',
  section_bg_color: '#17212b',
  text_color: '#f5f5f5',
  hint_color: '#708499',
  link_color: '#6ab3f3',
  button_color: '#5288c1',
  button_text_color: '#ffffff',
  destructive_text_color: '#ec3942',
}

let w: DeskWorld
let seed: DashboardSeed
let webDir: string
let browser: Browser
let context: BrowserContext
let base: string

const initData = (userId: number, lang = 'en') =>
  signInitData(TOKEN, { user: { id: userId, first_name: 'Ada', language_code: lang } })

async function open(data: string, theme: Record<string, string> = THEME): Promise<Page> {
  const page = await context.newPage()
  await page.goto(`${base}/dashboard/test/${launchHash(data, theme)}`)
  return page
}

const shot = (page: Page, name: string) =>
  page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true })

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} not found: apt-get install -y chromium (or set CHROMIUM_PATH)`)
  webDir = await mkdtemp(path.join(tmpdir(), 'cd-web-'))
  await Promise.all([buildDashboardWeb(webDir), mkdir(ARTIFACTS, { recursive: true })])
  w = await startDeskWorld({
    configure: (c) => {
      c.dashboard.webDir = webDir
    },
  })
  seed = await seedDashboard(w.deps.db, w.t.desk, {
    admin: ADMIN_ID,
    expert: EXPERT_ID,
    user: (init) => w.tg.user(init),
  })
  // Staff are named (the page names them, never "expert 900002").
  await setOwnName(w.deps.db, TEST_BOT_ID, EXPERT_ID, 'Эдуард Морозов')
  await setOwnName(w.deps.db, TEST_BOT_ID, ADMIN_ID, 'Ada Lovelace')
  base = `http://127.0.0.1:${w.t.app.httpPort}`
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
  context = await browser.newContext({
    viewport: { width: 390, height: 844 },
    deviceScaleFactor: 1,
    isMobile: true,
    hasTouch: true,
    locale: 'en-US',
    acceptDownloads: true,
  })
})

afterAll(async () => {
  await browser?.close()
  await w?.stop()
  if (webDir) await rm(webDir, { recursive: true, force: true })
})

describe('the dashboard in Chromium', () => {
  it('overview: every chart is drawn with its data points, in the Telegram theme', async () => {
    const page = await open(initData(ADMIN_ID))
    await page.locator('[data-page="overview"] canvas[data-chart="revenue"][data-points]').waitFor()
    await page.locator('button[data-days="30"].on').waitFor()
    // Runs in the page (the test's TypeScript has no DOM types).
    const charts = await page.$$eval('canvas[data-chart]', (cs) =>
      cs.map((canvas: any) => {
        const px = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data
        let painted = 0
        for (let i = 3; i < px.length; i += 4) if (px[i]! > 0) painted++
        return { name: canvas.dataset.chart, points: Number(canvas.dataset.points), painted }
      }),
    )
    expect(charts.map((c) => c.name).sort()).toEqual([
      'drafts',
      'experts',
      'refusals',
      'revenue',
      'sla',
      'states',
    ])
    for (const c of charts) {
      expect(c.points, c.name).toBeGreaterThan(0)
      expect(c.painted, c.name).toBeGreaterThan(500)
    }
    // Count axes tick in whole numbers; the revenue axis, which refunds take below 0, has a tick at 0.
    const ticks = await page.$$eval('canvas[data-chart]', (cs) =>
      Object.fromEntries(
        cs.map((c: any) => [c.dataset.chart, JSON.parse(c.dataset.ticks) as Record<string, number[]>]),
      ),
    )
    for (const [chart, axis] of [
      ['states', 'x'],
      ['refusals', 'x'],
      ['sla', 'y'],
      ['drafts', 'y'],
      ['revenue', 'y'],
    ] as const) {
      expect(ticks[chart]![axis]!.length, chart).toBeGreaterThan(1)
      expect(ticks[chart]![axis]!.every(Number.isInteger), `${chart}: ${ticks[chart]![axis]}`).toBe(true)
    }
    expect(Math.min(...ticks.revenue!.y!)).toBeLessThan(0)
    expect(ticks.revenue!.y).toContain(0)
    // 30 days x (paid, refunded, net).
    expect(charts.find((c) => c.name === 'revenue')!.points).toBe(90)
    const paid = seed.consultations.reduce((a, c) => a + c.price, 0)
    await expect
      .poll(() => page.locator('[data-kpi="paid"] .kpi-value').textContent())
      .toBe(`${paid.toLocaleString('en-GB')} ⭐`)
    expect(await page.locator('[data-empty="ratings"]').textContent()).toBe(
      'No ratings in this period: clients are asked to rate each consultation when it ends.',
    )
    // Each median is written out (one of answers given outside hours is 0, with no bar to read), by name.
    expect(
      await page.locator(`[data-section="experts"] li[data-expert="${EXPERT_ID}"]`).textContent(),
    ).toMatch(/^Эдуард Морозов: median (\d+ h )?\d+ min, answers: \d+$/)
    expect(await page.locator('[data-section="experts"] canvas').getAttribute('aria-label')).toBe(
      'Median first response, business minutes',
    )
    expect(await page.locator('[data-section="refusals"] canvas').getAttribute('aria-label')).toBe(
      'Refusals by reason',
    )
    const colors = await page.evaluate(() => {
      const g = globalThis as any
      return {
        body: g.getComputedStyle(g.document.body).backgroundColor,
        tab: g.getComputedStyle(g.document.querySelector('[data-tab="overview"]')).backgroundColor,
      }
    })
    expect(colors).toEqual({ body: 'rgb(14, 22, 33)', tab: 'rgb(82, 136, 193)' })
    await shot(page, 'overview')

    await page.click('button[data-days="7"]')
    await page.locator('canvas[data-chart="revenue"][data-points="21"]').waitFor()
    await page.close()
  })

  it('consultations: search finds a consultation by a word of its transcript; its page shows it', async () => {
    const page = await open(initData(ADMIN_ID))
    await page.click('[data-tab="consultations"]')
    await page.locator('[data-page="consultations"] li[data-consultation]').first().waitFor()
    await shot(page, 'consultations')
    await page.fill('input[name="q"]', seed.searchable.query)
    await page.click('form.filters button[type="submit"]')
    const only = page.locator(`li[data-consultation="${seed.searchable.consultationId}"]`)
    await only.locator('mark').waitFor()
    await expect.poll(() => page.locator('li[data-consultation]').count()).toBe(1)
    expect(await only.locator('mark').first().textContent()).toBe('Репликация')
    await shot(page, 'search')

    await only.locator('button').click()
    await page.locator('[data-page="consultation"] [data-section="transcript"] pre').waitFor()
    expect(await page.locator('[data-section="transcript"] pre').textContent()).toContain(
      'Репликация базы данных PostgreSQL',
    )
    const answers = await page.locator('[data-section="timeline"] li[data-event="answer"]').allTextContents()
    expect(answers).toHaveLength(2)
    expect(answers[0]).toMatch(/Question 1 answered by Эдуард Морозов, in time$/)
    expect(await page.locator('[data-sla]').textContent()).toBe('SLA: an answer within 4 business hours')
    const route = await w.deps.db
      .selectFrom('desk_route')
      .select(['support_chat_id', 'message_thread_id'])
      .where('consultation_id', '=', seed.searchable.consultationId)
      .executeTakeFirstOrThrow()
    expect(await page.locator('a[data-topic-link]').getAttribute('href')).toBe(
      `https://t.me/c/${String(route.support_chat_id).slice(4)}/${route.message_thread_id}`,
    )
    const transcript = (await page.locator('[data-section="transcript"] pre').textContent()) ?? ''
    expect(transcript).toMatch(/\] Client: Репликация базы данных/)
    expect(transcript).toMatch(/\] Эдуард Морозов: /)
    expect(transcript).not.toMatch(/\] You:/)
    expect(transcript.trimEnd().split('\n').pop()).toMatch(/^End of transcript\. The consultation ended \d/)
    const payment = seed.consultations.find((c) => c.id === seed.searchable.consultationId)!.paymentId
    expect(await page.locator(`li[data-payment="${payment}"] .item-head b`).textContent()).toBe(
      `Payment #${payment}`,
    )
    await shot(page, 'consultation')
    await page.close()
  })

  it("an active consultation's transcript ends saying it is still active, and until when", async () => {
    const active = seed.consultations.find((c) => c.state === 'active')!
    // The seeded windows are days old (the app's lifecycle closes them as it runs): this one runs until tomorrow.
    const until = new Date(Date.now() + 24 * 3600_000)
    await w.deps.db
      .updateTable('consultation')
      .set({ state: 'active', access_until: until, closed_at: null })
      .where('id', '=', active.id)
      .execute()
    const page = await open(initData(ADMIN_ID))
    await page.click('[data-tab="consultations"]')
    await page.locator(`li[data-consultation="${active.id}"] button`).click()
    const pre = page.locator('[data-page="consultation"] [data-section="transcript"] pre')
    await pre.waitFor()
    const last = ((await pre.textContent()) ?? '').trimEnd().split('\n').pop()
    expect(await page.locator('[data-section="card"] .badge').textContent()).toBe('active')
    expect(last).toMatch(
      /^The consultation is still active: its window ends \d{1,2} \w{3} \d{4}, \d{2}:\d{2}/,
    )
    await shot(page, 'consultation-active')
    await page.close()
  })

  it('payments: the CSV downloads with the expected rows', async () => {
    const page = await open(initData(ADMIN_ID))
    await page.click('[data-tab="payments"]')
    await page.locator('[data-page="payments"] li[data-payment]').first().waitFor()
    await page.selectOption('select[name="export-days"]', '30')
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.click('button[data-export="payments"]'),
    ])
    expect(download.suggestedFilename()).toMatch(/^test-payments-.*\.csv$/)
    const csv = (await readFile((await download.path())!, 'utf8')).replace(/^\uFEFF/, '')
    const lines = csv.trimEnd().split('\r\n')
    expect(lines[0]!.startsWith('payment_id,paid_at,user_id,first_name')).toBe(true)
    expect(lines).toHaveLength(1 + seed.consultations.length)
    expect(
      lines
        .slice(1)
        .map((l) => Number(l.split(',')[0]))
        .sort((a, b) => a - b),
    ).toEqual(seed.consultations.map((c) => c.paymentId).sort((a, b) => a - b))
    expect(csv).toContain('Смирнова')
    await shot(page, 'payments')
    await page.close()
  })

  it('a refund goes through after the confirmation and shows in the list', async () => {
    const target = seed.refundable
    const page = await open(initData(ADMIN_ID))
    await page.click('[data-tab="payments"]')
    const row = page.locator(`li[data-payment="${target.paymentId}"]`)
    await row.waitFor()
    expect(await row.getAttribute('data-refunded')).toBe('no')
    await row.locator('button[data-action="refund"]').click()
    const confirm = row.locator(`[data-confirm="${target.paymentId}"]`)
    await confirm.waitFor()
    expect(await confirm.textContent()).toContain(`Refund payment #${target.paymentId}: ${target.price} ⭐`)
    await shot(page, 'refund-confirm')
    // Nothing happens until it is confirmed.
    expect(w.tg.callsTo('refundStarPayment')).toHaveLength(0)
    await row.locator('button[data-action="refund-yes"]').click()
    await row.locator('[data-refund-message]').waitFor()
    expect(await row.locator('[data-refund-message]').textContent()).toBe(
      `Refunded: payment #${target.paymentId}.`,
    )
    await page
      .locator(`li[data-payment="${target.paymentId}"][data-refunded="yes"] [data-status="refunded"]`)
      .waitFor()
    expect(w.tg.callsTo('refundStarPayment', { telegram_payment_charge_id: target.charge })).toHaveLength(1)
    await page.click('.segmented button:nth-child(3)')
    await page.locator(`li[data-payment="${target.paymentId}"]`).waitFor()
    await shot(page, 'refunded')
    await page.close()
  })

  it('settings: an admin changes a price in the page and the next invoice is at that price', async () => {
    const page = await open(initData(ADMIN_ID))
    await page.click('[data-tab="settings"]')
    const price = page.locator('form[data-field="tariff:quick:priceStars"]')
    await price.waitFor()
    // Bad input first: refused naming the field, nothing written.
    const v = (await readDesk(w.deps.db, TEST_BOT_ID))!.version
    await price.locator('input').fill('lots')
    await price.locator('button[type="submit"]').click()
    await page.locator('[data-settings-notice="invalid"]').waitFor()
    expect(await page.locator('[data-settings-notice]').textContent()).toBe(
      'Price, ⭐ was not accepted: expected a whole number.',
    )
    expect((await readDesk(w.deps.db, TEST_BOT_ID))!.version).toBe(v)
    await price.locator('input').fill('333')
    await price.locator('button[type="submit"]').click()
    await page.locator('[data-settings-notice="done"]').waitFor()
    expect(
      (await readDesk(w.deps.db, TEST_BOT_ID))!.doc.tariffs.find((t) => t.code === 'quick')!.priceStars,
    ).toBe(333)
    const client = w.tg.user({ first_name: 'Nora', language_code: 'en' })
    expect((await buy(w, client, 'quick')).amount).toBe(333)
    await shot(page, 'settings')
    await page.close()
  })

  it('settings: a stale page is told the value now, and shows the current settings', async () => {
    const page = await open(initData(ADMIN_ID))
    await page.click('[data-tab="settings"]')
    const price = page.locator('form[data-field="tariff:quick:priceStars"]')
    await price.waitFor()
    const v = Number(await page.locator('[data-page="settings"]').getAttribute('data-version'))
    // Another admin saves first (the chat's own service).
    const other = await editDesk(w.deps.db, TEST_BOT_ID, ADMIN_ID, v, (doc) => {
      doc.tariffs.find((t) => t.code === 'quick')!.priceStars = 444
    })
    expect(other.status).toBe('done')
    await price.locator('input').fill('555')
    await price.locator('button[type="submit"]').click()
    await page.locator('[data-settings-notice="conflict"]').waitFor()
    expect(await page.locator('[data-settings-notice]').textContent()).toContain('The value now: 444.')
    await expect.poll(() => price.locator('input').inputValue()).toBe('444')
    expect(
      (await readDesk(w.deps.db, TEST_BOT_ID))!.doc.tariffs.find((t) => t.code === 'quick')!.priceStars,
    ).toBe(444)
    await shot(page, 'settings-conflict')
    await page.close()
  })

  it('settings: an admin creates a support plan in the page, sees it listed, a client can buy it; paused from the page', async () => {
    const page = await open(initData(ADMIN_ID))
    await page.click('[data-tab="settings"]')
    const plans = page.locator('section[data-section="plans"]')
    await plans.locator('button[data-action="new-plan"]').click()
    const form = plans.locator('form[data-form="new-plan"]')
    const fill = async (values: Record<string, string>) => {
      for (const [name, value] of Object.entries(values))
        await form.locator(`input[name="${name}"]`).fill(value)
    }
    // A price over Telegram's limit for subscriptions: refused naming the field, nothing written.
    const v = (await readDesk(w.deps.db, TEST_BOT_ID))!.version
    await fill({ code: 'gold', title: 'Gold', priceStars: '20000', questions: '4', slaBusinessHours: '6' })
    await form.locator('button[type="submit"]').click()
    await page.locator('[data-settings-notice="invalid"]').waitFor()
    expect(await page.locator('[data-settings-notice]').textContent()).toMatch(
      /^Price, ⭐ was not accepted: /,
    )
    expect((await readDesk(w.deps.db, TEST_BOT_ID))!.version).toBe(v)
    await fill({ priceStars: '700' })
    await form.locator('button[type="submit"]').click()
    await page.locator('[data-settings-notice="done"]').waitFor()
    const item = plans.locator('[data-plan="gold"]')
    await item.waitFor()
    expect(await item.locator('b').textContent()).toBe('Gold')
    expect(await item.locator('form[data-field="plan:gold:priceStars"] input').inputValue()).toBe('700')
    expect(await item.locator('form[data-field="plan:gold:refundPolicy"] input').inputValue()).toBe(
      'keep_used',
    )
    const gold = (await readDesk(w.deps.db, TEST_BOT_ID))!.doc.plans.find((p) => p.code === 'gold')!
    const client = w.tg.user({ first_name: 'Olga', language_code: 'en' })
    expect((await subscribeLink(w, client, gold)).amount).toBe(700)
    await shot(page, 'settings-plan')
    // The plan's fields and the desk's rules in the chat's order (the page draws them from the settings it is sent).
    const names = (where: Locator) =>
      where.locator('form[data-field]').evaluateAll((fs) => fs.map((f) => f.getAttribute('data-field')))
    expect(await names(item)).toEqual(PLAN_FIELDS.map((f) => `plan:gold:${f}`))
    expect(await names(page.locator('section[data-section="rules"]'))).toEqual(
      RULE_FIELDS.map((f) => `rule:${f}`),
    )
    // Paused from the page: the badge says so, and the plan is off sale.
    await item.locator('button[data-action="pause"]').click()
    await expect.poll(() => plans.locator('[data-plan="gold"] .badge').textContent()).toBe('paused')
    expect((await readDesk(w.deps.db, TEST_BOT_ID))!.doc.plans.find((p) => p.code === 'gold')!.paused).toBe(
      true,
    )
    await page.close()
  })

  it('forged launch data: "not authorised", and the API answered nothing but the status', async () => {
    const forged = tamper(initData(EXPERT_ID), 'user', JSON.stringify({ id: ADMIN_ID, language_code: 'en' }))
    const page = await context.newPage()
    const answers: { url: string; status: number; body: string }[] = []
    page.on('response', async (r) => {
      if (r.url().includes('/api/')) answers.push({ url: r.url(), status: r.status(), body: await r.text() })
    })
    await page.goto(`${base}/dashboard/test/${launchHash(forged, THEME)}`)
    await page.locator('[data-denied="401"]').waitFor()
    expect(await page.locator('h1').textContent()).toBe('Not authorised')
    await expect.poll(() => answers.length).toBeGreaterThan(0)
    expect(answers.every((a) => a.status === 401 && a.body === '{"error":"unauthorized"}')).toBe(true)
    const text = (await page.locator('body').textContent()) ?? ''
    expect(text).not.toMatch(/⭐|Анна|anna_s|#\d/)
    await shot(page, 'not-authorised')
    await page.close()
  })

  it('in Russian for a Russian-speaking expert, who sees their own figures only', async () => {
    const page = await open(initData(EXPERT_ID, 'ru'))
    await page.locator('canvas[data-chart="sla"][data-points]').waitFor()
    expect(await page.locator('[data-tab="overview"]').textContent()).toBe('Обзор')
    expect(await page.locator('[data-tab="payments"]').count()).toBe(0)
    expect(await page.locator('[data-tab="settings"]').count()).toBe(0)
    expect(await page.locator('canvas[data-chart="revenue"]').count()).toBe(0)
    await shot(page, 'expert-ru')
    await page.close()
  })

  it('the page is served without login and carries no data', async () => {
    const r = await fetch(`${base}/dashboard/test/`)
    expect(r.status).toBe(200)
    expect(r.headers.get('content-security-policy')).toContain("default-src 'self'")
    expect(await r.text()).not.toMatch(/Анна|anna_s|seed-charge/)
    expect((await fetch(`${base}/dashboard/test`, { redirect: 'manual' })).headers.get('location')).toBe(
      'test/',
    )
  })
})
