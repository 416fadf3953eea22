import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { InviteDto, SettingsDto } from '../../src/dashboard/settings.model'
import { readDesk } from '../../src/settings/settings'
import { signInitData } from '../support/dashboard'
import { EXPERT_ID, startDeskWorld, type World } from '../support/fixtures'
import { ADMIN_ID, buy, preCheckout, TEST_BOT_ID } from './payments-support'
import { plan } from './subscriptions-support'

/**
 * The dashboard's settings pages through its JSON API (issue 24, part 5) on the real app and database: the owner
 * and admins edit the desk with the chat's own services (validated, version-checked, audited, seen by clients at
 * once); experts are refused; a stale page is told and shown the current value; bad input names the field.
 */

const TOKEN = `${TEST_BOT_ID}:${'T'.repeat(35)}`
const ADMIN2_ID = 900_003
let w: World
let base: string

beforeAll(async () => {
  w = await startDeskWorld({
    configure: (c) => {
      const d = c.desks[0]!
      d.staff.admins.push(ADMIN2_ID)
      d.staff.owner = ADMIN_ID
      d.plans = [plan({ code: 'basic', priceStars: 500, questions: 3 })]
    },
  })
  base = `http://127.0.0.1:${w.t.app.httpPort}`
})
afterAll(() => w?.stop())

const auth = (userId: number) => signInitData(TOKEN, { user: { id: userId, language_code: 'en' } })
const settings = async () => (await readDesk(w.deps.db, TEST_BOT_ID))!

async function call(path: string, who: number, body?: unknown) {
  const res = await fetch(`${base}/dashboard/test/api/${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      authorization: `tma ${auth(who)}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  })
  return { status: res.status, body: (await res.json()) as any }
}

const price = (s: SettingsDto, code: string) => s.tariffs.find((t) => t.code === code)!.priceStars

describe('settings pages: who', () => {
  it('an expert gets 403 for every settings call, reads included, and nothing changes', async () => {
    const v = (await settings()).version
    const calls: [string, unknown][] = [
      ['settings', undefined],
      [
        'settings/field',
        { version: v, target: { kind: 'tariff', code: 'quick', field: 'priceStars' }, value: '1' },
      ],
      ['settings/tariffs/quick/pause', { version: v, paused: true }],
      ['settings/tariffs/quick/delete', { version: v }],
      ['settings/zone', { version: v, zone: 'Europe/Samara' }],
      ['settings/invites', { role: 'expert', uses: 1 }],
      [`settings/staff/${ADMIN2_ID}`, { version: v, action: 'remove' }],
    ]
    for (const [path, body] of calls) {
      const r = await call(path, EXPERT_ID, body)
      expect(r.status, path).toBe(403)
      expect(r.body, path).toEqual({ error: 'admins-only' })
    }
    expect((await settings()).version).toBe(v)
  })

  it('an admin reads the settings; staff are named by role, the owner first', async () => {
    const r = await call('settings', ADMIN_ID)
    expect(r.status).toBe(200)
    const s = r.body as SettingsDto
    expect(s.version).toBe((await settings()).version)
    expect(s.owner).toBe(true)
    expect(s.tariffs.map((t) => t.code)).toContain('quick')
    expect(s.plans.map((p) => p.code)).toEqual(['basic'])
    expect(s.staff[0]).toMatchObject({ id: ADMIN_ID, role: 'owner' })
    expect(s.staff.find((x) => x.id === EXPERT_ID)?.role).toBe('expert')
    expect((await call('settings', ADMIN2_ID)).body.owner).toBe(false)
  })
})

describe('settings pages: writes', () => {
  it('a price changed in the page is what the next invoice shows; audited as the dashboard', async () => {
    const v = (await settings()).version
    const r = await call('settings/field', ADMIN_ID, {
      version: v,
      target: { kind: 'tariff', code: 'quick', field: 'priceStars' },
      value: '275',
    })
    expect(r.status).toBe(200)
    expect(r.body.status).toBe('done')
    expect(price(r.body.settings, 'quick')).toBe(275)
    expect(r.body.settings.version).toBe(v + 1)
    const client = w.tg.user({ first_name: 'Dora', language_code: 'en' })
    const inv = await buy(w, client, 'quick')
    expect(inv.amount).toBe(275)
    expect(await preCheckout(w, client, inv)).toMatchObject({ ok: true })
    const row = await w.deps.db
      .selectFrom('audit_log')
      .select(['actor_id', 'details'])
      .where('action', '=', 'settings.changed')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow()
    expect(row.actor_id).toBe(ADMIN_ID)
    expect(row.details).toMatchObject({ source: 'dashboard', from: v, to: v + 1 })
  })

  it('a stale page is refused (409) with the current value, and nothing is written', async () => {
    const stale = (await settings()).version
    await call('settings/field', ADMIN2_ID, {
      version: stale,
      target: { kind: 'tariff', code: 'quick', field: 'priceStars' },
      value: '280',
    })
    const now = (await settings()).version
    expect(now).toBe(stale + 1)
    const r = await call('settings/field', ADMIN_ID, {
      version: stale,
      target: { kind: 'tariff', code: 'quick', field: 'priceStars' },
      value: '290',
    })
    expect(r.status).toBe(409)
    expect(r.body).toMatchObject({ error: 'conflict', current: '280' })
    expect(r.body.settings.version).toBe(now)
    expect(price(r.body.settings, 'quick')).toBe(280)
    const p = await call('settings/tariffs/quick/pause', ADMIN_ID, { version: stale, paused: true })
    expect(p.status).toBe(409)
    const st = await call(`settings/staff/${EXPERT_ID}`, ADMIN_ID, { version: stale, action: 'admin' })
    expect(st.status).toBe(409)
    expect((await settings()).version).toBe(now)
    expect((await settings()).doc.tariffs.find((t) => t.code === 'quick')).toMatchObject({
      priceStars: 280,
      paused: false,
    })
  })

  it('bad input is refused naming the field, and nothing changes', async () => {
    const v = (await settings()).version
    const field = (target: unknown, value: string) =>
      call('settings/field', ADMIN_ID, { version: v, target, value })
    const cases: [unknown, string, string][] = [
      [{ kind: 'tariff', code: 'quick', field: 'priceStars' }, 'lots', 'priceStars'],
      [{ kind: 'tariff', code: 'quick', field: 'priceStars' }, '0', 'priceStars'],
      [{ kind: 'tariff', code: 'quick', field: 'priceStars' }, '100001', 'priceStars'],
      [{ kind: 'plan', code: 'basic', field: 'questions' }, '2.5', 'questions'],
      [{ kind: 'weekday', day: 'mon' }, '25:00-26:00', 'weekday'],
      [{ kind: 'holiday' }, '2026-13-40', 'holiday'],
      [{ kind: 'text', which: 'terms', lang: 'en' }, '   ', 'terms'],
    ]
    for (const [target, value, name] of cases) {
      const r = await field(target, value)
      expect(r.status, value).toBe(400)
      expect(r.body.error).toBe('invalid')
      expect(r.body.issues[0].field, value).toBe(name)
    }
    const t = await call('settings/tariffs', ADMIN_ID, {
      version: v,
      code: 'Deep!',
      title: 'Deep dive',
      priceStars: 0,
      windowHours: 48,
      appeals: 5,
      slaBusinessHours: 8,
      startMode: 'immediate',
    })
    expect(t.status).toBe(400)
    expect(t.body.issues.map((i: { field: string }) => i.field).sort()).toEqual(['code', 'priceStars'])
    const z = await call('settings/zone', ADMIN_ID, { version: v, zone: 'Mars/Olympus' })
    expect(z.body.issues[0].field).toBe('timezone')
    const i = await call('settings/invites', ADMIN_ID, { role: 'expert', uses: 0 })
    expect(i.body.issues[0].field).toBe('uses')
    expect((await settings()).version).toBe(v)
  })

  it('creates, pauses and deletes a tariff; pauses a plan; a client sees each change', async () => {
    let v = (await settings()).version
    const c = await call('settings/tariffs', ADMIN_ID, {
      version: v,
      code: 'deep',
      title: 'Deep dive',
      priceStars: 250,
      windowHours: 48,
      appeals: 5,
      slaBusinessHours: 8,
      startMode: 'immediate',
    })
    expect(c.status).toBe(200)
    expect(c.body.settings.tariffs.find((t: { code: string }) => t.code === 'deep')).toMatchObject({
      title: { en: 'Deep dive' },
      priceStars: 250,
      paused: false,
    })
    const client = w.tg.user({ first_name: 'Eve', language_code: 'en' })
    expect((await buy(w, client, 'deep')).amount).toBe(250)
    v = c.body.settings.version
    const again = await call('settings/tariffs', ADMIN_ID, {
      version: v,
      code: 'deep',
      title: 'Again',
      priceStars: 1,
      windowHours: 1,
      appeals: 1,
      slaBusinessHours: 1,
      startMode: 'immediate',
    })
    expect(again.status).toBe(400)
    expect(again.body.issues[0]).toMatchObject({ field: 'code', message: 'already used' })

    const p = await call('settings/tariffs/deep/pause', ADMIN_ID, { version: v, paused: true })
    expect(p.status).toBe(200)
    expect((await settings()).doc.tariffs.find((t) => t.code === 'deep')!.paused).toBe(true)
    v = p.body.settings.version
    const pp = await call('settings/plans/basic/pause', ADMIN_ID, { version: v, paused: true })
    expect(pp.status).toBe(200)
    expect((await settings()).doc.plans[0]!.paused).toBe(true)
    v = pp.body.settings.version
    const d = await call('settings/tariffs/deep/delete', ADMIN_ID, { version: v })
    expect(d.status).toBe(200)
    expect((await settings()).doc.tariffs.some((t) => t.code === 'deep')).toBe(false)
    const gone = await call('settings/tariffs/deep/delete', ADMIN_ID, { version: d.body.settings.version })
    expect(gone.status).toBe(404)
  })

  it("hours, zone, holidays, extra working days and texts, each through the chat's field reader", async () => {
    let v = (await settings()).version
    const step = async (path: string, body: Record<string, unknown>) => {
      const r = await call(path, ADMIN_ID, { version: v, ...body })
      expect(r.status, `${path} ${JSON.stringify(r.body)}`).toBe(200)
      v = r.body.settings.version
      return r.body.settings as SettingsDto
    }
    let s = await step('settings/field', { target: { kind: 'weekday', day: 'sat' }, value: '10:00-14:00' })
    expect(s.schedule.weekly.sat).toEqual(['10:00-14:00'])
    s = await step('settings/zone', { zone: 'Europe/Samara' })
    expect(s.schedule.timezone).toBe('Europe/Samara')
    s = await step('settings/field', { target: { kind: 'holiday' }, value: '2027-01-07' })
    expect(s.schedule.holidays).toContain('2027-01-07')
    s = await step('settings/field', { target: { kind: 'extra' }, value: '2027-01-09 10:00-15:00' })
    expect(s.schedule.extraWorkingDays['2027-01-09']).toEqual(['10:00-15:00'])
    s = await step('settings/holidays/remove', { date: '2027-01-07' })
    expect(s.schedule.holidays).not.toContain('2027-01-07')
    s = await step('settings/extra/remove', { date: '2027-01-09' })
    expect(s.schedule.extraWorkingDays['2027-01-09']).toBeUndefined()
    const before = (await settings()).doc.terms.version
    s = await step('settings/field', {
      target: { kind: 'text', which: 'terms', lang: 'en' },
      value: 'New terms.',
    })
    expect(s.texts.terms.en).toBe('New terms.')
    // A new text is a new terms version (orders keep the one they were sold with).
    expect(s.texts.termsVersion).not.toBe(before)
    s = await step('settings/field', {
      target: { kind: 'text', which: 'privacy', lang: 'ru' },
      value: 'Новый текст.',
    })
    expect(s.texts.privacy.ru).toBe('Новый текст.')
    expect(w.deps.desk(TEST_BOT_ID).schedule.timezone).toBe('Europe/Samara')
  })
})

describe('settings pages: staff', () => {
  it('the owner changes a role and removes; an admin who is not the owner is refused', async () => {
    const v = (await settings()).version
    const refused = await call(`settings/staff/${EXPERT_ID}`, ADMIN2_ID, { version: v, action: 'admin' })
    expect(refused.status).toBe(403)
    const up = await call(`settings/staff/${EXPERT_ID}`, ADMIN_ID, { version: v, action: 'admin' })
    expect(up.status).toBe(200)
    expect(up.body.settings.staff.find((x: { id: number }) => x.id === EXPERT_ID).role).toBe('admin')
    const owner = await call(`settings/staff/${ADMIN_ID}`, ADMIN_ID, {
      version: up.body.settings.version,
      action: 'remove',
    })
    expect(owner.status).toBe(400)
    expect(owner.body.issues[0].field).toBe('staff')
    const down = await call(`settings/staff/${EXPERT_ID}`, ADMIN_ID, {
      version: up.body.settings.version,
      action: 'expert',
    })
    expect(down.status).toBe(200)
    expect((await settings()).doc.staff.experts).toContain(EXPERT_ID)
    expect((await settings()).doc.staff.admins).not.toContain(EXPERT_ID)
  })

  it('an invite link from the page makes whoever opens it staff; an admin may not invite admins', async () => {
    expect((await call('settings/invites', ADMIN2_ID, { role: 'admin', uses: 1 })).status).toBe(403)
    const r = await call('settings/invites', ADMIN2_ID, { role: 'expert', uses: 1 })
    expect(r.status).toBe(200)
    const inv = r.body as InviteDto
    expect(inv).toMatchObject({ role: 'expert', uses: 1 })
    const code = /^https:\/\/t\.me\/\w+\?start=(\S+)$/.exec(inv.link)?.[1]
    expect(code).toBeTruthy()
    // As with /invite, the link also reaches the inviter's private chat.
    await w.tg.waitForSent(ADMIN2_ID, new RegExp(code!))
    const newcomer = w.tg.user({ first_name: 'Nina', language_code: 'en' })
    await w.tg.push(TEST_BOT_ID, w.tg.command(newcomer, '/start', code))
    await expect
      .poll(async () => (await settings()).doc.staff.experts.includes(newcomer.id), { timeout: 10_000 })
      .toBe(true)
  })
})
