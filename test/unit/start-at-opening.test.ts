import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { type DeskRuntime, parseConfig } from '../../src/config/load'
import type { Order } from '../../src/orders/orders.repository'
import { accountForOrder } from '../../src/orders/orders.service'

/**
 * An immediate tariff bought outside hours to start at the desk's opening takes a place of the opening's day, not of
 * the day it was bought on (the e2e test's desk cannot pin the two to different days at any hour it runs).
 */

const text = readFileSync('test/support/desk.test.yaml', 'utf8').replace(
  / {6}weekly:\n(?: {8}\w{3}: .*\n)+/,
  '      weekly:\n        mon: ["10:00-18:00"]\n        tue: ["10:00-18:00"]\n',
)
const desk: DeskRuntime = { ...parseConfig('desk.yaml', text).desks[0]!, token: '1:x', botId: 1 }

// Monday 2027-01-04 20:00 Moscow: closed; the desk opens on Tuesday at 10:00.
const monEvening = new Date('2027-01-04T20:00:00+03:00')
const tueOpening = new Date('2027-01-05T10:00:00+03:00')
const order = (slot_start: Date | null) =>
  ({ tariff_code: 'quick', start_mode: 'immediate', slot_start, window_minutes: 1440 }) as Order

describe('the place of an immediate start', () => {
  it('is of the opening’s day when the client chose to start at the opening, else of the day of payment', () => {
    expect(accountForOrder(desk, order(tueOpening), monEvening)?.key).toBe('day:quick:2027-01-05')
    expect(accountForOrder(desk, order(null), monEvening)?.key).toBe('day:quick:2027-01-04')
  })
})
