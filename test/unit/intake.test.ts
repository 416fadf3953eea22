import { GrammyError, HttpError } from 'grammy'
import type { Update } from 'grammy/types'
import { describe, expect, it } from 'vitest'
import { isDatabaseUnavailable, isTransientDbError } from '../../src/db/errors'
import { inboxKeys, PRIORITY_BUTTON, PRIORITY_OTHER, PRIORITY_PAYMENT } from '../../src/intake/keys'
import { isTransient } from '../../src/intake/transient'

const pgError = (code: string, message = 'x') => Object.assign(new Error(message), { code })
const user = { id: 42, is_bot: false, first_name: 'A' }
const privateChat = { id: 42, type: 'private' as const, first_name: 'A' }
const group = { id: -1009000000001, type: 'supergroup' as const, title: 'Staff', is_forum: true as const }

describe('which failures are transient (the update is handled again later, nobody told)', () => {
  it.each([
    ['08006 connection failure', pgError('08006')],
    ['08P01 protocol violation on a broken connection', pgError('08P01')],
    [
      '57P01 terminated by an administrator',
      pgError('57P01', 'terminating connection due to administrator command'),
    ],
    ['57P03 starting up', pgError('57P03', 'the database system is starting up')],
    [
      '55000 database closed to connections',
      pgError('55000', 'database "desk" is not currently accepting connections'),
    ],
    ['53300 too many connections', pgError('53300')],
    ['40001 serialization failure', pgError('40001')],
    ['40P01 deadlock', pgError('40P01')],
    ['55P03 lock timeout', pgError('55P03')],
    ['a refused socket', pgError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
    ['a reset socket', pgError('ECONNRESET', 'read ECONNRESET')],
    ['the driver: connection terminated', new Error('Connection terminated unexpectedly')],
    ['the pool: connect timeout', new Error('timeout exceeded when trying to connect')],
  ])('%s', (_, err) => {
    expect(isTransientDbError(err)).toBe(true)
    expect(isTransient(err)).toBe(true)
  })

  it.each([
    ['23505 unique violation', pgError('23505')],
    ['22P02 invalid input', pgError('22P02')],
    [
      '55000 for another reason (lastval before nextval)',
      pgError('55000', 'lastval is not yet defined in this session'),
    ],
    ['XX000 internal error', pgError('XX000')],
    ['a bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
  ])('not: %s', (_, err) => {
    expect(isTransient(err)).toBe(false)
  })

  it('connection-level errors are "unavailable", lost races are not', () => {
    expect(isDatabaseUnavailable(pgError('57P01'))).toBe(true)
    expect(isDatabaseUnavailable(pgError('40P01'))).toBe(false)
  })

  it('Telegram: unreachable, 5xx and 429 are transient; 400 and 403 are the update’s own', () => {
    const grammy = (code: number) =>
      new GrammyError('x', { ok: false, error_code: code, description: 'd' }, 'sendMessage', {})
    expect(isTransient(new HttpError('network', new Error('ECONNREFUSED')))).toBe(true)
    expect(isTransient(grammy(502))).toBe(true)
    expect(isTransient(grammy(429))).toBe(true)
    expect(isTransient(grammy(400))).toBe(false)
    expect(isTransient(grammy(403))).toBe(false)
  })
})

describe('how an update is queued in the inbox', () => {
  it('a private chat is one queue; payments first, then buttons, then the rest', () => {
    const msg = (extra: object): Update =>
      ({
        update_id: 1,
        message: { message_id: 1, date: 1, chat: privateChat, from: user, ...extra },
      }) as Update
    expect(inboxKeys(msg({ text: 'hi' }))).toEqual({
      chatKey: '42',
      priority: PRIORITY_OTHER,
      kind: 'message',
    })
    expect(
      inboxKeys(
        msg({
          successful_payment: {
            currency: 'XTR',
            total_amount: 1,
            invoice_payload: 'o:1',
            telegram_payment_charge_id: 'c',
            provider_payment_charge_id: '',
          },
        }),
      ),
    ).toEqual({ chatKey: '42', priority: PRIORITY_PAYMENT, kind: 'successful_payment' })
    const press: Update = {
      update_id: 2,
      callback_query: {
        id: 'q',
        from: user,
        chat_instance: 'i',
        data: 'x',
        message: { message_id: 5, date: 1, chat: privateChat, text: 't' },
      },
    } as Update
    expect(inboxKeys(press)).toEqual({ chatKey: '42', priority: PRIORITY_BUTTON, kind: 'callback_query' })
  })

  it('each forum topic of the staff group is its own queue; General is thread 0', () => {
    const inTopic = (thread: number | undefined): Update =>
      ({
        update_id: 3,
        message: {
          message_id: 9,
          date: 1,
          chat: group,
          from: user,
          text: 'answer',
          ...(thread ? { message_thread_id: thread, is_topic_message: true } : {}),
        },
      }) as Update
    expect(inboxKeys(inTopic(17)).chatKey).toBe(`${group.id}:17`)
    expect(inboxKeys(inTopic(18)).chatKey).toBe(`${group.id}:18`)
    expect(inboxKeys(inTopic(undefined)).chatKey).toBe(`${group.id}:0`)
  })

  it('an update without a chat is keyed by its sender', () => {
    const inline: Update = {
      update_id: 4,
      callback_query: { id: 'q', from: user, chat_instance: 'i', inline_message_id: 'm', data: 'x' },
    } as Update
    expect(inboxKeys(inline).chatKey).toBe('u42')
  })
})
