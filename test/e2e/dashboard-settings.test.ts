import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { InviteDto, SettingsDto } from '../../src/dashboard/settings.model'
import { PLAN_FIELDS, RULE_FIELDS } from '../../src/settings/fields'
import { readDesk } from '../../src/settings/settings'
import { signInitData } from '../support/dashboard'
import { type DeskWorld, EXPERT_ID, eventually, startDeskWorld } from '../support/fixtures'
import { ADMIN_ID, buy, preCheckout, TEST_BOT_ID } from './payments-support'
import { EDITED_POLICIES } from './settings-support'
import { plan, subscribe, subscribeLink } from './subscriptions-support'

/**
 * The dashboard's settings pages through its JSON API (issue 24, part 5) on the real app and database: the owner
 * and admins edit the desk with the chat's own services (validated, version-checked, audited, seen by clients at
 * once); experts are refused; a stale page is told and shown the current value; bad input names the field. The
 * rest of the chat's settings too: plans created (then bought) and deleted (refused with current subscribers), a
 * tariff's capacity (enforced at the next pre-checkout), slots, policies and top-ups, a plan's answer time and
 * refund policy, anti-flood and days off.
 */

const TOKEN = `${TEST_BOT_ID}:${'T'.repeat(35)}`
const ADMIN2_ID = 900_003
let w: DeskWorld
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
      [
        'settings/plans',
        { version: v, code: 'x', title: 'X', priceStars: 100, questions: 1, slaBusinessHours: 4 },
      ],
      ['settings/plans/basic/delete', { version: v }],
      [
        'settings/field',
        { version: v, target: { kind: 'tariff', code: 'quick', field: 'dailyCapacity' }, value: '1' },
      ],
      [
        'settings/field',
        { version: v, target: { kind: 'plan', code: 'basic', field: 'refundPolicy' }, value: 'revoke_now' },
      ],
      ['settings/field', { version: v, target: { kind: 'antiFlood' }, value: '5' }],
      ['settings/field', { version: v, target: { kind: 'daysOff', userId: EXPERT_ID }, value: 'sat' }],
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

/** A field typed in the page, with the settings version it was drawn from (the current one unless given). */
async function setField(target: unknown, value: string, who = ADMIN_ID, version?: number) {
  return call('settings/field', who, { version: version ?? (await settings()).version, target, value })
}

/** The last settings.changed audit row. */
const lastAudit = () =>
  w.deps.db
    .selectFrom('audit_log')
    .select(['actor_id', 'details'])
    .where('action', '=', 'settings.changed')
    .orderBy('id', 'desc')
    .executeTakeFirstOrThrow()

describe("settings pages: the rest of the chat's settings", () => {
  it('a plan created in the page is sold at once (its link at its price); bad fields named; a stale page 409', async () => {
    const v = (await settings()).version
    const body = {
      version: v,
      code: 'gold',
      title: 'Gold',
      priceStars: 700,
      questions: 4,
      slaBusinessHours: 6,
    }
    const bad = await call('settings/plans', ADMIN_ID, {
      ...body,
      code: 'Gold!',
      priceStars: 20000,
      questions: 0,
    })
    expect(bad.status).toBe(400)
    expect(bad.body.issues.map((i: { field: string }) => i.field).sort()).toEqual([
      'code',
      'priceStars',
      'questions',
    ])
    expect((await settings()).version).toBe(v)

    const r = await call('settings/plans', ADMIN_ID, body)
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    expect(r.body.settings.plans.find((p: { code: string }) => p.code === 'gold')).toMatchObject({
      title: { en: 'Gold' },
      priceStars: 700,
      questions: 4,
      paused: false,
      fields: { slaBusinessHours: '6', refundPolicy: 'keep_used' },
    })
    expect((await lastAudit()).details).toMatchObject({ source: 'dashboard', from: v, to: v + 1 })
    const gold = (await settings()).doc.plans.find((p) => p.code === 'gold')!
    const client = w.tg.user({ first_name: 'Gil', language_code: 'en' })
    const link = await subscribeLink(w, client, gold)
    expect(link).toMatchObject({ amount: 700, currency: 'XTR', subscription_period: 2592000 })

    // The same code again, now taken: refused naming it; sent from the page drawn before the plan existed: 409.
    const again = await call('settings/plans', ADMIN_ID, { ...body, version: v + 1, title: 'Again' })
    expect(again.status).toBe(400)
    expect(again.body.issues[0]).toMatchObject({ field: 'code', message: 'already used' })
    const stale = await call('settings/plans', ADMIN_ID, { ...body, title: 'Again' })
    expect(stale.status).toBe(409)
    expect(stale.body.settings.version).toBe(v + 1)
    const staleNew = await call('settings/plans', ADMIN_ID, { ...body, code: 'bronze' })
    expect(staleNew.status).toBe(409)
    expect((await settings()).version).toBe(v + 1)
  })

  it('a plan with a current subscriber is not deleted (409, their number); one without is; a stale page 409', async () => {
    const client = w.tg.user({ first_name: 'Hal', language_code: 'en' })
    await subscribe(w, client, (await settings()).doc.plans.find((p) => p.code === 'gold')!)
    let v = (await settings()).version
    const live = await call('settings/plans/gold/delete', ADMIN_ID, { version: v })
    expect(live.status).toBe(409)
    expect(live.body).toMatchObject({ error: 'refused', reason: 'live-subscribers', count: 1 })
    expect(live.body.settings.version).toBe(v)
    expect((await settings()).doc.plans.some((p) => p.code === 'gold')).toBe(true)

    const c = await call('settings/plans', ADMIN_ID, {
      version: v,
      code: 'silver',
      title: 'Silver',
      priceStars: 300,
      questions: 2,
      slaBusinessHours: 8,
    })
    expect(c.status).toBe(200)
    expect((await call('settings/plans/silver/delete', ADMIN_ID, { version: v })).status).toBe(409)
    v = c.body.settings.version
    const d = await call('settings/plans/silver/delete', ADMIN_ID, { version: v })
    expect(d.status).toBe(200)
    expect(d.body.settings.plans.map((p: { code: string }) => p.code)).not.toContain('silver')
    expect((await settings()).doc.plans.some((p) => p.code === 'silver')).toBe(false)
    expect(await lastAudit()).toMatchObject({
      actor_id: ADMIN_ID,
      details: { source: 'dashboard', from: v, to: v + 1 },
    })
    const gone = await call('settings/plans/silver/delete', ADMIN_ID, { version: v + 1 })
    expect(gone.status).toBe(404)
  })

  it("a tariff's capacity changed in the page is what the next pre-checkout enforces; bad values named", async () => {
    const v = (await settings()).version
    const c = await call('settings/tariffs', ADMIN_ID, {
      version: v,
      code: 'solo',
      title: 'Solo',
      priceStars: 150,
      windowHours: 24,
      appeals: 2,
      slaBusinessHours: 4,
      startMode: 'immediate',
    })
    expect(c.status).toBe(200)
    const cap = { kind: 'tariff', code: 'solo', field: 'dailyCapacity' }
    for (const bad of ['0', '1.5', 'one']) {
      const r = await setField(cap, bad)
      expect(r.status, bad).toBe(400)
      expect(r.body.issues[0].field, bad).toBe('dailyCapacity')
    }
    const one = await setField(cap, '1')
    expect(one.status).toBe(200)
    expect(
      one.body.settings.tariffs.find((t: { code: string }) => t.code === 'solo').fields.dailyCapacity,
    ).toBe('1')
    const [a, b] = [w.tg.user({ language_code: 'en' }), w.tg.user({ language_code: 'en' })]
    const ia = await buy(w, a, 'solo')
    const ib = await buy(w, b, 'solo')
    expect((await preCheckout(w, a, ia)).ok).toBe(true)
    expect((await preCheckout(w, b, ib)).error_message).toMatch(/All places for this start are taken/)
    expect((await setField(cap, '2')).status).toBe(200)
    // Raised while the day's places are open: topped up at the next hold.
    const again = await preCheckout(w, b, ib)
    expect(again.error_message).toBeUndefined()
    expect(again.ok).toBe(true)

    // A stale page: 409 with the value now.
    const stale = await setField(cap, '5', ADMIN_ID, v)
    expect(stale.status).toBe(409)
    expect(stale.body).toMatchObject({ error: 'conflict', current: '2' })
  })

  it("a tariff's start times, clients per start, policies and top-ups; a plan's answer time and refund policy", async () => {
    const t = (field: string) => ({ kind: 'tariff', code: 'solo', field })
    const p = (field: string) => ({ kind: 'plan', code: 'gold', field })
    const refused: [unknown, string, string][] = [
      [t('slots'), 'tomorrow', 'slots'],
      [t('slotCapacity'), '0', 'slotCapacity'],
      [t('breachPolicy'), 'extend', 'breachPolicy'],
      [t('refundPolicy'), 'maybe', 'refundPolicy'],
      [t('topUps'), '2 bananas 5', 'topUps'],
      [t('slaBusinessHours'), '0', 'slaBusinessHours'],
      [p('slaBusinessHours'), 'soon', 'slaBusinessHours'],
      [p('refundPolicy'), 'deliver', 'refundPolicy'],
    ]
    const v = (await settings()).version
    for (const [target, value, field] of refused) {
      const r = await setField(target, value)
      expect(r.status, value).toBe(400)
      expect(r.body.issues[0].field, value).toBe(field)
    }
    expect((await settings()).version).toBe(v)

    const saved: [unknown, string][] = [
      [t('slotCapacity'), '3'],
      [t('breachPolicy'), 'extend 2'],
      [t('refundPolicy'), 'stop'],
      [t('topUps'), '2 questions 100, 1 hour 60'],
      [t('slaBusinessHours'), '2.5'],
      [p('slaBusinessHours'), '3'],
      [p('refundPolicy'), 'revoke_now'],
    ]
    let s: SettingsDto | undefined
    for (const [target, value] of saved) {
      const r = await setField(target, value)
      expect(r.status, `${value}: ${JSON.stringify(r.body)}`).toBe(200)
      s = r.body.settings
    }
    expect(s!.tariffs.find((x) => x.code === 'solo')!.fields).toMatchObject({
      breachPolicy: 'extend 2',
      topUps: '2 questions 100, 1 hour 60',
    })
    expect((await settings()).doc.tariffs.find((x) => x.code === 'solo')).toMatchObject({
      slotCapacity: 3,
      slaBusinessHours: 2.5,
      ...EDITED_POLICIES,
    })
    expect((await settings()).doc.plans.find((x) => x.code === 'gold')).toMatchObject({
      slaBusinessHours: 3,
      refundPolicy: 'revoke_now',
    })
    // Every process's desk follows (this one at once, the others on the notification).
    expect(w.deps.desk(TEST_BOT_ID).tariffs.find((x) => x.code === 'solo')!.refundPolicy).toBe('stop')
    expect((await lastAudit()).details).toMatchObject({ source: 'dashboard' })
  })

  it('anti-flood and days off: bad values named, a stale page 409, good ones taken by the desk', async () => {
    const v = (await settings()).version
    const af = await setField({ kind: 'antiFlood' }, '2000')
    expect(af.status).toBe(400)
    expect(af.body.issues[0].field).toBe('antiFlood')
    const off = await setField({ kind: 'daysOff', userId: EXPERT_ID }, 'funday')
    expect(off.status).toBe(400)
    expect(off.body.issues[0].field).toBe('daysOff')
    expect((await settings()).version).toBe(v)

    const a = await setField({ kind: 'antiFlood' }, '5')
    expect(a.status).toBe(200)
    expect(a.body.settings.antiFlood).toBe('5')
    const d = await setField({ kind: 'daysOff', userId: EXPERT_ID }, 'sat, 2027-01-07')
    expect(d.status).toBe(200)
    expect(d.body.settings.staff.find((x: { id: number }) => x.id === EXPERT_ID).daysOff).toBe(
      'sat, 2027-01-07',
    )
    expect((await settings()).doc.antiFlood).toEqual({ perMinute: 5 })
    expect((await settings()).doc.expertSettings.daysOff[String(EXPERT_ID)]).toEqual(['sat', '2027-01-07'])
    await eventually(async () => w.deps.desk(TEST_BOT_ID).antiFlood?.perMinute === 5, 'the desk to take it')

    const stale = await setField({ kind: 'antiFlood' }, '7', ADMIN_ID, v)
    expect(stale.status).toBe(409)
    expect(stale.body).toMatchObject({ error: 'conflict', current: '5' })
    const staleOff = await setField({ kind: 'daysOff', userId: EXPERT_ID }, 'sun', ADMIN_ID, v)
    expect(staleOff.status).toBe(409)
    expect(staleOff.body.current).toBe('sat, 2027-01-07')
    // Someone who is not staff has no days off to set.
    expect((await setField({ kind: 'daysOff', userId: 123_456 }, 'sat')).status).toBe(404)
    expect((await settings()).doc.antiFlood).toEqual({ perMinute: 5 })
  })

  it("the desk rules and a plan's carry-over: read as the chat shows them, bad values named, good ones taken", async () => {
    const read = (await call('settings', ADMIN_ID)).body as SettingsDto
    expect(read.rules.disputeAnswerHours).toBe('8')
    expect(read.rules.languages).toMatch(/en/)
    // In the chat's order, which the page shows them in (it keeps no list of its own).
    expect(Object.keys(read.rules)).toEqual([...RULE_FIELDS])
    expect(Object.keys(read.plans[0]!.fields)).toEqual([...PLAN_FIELDS])
    const v = (await settings()).version
    const bad = await setField({ kind: 'rule', field: 'disputeAnswerHours' }, '100')
    expect(bad.status).toBe(400)
    expect(bad.body.issues[0].field).toBe('disputeAnswerHours')
    const zone = await setField({ kind: 'rule', field: 'zones' }, 'Mars/Olympus')
    expect(zone.status).toBe(400)
    expect(zone.body.issues[0].field).toBe('zones')
    expect((await settings()).version).toBe(v)
    const ok = await setField({ kind: 'rule', field: 'disputeAnswerHours' }, '3')
    expect(ok.status).toBe(200)
    expect(ok.body.settings.rules.disputeAnswerHours).toBe('3')
    expect((await settings()).doc.rules.disputeAnswerHours).toBe(3)
    await eventually(
      async () => w.deps.desk(TEST_BOT_ID).rules.disputeAnswerHours === 3,
      'the desk to take the rule',
    )
    const carry = await setField({ kind: 'plan', code: 'basic', field: 'carryOver' }, '2')
    expect(carry.status).toBe(200)
    expect(carry.body.settings.plans[0].fields.carryOver).toBe('2')
    expect(
      await call('settings/field', EXPERT_ID, {
        version: (await settings()).version,
        target: { kind: 'rule', field: 'lowRating' },
        value: '1',
      }),
    ).toMatchObject({ status: 403 })
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
