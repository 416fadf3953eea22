import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ConfigError, loadConfig, parseConfig } from '../../src/config/load'
import { TEST_CONFIG, TEST_TOKEN } from '../support/app'
import {
  appeals,
  clientSends,
  consultationWithTopic,
  type DeskWorld,
  itemIn,
  lanesIdle,
  notificationsSent,
  STAFF_CHAT_ID,
  staffSends,
  startDeskWorld,
  TEST_BOT_ID,
} from '../support/fixtures'

/**
 * Issue 18's defects, tried as an operator would: commands for another bot, loose arguments, callbacks that match
 * nothing, anonymous admins, config typos. Every one is refused (or ignored) and changes nothing.
 */

async function state(w: DeskWorld, consultationId: number, clientId: number) {
  const c = await w.deps.db
    .selectFrom('consultation')
    .select(['access_until', 'state'])
    .where('id', '=', consultationId)
    .executeTakeFirstOrThrow()
  const client = await w.deps.db
    .selectFrom('client')
    .select('banned_at')
    .where('user_id', '=', clientId)
    .executeTakeFirst()
  const audits = await w.deps.db
    .selectFrom('audit_log')
    .select('action')
    .where('subject_id', 'in', [String(consultationId), String(clientId)])
    .execute()
  return {
    access_until: c.access_until?.getTime(),
    state: c.state,
    banned: !!client?.banned_at,
    audits: audits.map((a) => a.action).sort(),
    appeals: (await appeals(w, consultationId)).map((a) => a.state),
  }
}

/** Every earlier update of the staff chat was handled: they are handed over in order, and /card answers. */
async function settled(w: DeskWorld, thread: number, card: number, consultationId: number) {
  const since = w.tg.mark()
  await staffSends(w, thread, w.expert, '/card')
  await w.tg.waitFor('editMessageText', { chat_id: STAFF_CHAT_ID, message_id: card }, { since })
  await lanesIdle(w, consultationId)
}

describe('operating: strict staff input in a topic', () => {
  let w: DeskWorld
  beforeAll(async () => {
    w = await startDeskWorld()
  })
  afterAll(() => w?.stop())

  async function withOpenQuestion() {
    const { client, consultationId, route } = await consultationWithTopic(w, { language_code: 'en' })
    const q = await clientSends(w, client, 'An open question')
    await itemIn(w, client.id, q.message_id, 'sent')
    // The activation notice and the question's receipt are out: the tests count what the client gets after.
    await notificationsSent(w.deps.db)
    return { client, consultationId, thread: route.message_thread_id, card: route.card_message_id! }
  }

  it('a command for another bot (or a command-looking text) never reaches the client and closes nothing', async () => {
    const { client, consultationId, thread, card } = await withOpenQuestion()
    const before = await state(w, consultationId, client.id)
    expect(before.appeals).toEqual(['open'])
    const since = w.tg.mark()
    await staffSends(w, thread, w.admin, '/extend@other_bot 5')
    await staffSends(w, thread, w.admin, '/ban@other_bot')
    await staffSends(w, thread, w.admin, { text: '/extend 5' }) // no entity: still a command, not an answer
    await settled(w, thread, card, consultationId)
    expect(w.tg.callsTo('copyMessage', { chat_id: client.id }, { since })).toHaveLength(0)
    expect(w.tg.callsTo('sendMessage', { chat_id: client.id }, { since })).toHaveLength(0)
    expect(await state(w, consultationId, client.id)).toEqual(before)
  })

  it('/ban -1, /unban garbage, /extend 0x10, /extend 1e1 and friends are refused with usage; nothing changes', async () => {
    const { client, consultationId, thread, card } = await withOpenQuestion()
    const before = await state(w, consultationId, client.id)
    const since = w.tg.mark()
    for (const text of ['/ban -1', '/ban 123', '/unban garbage']) await staffSends(w, thread, w.admin, text)
    for (const text of [
      '/extend 0x10',
      '/extend 1e1',
      '/extend -2',
      '/extend 0',
      '/extend Infinity',
      '/extend 2h',
    ])
      await staffSends(w, thread, w.admin, text)
    await settled(w, thread, card, consultationId)
    const said = w.tg.texts(STAFF_CHAT_ID, { threadId: thread, since })
    expect(said.filter((t) => /\/(un)?ban \((no arguments|без аргументов)\)/.test(t ?? ''))).toHaveLength(3)
    expect(said.filter((t) => /Usage: \/extend <hours>|Использование: \/extend/.test(t ?? ''))).toHaveLength(
      6,
    )
    expect(await state(w, consultationId, client.id)).toEqual(before)
    expect(w.tg.callsTo(['copyMessage', 'sendMessage'], { chat_id: client.id }, { since })).toHaveLength(0)

    // The strict form still works: /extend 1,5 adds 90 minutes.
    await staffSends(w, thread, w.admin, '/extend 1,5')
    await w.tg.waitForSent(client.id, /extended by 1.5 h/)
    const after = await state(w, consultationId, client.id)
    expect(after.access_until! - before.access_until!).toBe(90 * 60_000)
  })

  it('a callback whose data matches nothing is answered (the button stops spinning), in the user’s language', async () => {
    const { client } = await withOpenQuestion()
    for (const data of ['nothing:here', 'desk:close:abc:yes', 'ord:start:99999999999999999']) {
      const since = w.tg.mark()
      await w.tg.push(TEST_BOT_ID, w.tg.callback(client, data))
      const a = await w.tg.waitFor('answerCallbackQuery', {}, { since })
      expect(a.payload.text).toBe('This button is no longer active.')
    }
    const ru = w.tg.user({ language_code: 'ru' })
    const since = w.tg.mark()
    await w.tg.push(TEST_BOT_ID, w.tg.callback(ru, 'junk'))
    expect((await w.tg.waitFor('answerCallbackQuery', {}, { since })).payload.text).toBe(
      'Эта кнопка больше не действует.',
    )
  })
})

describe('operating: anonymous admins act only where the config allows it', () => {
  let w: DeskWorld
  beforeAll(async () => {
    w = await startDeskWorld({
      configure: (c) => {
        c.desks[0]!.staff.anonymousAdmins = false
      },
    })
  })
  afterAll(() => w?.stop())

  it('an anonymous admin is not staff: not relayed, /extend /ban /close /report refused or ignored; listed staff still act', async () => {
    const { client, consultationId, route } = await consultationWithTopic(w, { language_code: 'en' })
    const thread = route.message_thread_id
    const card = route.card_message_id!
    const q = await clientSends(w, client, 'Question')
    await itemIn(w, client.id, q.message_id, 'sent')
    await notificationsSent(w.deps.db)
    const before = await state(w, consultationId, client.id)
    const since = w.tg.mark()
    const anon = { senderChat: true } as const
    await staffSends(w, thread, w.admin, 'An answer from the group', anon)
    for (const text of ['/extend 5', '/ban', '/close']) await staffSends(w, thread, w.admin, text, anon)
    await w.tg.push(
      TEST_BOT_ID,
      w.tg.groupTopicMessage(STAFF_CHAT_ID, undefined, w.admin, '/report', { senderChat: true }),
    )
    await w.tg.waitForSent(STAFF_CHAT_ID, /только администраторам/, { since })
    await settled(w, thread, card, consultationId)
    expect(w.tg.callsTo(['copyMessage', 'sendMessage'], { chat_id: client.id }, { since })).toHaveLength(0)
    expect(
      w.tg.texts(STAFF_CHAT_ID, { threadId: thread, since }).some((t) => /Завершить/.test(t ?? '')),
    ).toBe(false)
    expect(await state(w, consultationId, client.id)).toEqual(before)
    // The listed admin, the same person, acts.
    await staffSends(w, thread, w.admin, 'An answer from Ada')
    await w.tg.waitFor('copyMessage', { chat_id: client.id }, { since, ok: true })
  })
})

describe('operating: config mistakes are one line naming the key', () => {
  const text = readFileSync(TEST_CONFIG, 'utf8')
  const bad = (edit: (t: string) => string) => {
    try {
      parseConfig('c.yaml', edit(text))
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError)
      return (e as Error).message
    }
    throw new Error('accepted')
  }

  it('unknown keys, top level and nested, are errors naming them', () => {
    expect(parseConfig('c.yaml', text).mode).toBe('polling')
    expect(bad((t) => t.replace('mode: polling', 'mod: webhook'))).toBe('c.yaml: mod: unknown key')
    expect(bad((t) => t.replace('      admins: [900001]', '      admins: [900001]\n      admin: [1]'))).toBe(
      'c.yaml: desks[0].staff.admin: unknown key',
    )
    expect(
      bad((t) => t.replace('        priceStars: 100', '        priceStars: 100\n        prise: 5')),
    ).toBe('c.yaml: desks[0].tariffs[0].prise: unknown key')
    expect(
      bad((t) => t.replace('http: { host: 127.0.0.1, port: 0 }', 'http: { host: 127.0.0.1, prot: 1 }')),
    ).toBe('c.yaml: http.prot: unknown key')
  })

  it('a directory or an unreadable path as CONFIG_FILE is one line', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cd-cfgdir-'))
    const load = (file: string) => {
      try {
        loadConfig({ CONFIG_FILE: file, BOT_TOKEN: TEST_TOKEN })
      } catch (e) {
        expect(e).toBeInstanceOf(ConfigError)
        return (e as Error).message
      }
      throw new Error('accepted')
    }
    expect(load(dir)).toBe(`${dir}: is a directory, not a config file (set CONFIG_FILE to a YAML file)`)
    writeFileSync(path.join(dir, 'x.yaml'), text)
    expect(loadConfig({ CONFIG_FILE: path.join(dir, 'x.yaml'), BOT_TOKEN: TEST_TOKEN }).desks).toHaveLength(1)
    rmSync(dir, { recursive: true, force: true })
  })
})
