import { describe, expect, it } from 'vitest'
import type { LoadedConfig } from '../../src/config/load'
import { authorize } from '../../src/dashboard/access'
import { checkInitData } from '../../src/dashboard/init-data'
import { signInitData, tamper } from '../support/dashboard'

/**
 * Who may open a desk's dashboard: launch data signed with that desk's bot token, fresh, from a member of that
 * desk's staff. Two desks with their own bots and staff; the clock is fixed.
 */

const TOKEN_A = `7000001:${'A'.repeat(35)}`
const TOKEN_B = `7000002:${'B'.repeat(35)}`
const ADMIN_A = 900001
const EXPERT_A = 900002
const ADMIN_B = 910001
const CLIENT = 555001
const NOW = new Date('2026-12-01T12:00:00Z')
const nowSec = NOW.getTime() / 1000

const desk = (slug: string, token: string, admins: number[], experts: number[]) =>
  ({
    slug,
    token,
    botId: Number(token.split(':')[0]),
    defaultLanguage: 'ru',
    rules: { languages: ['ru', 'en'] },
    staff: { admins, experts },
  }) as unknown as LoadedConfig['desks'][number]

const config = {
  desks: [desk('alpha', TOKEN_A, [ADMIN_A], [EXPERT_A]), desk('beta', TOKEN_B, [ADMIN_B], [])],
  dashboard: { authMaxAgeSeconds: 3600 },
} as unknown as LoadedConfig

const sign = (token: string, id: number, opts: { authDate?: number; lang?: string } = {}) =>
  signInitData(token, {
    user: { id, language_code: opts.lang ?? 'en' },
    authDate: opts.authDate ?? nowSec - 60,
  })

describe('initData signature (core.telegram.org/bots/webapps)', () => {
  it('accepts launch data Telegram signed (the reference example of the Mini Apps docs), not our own signer', () => {
    // Published with its (documentation-only) token, so a mistake shared by signInitData and checkInitData cannot
    // make the suite pass.
    const token = '5768337691:AAH5YkoiEuPk8-FZa32hStHTqXiLPtAEhx8'
    const user = {
      id: 279058397,
      first_name: 'Vladislav',
      last_name: 'Kibenko',
      username: 'vdkfrost',
      language_code: 'ru',
      is_premium: true,
    }
    const initData = new URLSearchParams({
      query_id: 'AAHdF6IQAAAAAN0XohDhrOrc',
      user: JSON.stringify(user),
      auth_date: '1662771648',
      hash: 'c501b71e775f74ce10e377dea85a7ea24ecd640b223ea86dfe453e0eaed2e2b2',
    }).toString()
    const at = { now: new Date(1662771648_000 + 60_000), maxAgeSeconds: 3600 }
    expect(checkInitData(initData, token, at)).toMatchObject({ ok: true, data: { user: { id: 279058397 } } })
    expect(checkInitData(tamper(initData, 'query_id', 'AAHdF6IQAAAAAN0XohDhrOrd'), token, at)).toEqual({
      ok: false,
      reason: 'bad-hash',
    })
  })

  it('valid: signed with the bot token, fresh', () => {
    const r = checkInitData(sign(TOKEN_A, ADMIN_A), TOKEN_A, { now: NOW, maxAgeSeconds: 3600 })
    expect(r).toMatchObject({
      ok: true,
      data: { user: { id: ADMIN_A }, authDate: new Date((nowSec - 60) * 1000) },
    })
  })

  it('the order of the fields does not matter (the check sorts them)', () => {
    const reordered = signInitData(TOKEN_A, {
      user: { id: ADMIN_A },
      authDate: nowSec - 60,
      extra: { chat_type: 'sender', start_param: 'overview' },
      order: 'reversed',
    })
    expect(reordered.startsWith('hash=')).toBe(true)
    const r = checkInitData(reordered, TOKEN_A, { now: NOW, maxAgeSeconds: 3600 })
    expect(r).toMatchObject({ ok: true, data: { startParam: 'overview', chatType: 'sender' } })
  })

  it('forged: any field changed after signing, a made-up hash, another bot token', () => {
    const good = sign(TOKEN_A, EXPERT_A)
    const opts = { now: NOW, maxAgeSeconds: 3600 }
    // An expert makes themself the admin.
    const promoted = tamper(
      good,
      'user',
      JSON.stringify({ id: ADMIN_A, first_name: 'Staff', language_code: 'en' }),
    )
    expect(checkInitData(promoted, TOKEN_A, opts)).toEqual({ ok: false, reason: 'bad-hash' })
    // Old launch data made fresh again.
    expect(checkInitData(tamper(good, 'auth_date', String(nowSec)), TOKEN_A, opts)).toEqual({
      ok: false,
      reason: 'bad-hash',
    })
    expect(checkInitData(tamper(good, 'hash', 'ab'.repeat(32)), TOKEN_A, opts)).toEqual({
      ok: false,
      reason: 'bad-hash',
    })
    expect(checkInitData(good, TOKEN_B, opts)).toEqual({ ok: false, reason: 'bad-hash' })
    // A field added after signing.
    expect(checkInitData(`${good}&start_param=x`, TOKEN_A, opts)).toEqual({ ok: false, reason: 'bad-hash' })
  })

  it('malformed: no hash, a short hash, a field given twice, nothing at all', () => {
    const good = sign(TOKEN_A, ADMIN_A)
    const opts = { now: NOW, maxAgeSeconds: 3600 }
    const noHash = new URLSearchParams(good)
    noHash.delete('hash')
    expect(checkInitData(noHash.toString(), TOKEN_A, opts)).toEqual({ ok: false, reason: 'malformed' })
    expect(checkInitData(tamper(good, 'hash', 'abc'), TOKEN_A, opts)).toEqual({
      ok: false,
      reason: 'malformed',
    })
    expect(checkInitData(`${good}&user=x`, TOKEN_A, opts)).toEqual({ ok: false, reason: 'malformed' })
    expect(checkInitData('', TOKEN_A, opts)).toEqual({ ok: false, reason: 'missing' })
    expect(checkInitData(undefined, TOKEN_A, opts)).toEqual({ ok: false, reason: 'missing' })
  })

  it('stale: auth_date older than the configured age; far in the future is refused too', () => {
    const opts = { now: NOW, maxAgeSeconds: 3600 }
    expect(checkInitData(sign(TOKEN_A, ADMIN_A, { authDate: nowSec - 3601 }), TOKEN_A, opts)).toEqual({
      ok: false,
      reason: 'stale',
    })
    expect(checkInitData(sign(TOKEN_A, ADMIN_A, { authDate: nowSec - 3599 }), TOKEN_A, opts).ok).toBe(true)
    expect(
      checkInitData(sign(TOKEN_A, ADMIN_A, { authDate: nowSec - 3599 }), TOKEN_A, {
        now: NOW,
        maxAgeSeconds: 600,
      }),
    ).toEqual({ ok: false, reason: 'stale' })
    expect(checkInitData(sign(TOKEN_A, ADMIN_A, { authDate: nowSec + 3600 }), TOKEN_A, opts)).toEqual({
      ok: false,
      reason: 'from-future',
    })
  })
})

describe('authorize: the desk in the URL, its token, its staff', () => {
  it('an admin and an expert of the desk get in with their role and language', () => {
    expect(authorize(config, 'alpha', sign(TOKEN_A, ADMIN_A, { lang: 'ru-RU' }), NOW)).toMatchObject({
      ok: true,
      viewer: { userId: ADMIN_A, role: 'admin', lang: 'ru', desk: { slug: 'alpha' } },
    })
    const expert = authorize(config, 'alpha', sign(TOKEN_A, EXPERT_A, { lang: 'de' }), NOW)
    expect(expert).toMatchObject({ ok: true, viewer: { role: 'expert', lang: 'ru' } })
    if (expert.ok) expect(expert.viewer.expiresAt).toEqual(new Date((nowSec - 60 + 3600) * 1000))
  })

  it('forged or stale launch data: 401', () => {
    const forged = tamper(sign(TOKEN_A, EXPERT_A), 'user', JSON.stringify({ id: ADMIN_A }))
    expect(authorize(config, 'alpha', forged, NOW)).toMatchObject({ ok: false, status: 401 })
    expect(
      authorize(config, 'alpha', sign(TOKEN_A, ADMIN_A, { authDate: nowSec - 7200 }), NOW),
    ).toMatchObject({
      ok: false,
      status: 401,
      reason: 'stale',
    })
    expect(authorize(config, 'alpha', undefined, NOW)).toMatchObject({ ok: false, status: 401 })
  })

  it('signed and fresh but not staff of the desk: 403', () => {
    expect(authorize(config, 'alpha', sign(TOKEN_A, CLIENT), NOW)).toMatchObject({
      ok: false,
      status: 403,
      reason: 'not-staff',
    })
  })

  it("staff of another desk: refused whichever bot signed (beta's admin on alpha)", () => {
    // Opened from alpha's bot: signature good, but not alpha's staff.
    expect(authorize(config, 'alpha', sign(TOKEN_A, ADMIN_B), NOW)).toMatchObject({ ok: false, status: 403 })
    // Opened from beta's bot and sent to alpha's dashboard: not signed by alpha's bot.
    expect(authorize(config, 'alpha', sign(TOKEN_B, ADMIN_B), NOW)).toMatchObject({ ok: false, status: 401 })
    // ...and alpha's admin's beta launch data does not open alpha either.
    expect(authorize(config, 'alpha', sign(TOKEN_B, ADMIN_A), NOW)).toMatchObject({ ok: false, status: 401 })
    // On their own desk they are in.
    expect(authorize(config, 'beta', sign(TOKEN_B, ADMIN_B), NOW)).toMatchObject({
      ok: true,
      viewer: { role: 'admin', desk: { slug: 'beta' } },
    })
  })

  it('an unknown desk: 404', () => {
    expect(authorize(config, 'gamma', sign(TOKEN_A, ADMIN_A), NOW)).toMatchObject({ ok: false, status: 404 })
  })
})
