import type { User } from 'grammy/types'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DeskConfig } from '../../src/config/schema'
import { termsHash } from '../../src/orders/orders.service'
import { editDesk } from '../../src/settings/edit'
import { changeDesk, termsText } from '../../src/settings/settings'
import { planTermsHash } from '../../src/subscriptions/plans'
import { eventually, inboxDrained, startDeskWorld, type World } from '../support/fixtures'
import { ADMIN_ID, buy, preCheckout, TEST_BOT_ID } from './payments-support'
import { settingsKit } from './settings-support'
import { plan } from './subscriptions-support'

/**
 * /settings (issue 24, part 5) through the Bot API stand-in on a real database: the admins edit the desk in their
 * private chats, and clients see the result at once (tariff list, invoice price, pay buttons refused when paused).
 */

const ADMIN2_ID = 900003
let w: World
let admin2: User

beforeAll(async () => {
  w = await startDeskWorld({
    expert: false,
    configure: (c) => {
      c.desks[0]!.staff.admins.push(ADMIN2_ID)
      c.desks[0]!.plans = [plan({ code: 'basic', priceStars: 500, questions: 3 })]
    },
  })
  admin2 = w.tg.user({ id: ADMIN2_ID, first_name: 'Bea', language_code: 'en' })
})
afterAll(async () => {
  await w?.stop()
})

const { version, doc, press, send } = settingsKit(() => w)

async function tariffList(client: User): Promise<string[]> {
  const since = w.tg.mark()
  await w.tg.push(TEST_BOT_ID, w.tg.command(client, '/tariffs'))
  const m = await w.tg.waitForSent(client.id, /tariff|support plan/i, { since })
  return (m.reply_markup?.inline_keyboard ?? []).flat().map((b: { text: string }) => b.text)
}

describe('/settings', () => {
  it('refuses anyone but the owner and admins, also on a button pressed without the menu', async () => {
    const client = w.tg.user({ first_name: 'Carl', language_code: 'en' })
    const since = w.tg.mark()
    await w.tg.push(TEST_BOT_ID, w.tg.command(client, '/settings'))
    await w.tg.waitForSent(client.id, /Only the desk's owner and admins/, { since })
    const v = await version()
    expect(await press(client, `st:tp:quick:${v}:1`)).toMatch(/Only the desk's owner and admins/)
    expect(await version()).toBe(v)
    expect((await doc()).tariffs.find((t) => t.code === 'quick')!.paused).toBe(false)
  })

  it('creates a tariff step by step (a bad step names its field); a client sees it and is invoiced its price', async () => {
    const admin = w.tg.user({ id: ADMIN_ID, first_name: 'Ada', language_code: 'en' })
    const since = w.tg.mark()
    await w.tg.push(TEST_BOT_ID, w.tg.command(admin, '/settings'))
    await w.tg.waitForSent(admin.id, /Desk settings/, { since })
    await press(admin, 'st:tl')
    await press(admin, `st:tn:${await version()}`)
    await w.tg.waitForSent(admin.id, /short code/, { since })
    expect(await send(admin, 'Deep!', /was not accepted/)).toMatch(/^Code was not accepted/)
    expect(await send(admin, 'quick', /was not accepted|title/i)).toMatch(
      /^Code was not accepted: already used/,
    )
    await send(admin, 'deep', /title/)
    await send(admin, 'Deep dive', /price in whole Stars/)
    expect(await send(admin, 'lots', /was not accepted/)).toMatch(/^Price was not accepted/)
    expect(await send(admin, '0', /was not accepted/)).toMatch(/^Price was not accepted/)
    const before = await version()
    await send(admin, '250', /hours the window/)
    await send(admin, '48', /questions it includes/)
    await send(admin, '5', /business hours/)
    await send(admin, '8', /window start/)
    expect(await version()).toBe(before)
    const s2 = w.tg.mark()
    await press(admin, 'st:sm:immediate')
    expect((await w.tg.waitForSent(admin.id, /Created/, { since: s2 })).text).toContain('250')
    const t = (await doc()).tariffs.find((x) => x.code === 'deep')!
    expect(t).toMatchObject({
      priceStars: 250,
      windowHours: 48,
      appeals: 5,
      slaBusinessHours: 8,
      paused: false,
    })

    const client = w.tg.user({ first_name: 'Dora', language_code: 'en' })
    expect(await tariffList(client)).toContain('Deep dive — 250 ⭐')
    const inv = await buy(w, client, 'deep')
    expect(inv.amount).toBe(250)
    expect(await preCheckout(w, client, inv)).toMatchObject({ ok: true })
  })

  it('edits a price (bad input first: named, nothing changed); the next invoice is at the new price', async () => {
    const admin = w.tg.user({ id: ADMIN_ID, first_name: 'Ada', language_code: 'en' })
    const v = await version()
    await press(admin, `st:te:deep:priceStars:${v}`)
    expect(await send(admin, '-5', /was not accepted/)).toMatch(/^Price was not accepted/)
    expect(await send(admin, '100001', /was not accepted/)).toMatch(/^Price was not accepted/)
    expect(await version()).toBe(v)
    expect(await send(admin, '300', /Saved|Someone else/)).toBe('Saved. Price is now: 300')
    const client = w.tg.user({ first_name: 'Eve', language_code: 'en' })
    expect((await buy(w, client, 'deep')).amount).toBe(300)
  })

  it('pauses a tariff: clients no longer see it, its pay button and open invoice are refused', async () => {
    const admin = w.tg.user({ id: ADMIN_ID, first_name: 'Ada', language_code: 'en' })
    const client = w.tg.user({ first_name: 'Fay', language_code: 'en' })
    const open = await buy(w, client, 'deep')
    await press(admin, `st:tp:deep:${await version()}:1`)
    expect((await doc()).tariffs.find((x) => x.code === 'deep')!.paused).toBe(true)
    expect((await tariffList(client)).some((b) => b.includes('Deep dive'))).toBe(false)
    const since = w.tg.mark()
    const text = await press(client, `tf:buy:deep:${termsHash(w.t.desk.terms.version)}`)
    expect(text).toMatch(/Sales of this tariff are paused/)
    await inboxDrained(w.deps.db)
    expect(w.tg.callsTo('sendInvoice', { chat_id: client.id }, { since })).toHaveLength(0)
    expect(await preCheckout(w, client, open)).toMatchObject({ ok: false })
    // Resumed: on sale again.
    await press(admin, `st:tp:deep:${await version()}:0`)
    expect(await tariffList(client)).toContain('Deep dive — 300 ⭐')
  })

  it('two admins editing the same price at once: one wins, the other is told the current value (20 rounds)', async () => {
    const admin = w.tg.user({ id: ADMIN_ID, first_name: 'Ada', language_code: 'en' })
    for (let round = 0; round < 20; round++) {
      const v = await version()
      await press(admin, `st:te:deep:priceStars:${v}`)
      await press(admin2, `st:te:deep:priceStars:${v}`)
      await inboxDrained(w.deps.db)
      const [a, b] = [400 + 2 * round, 401 + 2 * round]
      const [ra, rb] = await Promise.all([
        send(admin, String(a), /Saved|Someone else/),
        send(admin2, String(b), /Saved|Someone else/),
      ])
      const won = [ra, rb].filter((r) => r.startsWith('Saved'))
      expect(won, `round ${round}: ${ra} / ${rb}`).toHaveLength(1)
      const price = (await doc()).tariffs.find((x) => x.code === 'deep')!.priceStars
      expect(price).toBe(ra.startsWith('Saved') ? a : b)
      const lost = ra.startsWith('Saved') ? rb : ra
      expect(lost).toBe(
        `Someone else changed the settings meanwhile, so nothing was saved. Price is now: ${price}`,
      )
      expect(await version()).toBe(v + 1)
    }
  })

  it('adds a holiday (a bad date named, nothing changed) and removes it', async () => {
    const admin = w.tg.user({ id: ADMIN_ID, first_name: 'Ada', language_code: 'en' })
    const v = await version()
    await press(admin, `st:hh:${v}`)
    expect(await send(admin, '2027-13-01', /was not accepted/)).toMatch(/^Holiday was not accepted/)
    expect(await version()).toBe(v)
    expect(await send(admin, '2027-01-07', /Saved|Someone else/)).toMatch(/^Saved/)
    expect((await doc()).schedule.holidays).toContain('2027-01-07')
    expect(w.t.desk.schedule.holidays).toContain('2027-01-07')
    const since = w.tg.mark()
    await press(admin, `st:h`)
    const screen = await w.tg.waitFor('editMessageText', { chat_id: admin.id }, { since })
    expect((screen.payload as { text: string }).text).toMatch(/time zone: Moscow[\s\S]*Holidays: 2027-01-07/)
    await press(admin, `st:hx:2027-01-07:${await version()}`)
    await w.tg.waitFor('editMessageText', (p) => /Holidays: —/.test(p.text ?? ''), { since })
    expect((await doc()).schedule.holidays).not.toContain('2027-01-07')
  })

  it('the same write made again (a redelivered update) is already so; a different one on the old version is not', async () => {
    const v = await version()
    const pause = (doc: DeskConfig) => {
      doc.tariffs.find((x) => x.code === 'later')!.paused = true
    }
    expect((await editDesk(w.deps.db, TEST_BOT_ID, ADMIN_ID, v, pause)).status).toBe('done')
    expect((await editDesk(w.deps.db, TEST_BOT_ID, ADMIN_ID, v, pause)).status).toBe('done')
    expect(await version()).toBe(v + 1)
    const other = await editDesk(w.deps.db, TEST_BOT_ID, ADMIN_ID, v, (doc) => {
      doc.tariffs.find((x) => x.code === 'later')!.priceStars = 151
    })
    expect(other.status).toBe('conflict')
    expect(await version()).toBe(v + 1)
    await editDesk(w.deps.db, TEST_BOT_ID, ADMIN_ID, v + 1, (doc) => {
      doc.tariffs.find((x) => x.code === 'later')!.paused = false
    })
  })

  it('an admin removed after the menu was drawn is refused at press time; nothing changes', async () => {
    const v = await version()
    const since = w.tg.mark()
    await w.tg.push(TEST_BOT_ID, w.tg.command(admin2, '/settings'))
    await w.tg.waitForSent(admin2.id, /Desk settings/, { since })
    await changeDesk(w.deps.db, TEST_BOT_ID, { userId: ADMIN_ID, source: 'telegram' }, v, (d) => {
      d.staff.admins = d.staff.admins.filter((a) => a !== ADMIN2_ID)
    })
    expect(await press(admin2, `st:tp:quick:${v + 1}:1`)).toMatch(/Only the desk's owner and admins/)
    // Even with the right drawn before the removal, the write itself checks inside its transaction.
    expect(
      (
        await editDesk(w.deps.db, TEST_BOT_ID, ADMIN2_ID, v + 1, (d) => {
          d.tariffs[0]!.paused = true
        })
      ).status,
    ).toBe('forbidden')
    expect(await version()).toBe(v + 1)
    expect((await doc()).tariffs.find((t) => t.code === 'quick')!.paused).toBe(false)
  })

  it('a new English terms text is a new terms version; the old text stays readable for orders sold under it', async () => {
    const admin = w.tg.user({ id: ADMIN_ID, first_name: 'Ada', language_code: 'en' })
    const before = (await doc()).terms
    await press(admin, `st:xe:terms:en:${await version()}`)
    expect(await send(admin, 'Answers within a business day.', /Saved|Someone else/)).toMatch(/^Saved/)
    const after = (await doc()).terms
    expect(after.version).not.toBe(before.version)
    expect(after.text).toEqual({ ...before.text, en: 'Answers within a business day.' })
    expect(await termsText(w.deps.db, TEST_BOT_ID, before.version)).toEqual(before.text)
  })

  it('sets a weekday (a bad interval named, nothing changed), a day off, and the time zone', async () => {
    const admin = w.tg.user({ id: ADMIN_ID, first_name: 'Ada', language_code: 'en' })
    const v = await version()
    await press(admin, `st:hw:sat:${v}`)
    expect(await send(admin, '10:00-14:00, 25:00-26:00', /was not accepted/)).toMatch(
      /^Hours was not accepted: "25:00-26:00"/,
    )
    expect(await version()).toBe(v)
    expect(await send(admin, '10:00-14:00, 15:00-17:00', /Saved|Someone else/)).toBe(
      'Saved. Hours is now: 10:00-14:00, 15:00-17:00',
    )
    await press(admin, `st:hw:sun:${await version()}`)
    expect(await send(admin, '-', /Saved|Someone else/)).toBe('Saved. Hours is now: -')
    const weekly = (await doc()).schedule.weekly
    expect(weekly.sat).toEqual(['10:00-14:00', '15:00-17:00'])
    expect(weekly.sun).toBeUndefined()
    await press(admin, `st:hZ:0:${await version()}`)
    expect((await doc()).schedule.timezone).toBe('Europe/Kaliningrad')
    await eventually(
      async () => w.t.desk.schedule.timezone === 'Europe/Kaliningrad',
      'the desk to take the zone',
    )
  })

  it('pauses a plan: not offered to new subscribers, its subscribe button refused; resumed, offered again', async () => {
    const admin = w.tg.user({ id: ADMIN_ID, first_name: 'Ada', language_code: 'en' })
    const client = w.tg.user({ first_name: 'Gus', language_code: 'en' })
    const basic = (await doc()).plans.find((p) => p.code === 'basic')!
    await press(admin, `st:pp:basic:${await version()}:1`)
    expect((await doc()).plans.find((p) => p.code === 'basic')!.paused).toBe(true)
    await eventually(async () => w.t.desk.plans[0]!.paused === true, 'the desk to take the pause')
    const since = w.tg.mark()
    await w.tg.push(TEST_BOT_ID, w.tg.command(client, '/plan'))
    await w.tg.waitForSent(client.id, /./, { since })
    await inboxDrained(w.deps.db)
    expect(w.tg.texts(client.id, { since }).some((t) => t?.includes('Plan basic'))).toBe(false)
    expect(await press(client, `sub:buy:basic:${planTermsHash(basic)}`)).toMatch(/paused/)
    expect(
      w.tg.callsTo(['sendInvoice', 'createInvoiceLink'], { chat_id: client.id }, { since }),
    ).toHaveLength(0)
    await press(admin, `st:pp:basic:${await version()}:0`)
    expect((await doc()).plans.find((p) => p.code === 'basic')!.paused).toBe(false)
  })
})
