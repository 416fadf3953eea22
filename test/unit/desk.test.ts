import type { Message } from 'grammy/types'
import { describe, expect, it } from 'vitest'
import { createI18n } from '../../src/bot/i18n'
import { refusalText } from '../../src/consultations/refusals'
import { contentTypeOf, explicitReplyId, sameContent, storedContent } from '../../src/routing/content'
import { topicName } from '../../src/routing/topics'

// The formatters take their words (zone names) from the locale files, which the i18n hands over when created.
createI18n()

const msg = (m: Partial<Message>) =>
  ({ message_id: 10, date: 0, chat: { id: 1, type: 'private' }, ...m }) as Message

describe('topic names', () => {
  it('status icon, client, tariff, short id', () => {
    expect(topicName({ id: 42, state: 'active', title: 'Quick review' }, 'Anna Smith', false)).toBe(
      '🟢 Anna Smith · Quick review · #42',
    )
    expect(topicName({ id: 42, state: 'closed', title: 'Quick review' }, 'Anna', false)).toMatch(/^⚪ /)
    expect(topicName({ id: 42, state: 'active', title: 'Quick review' }, 'Anna', true)).toMatch(/^🔴 /)
  })

  it('never exceeds 128 characters: the client name is shortened first', () => {
    const name = topicName(
      { id: 123456, state: 'active', title: 'Разбор интеграции, 24 ч' },
      'Я'.repeat(300),
      false,
    )
    expect(Array.from(name).length).toBeLessThanOrEqual(128)
    expect(name).toMatch(/^🟢 Я+… · Разбор интеграции, 24 ч · #123456$/)
    const huge = topicName({ id: 1, state: 'active', title: 'T'.repeat(200) }, 'Anna', false)
    expect(Array.from(huge).length).toBeLessThanOrEqual(128)
  })
})

describe('refusal texts come from the refusal’s numbers', () => {
  it('no appeals left: left, total and held as decided', () => {
    expect(
      refusalText(
        null,
        { reason: 'no_appeals', numbers: { granted: 3, used: 2, held: 1, left: 0 } },
        'Europe/Moscow',
        'en',
      ),
    ).toEqual({ key: 'desk-refused-no-appeals', params: { left: 0, total: 3, held: 1 } })
  })

  it('window closed: the closing instant in the client’s zone, and the promise when an appeal is open', () => {
    const r = refusalText(
      null,
      { reason: 'window_closed', numbers: { accessUntil: '2026-12-01T15:00:00.000Z', openAppeal: true } },
      'Europe/Berlin',
      'en',
    )
    expect(r.key).toBe('desk-refused-window-closed')
    expect(r.params.end).toBe('1 Dec 2026, 16:00 Berlin time')
    expect(r.more).toEqual([{ key: 'desk-refused-window-closed-open' }])
  })

  it('not started: a date when there is one, else how the window starts', () => {
    const at = refusalText(
      { start_mode: 'scheduled', needs_start_date: false },
      { reason: 'not_started', numbers: { startsAt: '2026-12-01T07:00:00.000Z' } },
      'Europe/Moscow',
      'ru',
    )
    expect(at).toEqual({
      key: 'desk-refused-not-started',
      params: { start: '1 дек. 2026, 10:00 по Москве' },
    })
    expect(
      refusalText(
        { start_mode: 'on_request', needs_start_date: false },
        { reason: 'not_started', numbers: {} },
        'UTC',
        'en',
      ).key,
    ).toBe('desk-refused-not-started-on-request')
  })
})

describe('message content', () => {
  it('knows the copyable types and refuses the rest', () => {
    expect(contentTypeOf(msg({ text: 'hi' }))).toBe('text')
    expect(contentTypeOf(msg({ animation: {} as never, document: {} as never }))).toBe('animation')
    expect(contentTypeOf(msg({ venue: {} as never, location: {} as never }))).toBe('venue')
    expect(contentTypeOf(msg({ invoice: {} as never }))).toBeUndefined()
    expect(contentTypeOf(msg({ pinned_message: {} as never }))).toBeUndefined()
  })

  it('compares text and entities, not other fields, to decide whether an edit is real', () => {
    const a = storedContent(msg({ text: 'x', entities: [{ type: 'bold', offset: 0, length: 1 }] }))
    expect(
      sameContent(a, storedContent(msg({ text: 'x', entities: [{ type: 'bold', offset: 0, length: 1 }] }))),
    ).toBe(true)
    expect(sameContent(a, storedContent(msg({ text: 'x' })))).toBe(false)
    expect(
      sameContent(a, storedContent(msg({ text: 'y', entities: [{ type: 'bold', offset: 0, length: 1 }] }))),
    ).toBe(false)
  })

  it('a topic message replying to the topic’s creation message is not a reply', () => {
    const root = msg({ message_id: 5, forum_topic_created: { name: 't', icon_color: 1 } })
    expect(explicitReplyId(msg({ message_thread_id: 5, reply_to_message: root as never }))).toBeUndefined()
    expect(
      explicitReplyId(msg({ message_thread_id: 5, reply_to_message: msg({ message_id: 7 }) as never })),
    ).toBe(7)
  })
})
