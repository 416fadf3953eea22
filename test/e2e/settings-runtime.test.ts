import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { termsHash } from '../../src/orders/orders.service'
import { changeDesk, termsText } from '../../src/settings/settings'
import { eventually, startDeskWorld, type World } from '../support/fixtures'
import { buy, orderState, pay, preCheckout, TEST_BOT_ID } from './payments-support'

/**
 * Settings that change while the desk runs (issue 24, src/settings), across two processes on one database (two
 * apps with their own pools and listeners): a price and the terms changed through changeDesk in the worker process
 * are what the bot process's next invoice shows, with no restart; an order made before the change is paid at the
 * price and under the terms it was sold with.
 */

let w: World
let worker: World

beforeAll(async () => {
  w = await startDeskWorld({ expert: false })
  worker = await startDeskWorld({ role: 'worker', database: w.t.db, tg: w.tg, expert: false })
})
afterAll(async () => {
  await worker?.stop()
  await w?.stop()
})

describe('a price and the terms changed in another process', () => {
  it('are what the next invoice shows; an order made before keeps its price and terms', async () => {
    const anna = w.tg.user({ first_name: 'Anna', language_code: 'en' })
    const bob = w.tg.user({ first_name: 'Bob', language_code: 'en' })
    const oldTerms = structuredClone(w.t.desk.terms)
    const before = await buy(w, anna, 'quick')
    expect(before.amount).toBe(100)

    const r = await changeDesk(
      worker.deps.db,
      TEST_BOT_ID,
      { userId: 900001, source: 'telegram' },
      'any',
      (d) => {
        d.tariffs.find((t) => t.code === 'quick')!.priceStars = 130
        d.terms.text = { ru: 'Новые условия.', en: 'New terms.' }
      },
    )
    expect(r.doc.terms.version).not.toBe(oldTerms.version)
    // The bot process hears of it (no restart, no file).
    await eventually(async () => w.t.desk.settingsVersion === r.version, 'the bot process to take the change')

    // The card's old button (old terms) is refused; the new card's invoice is at the new price.
    const since = w.tg.mark()
    await w.tg.push(TEST_BOT_ID, w.tg.callback(bob, `tf:buy:quick:${termsHash(oldTerms.version)}`))
    const card = await w.tg.waitFor('sendMessage', { chat_id: bob.id }, { since })
    expect((card.payload as { text: string }).text).toContain('130')
    expect((card.payload as { text: string }).text).not.toContain('100')
    expect(w.tg.callsTo('sendInvoice', { chat_id: bob.id }, { since })).toHaveLength(0)
    const after = await buy(w, bob, 'quick')
    expect(after.amount).toBe(130)
    expect(after.invoice.prices).toEqual([expect.objectContaining({ amount: 130 })])
    expect((await orderState(w.deps, after.orderId)).order).toMatchObject({
      price_stars: 130,
      terms_version: r.doc.terms.version,
    })

    // Anna's order, made before the change, is paid at 100 under the old terms.
    expect(await preCheckout(w, anna, before)).toMatchObject({ ok: true })
    await pay(w, anna, before)
    await w.tg.waitForSent(anna.id, /is active/)
    const { order, payments } = await orderState(w.deps, before.orderId)
    expect(order).toMatchObject({ state: 'active', price_stars: 100 })
    expect(order.terms_version).toBe(oldTerms.version)
    expect(payments.map((p) => p.total_amount)).toEqual([100])
    expect(await termsText(w.deps.db, TEST_BOT_ID, order.terms_version)).toEqual(oldTerms.text)
  })
})
