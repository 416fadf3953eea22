import type { User } from 'grammy/types'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sweepOrders } from '../../src/orders/orders.service'
import { addBusinessMinutes } from '../../src/time/business-time'
import { deskSchedule } from '../../src/time/schedule'
import { type DeskWorld, startDeskWorld } from '../support/fixtures'
import { buy, preCheckout, TEST_BOT_ID } from './payments-support'
import { settingsKit } from './settings-support'

/**
 * /settings → Desk rules (issue 27) through the Bot API stand-in on a real database: the dispute promise and the
 * unpaid-order expiry changed in chat are what the next dispute and the next pre-checkout follow, in the running
 * process, without a restart; a bad value is refused naming the field, and nothing changes.
 */

let w: DeskWorld
let admin: User

beforeAll(async () => {
  w = await startDeskWorld()
  admin = w.admin
})
afterAll(async () => {
  await w?.stop()
})

const { settings, audits, press, send } = settingsKit(() => w)

/** Opens a rule's editor from the Desk rules screen and sends `text`; the bot's answer. */
async function setRule(field: string, text: string) {
  await press(admin, `st:re:${field}:${(await settings()).version}`)
  return send(admin, text, /was not accepted|Saved|Someone else/)
}

describe('/settings → Desk rules', () => {
  it('shows the rules with their defaults, each with a button', async () => {
    const since = w.tg.mark()
    await press(admin, 'st:r')
    const screen = await w.tg.waitFor(
      ['editMessageText', 'sendMessage'],
      (p) => p.chat_id === admin.id && /The desk's rules/.test(p.text ?? ''),
      { since },
    )
    const text = (screen.payload as { text: string }).text
    expect(text).toContain('• Payment dispute answer, business hours: 8')
    expect(text).toContain('• Unpaid order expires after, hours: 24')
    expect(text).toContain('• Languages: Russian, English')
    expect(text).not.toMatch(/Europe\/Moscow/)
  })

  it('refuses a bad value naming the field; nothing changes', async () => {
    const before = await settings()
    const a = await audits()
    for (const [field, bad, name] of [
      ['disputeAnswerHours', '0', 'Payment dispute answer, business hours'],
      ['disputeAnswerHours', '73', 'Payment dispute answer, business hours'],
      ['unpaidOrderHours', '1.5', 'Unpaid order expires after, hours'],
      ['zones', 'Europe/Moscow, Mars/Olympus', 'Time zones offered'],
      ['languages', 'de', 'Languages'],
      ['processedUpdateHours', '12', 'Handled updates kept, hours'],
    ] as const) {
      const answer = await setRule(field, bad)
      expect(answer, `${field} = ${bad}`).toMatch(new RegExp(`^${name} was not accepted`))
      await press(admin, 'st:cancel')
    }
    // The desk's main language (ru) cannot be dropped: refused by the desk's own check, named the same way.
    expect(await setRule('languages', 'en')).toMatch(/^Languages was not accepted: must include/)
    await press(admin, 'st:cancel')
    expect((await settings()).version).toBe(before.version)
    expect((await settings()).doc.rules).toEqual(before.doc.rules)
    expect(await audits()).toBe(a)
  })

  it("the next dispute's promise follows a changed dispute answer time", async () => {
    expect(await setRule('disputeAnswerHours', '3')).toBe(
      'Saved. Payment dispute answer, business hours is now: 3',
    )
    expect((await settings()).doc.rules.disputeAnswerHours).toBe(3)
    const u = w.tg.user({ first_name: 'Dora', language_code: 'en' })
    await w.tg.push(TEST_BOT_ID, w.tg.command(u, '/paysupport'))
    await w.tg.waitForSent(u.id, /We see no payments from you/)
    await press(u, 'ps:other')
    await w.tg.waitForSent(u.id, /describe the problem/)
    await send(u, 'I was charged twice.', /Your ticket no\. \d+ is open/)
    const d = await w.deps.db
      .selectFrom('dispute')
      .select(['reply_by', 'created_at'])
      .where('user_id', '=', u.id)
      .executeTakeFirstOrThrow()
    const desk = w.deps.desk(TEST_BOT_ID)
    const expected = addBusinessMinutes(deskSchedule(desk), d.created_at, 3 * 60)
    expect(Math.abs(d.reply_by.getTime() - expected.getTime())).toBeLessThan(1000)
    const eight = addBusinessMinutes(deskSchedule(desk), d.created_at, 8 * 60)
    expect(eight.getTime()).toBeGreaterThan(expected.getTime())
  })

  it("an unpaid order expires after the desk's changed hours: pre-checkout refuses, the sweeper cancels", async () => {
    const u = w.tg.user({ first_name: 'Olga', language_code: 'en' })
    await w.tg.push(TEST_BOT_ID, w.tg.command(u, '/start'))
    const o = await buy(w, u, 'quick', 'now')
    // Two hours old: within the default 24 hours, past the 1 hour set below.
    await sql`update orders set created_at = now() - interval '2 hours' where id = ${o.orderId}`.execute(
      w.deps.db,
    )
    expect(await setRule('unpaidOrderHours', '1')).toBe('Saved. Unpaid order expires after, hours is now: 1')
    expect(w.deps.desk(TEST_BOT_ID).rules.unpaidOrderHours).toBe(1)
    const answer = await preCheckout(w, u, { payload: o.payload, amount: o.amount })
    expect(answer).toMatchObject({ ok: false, error_message: expect.stringMatching(/invoice has expired/) })
    await sweepOrders(w.deps)
    const row = await w.deps.db
      .selectFrom('orders')
      .select(['state', 'cancel_reason'])
      .where('id', '=', o.orderId)
      .executeTakeFirstOrThrow()
    expect(row).toEqual({ state: 'cancelled', cancel_reason: 'unpaid' })
  })
})
