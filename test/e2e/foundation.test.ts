import { Readable, Writable } from 'node:stream'
import { request as undiciRequest } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLogger } from '../../src/log'
import { startTestApp, TEST_BOT_ID, type TestApp } from '../support/app'
import { type BotApiStandIn, startBotApi } from '../support/bot-api'
import { inboxDrained } from '../support/fixtures'

describe('polling mode', () => {
  let tg: BotApiStandIn
  let t: TestApp
  beforeAll(async () => {
    tg = await startBotApi()
    t = await startTestApp({ apiRoot: tg.root })
  })
  afterAll(async () => {
    await t?.stop()
    await tg?.close()
  })

  it('asks getUpdates for every update type it handles, pre-checkout included', async () => {
    await tg.waitFor('getUpdates')
    expect(tg.lastAllowedUpdates(TEST_BOT_ID)).toEqual(
      expect.arrayContaining(['message', 'callback_query', 'pre_checkout_query']),
    )
  })

  it('sets the command menu per language', () => {
    const langs = tg
      .callsTo('setMyCommands')
      .map((c) => (c.payload as { language_code?: string }).language_code)
    expect(langs).toEqual(expect.arrayContaining([undefined, 'ru', 'en']))
  })

  it("answers /start in the sender's language, naming the desk", async () => {
    const en = tg.user({ language_code: 'en-GB', first_name: 'Ann' })
    const ru = tg.user({ language_code: 'ru', first_name: 'Иван' })
    await tg.push(TEST_BOT_ID, tg.command(en, '/start'))
    await tg.push(TEST_BOT_ID, tg.command(ru, '/start'))
    const a = await tg.waitForSent(en.id, /Hello, Ann!/)
    const b = await tg.waitForSent(ru.id, /Здравствуйте, Иван!/)
    expect(a.text).toContain('Test desk')
    expect(b.text).toContain('Тестовый стол')
  })

  it('falls back to the desk language for a language it does not speak', async () => {
    const de = tg.user({ language_code: 'de' })
    await tg.push(TEST_BOT_ID, tg.command(de, '/start'))
    await tg.waitForSent(de.id, /Здравствуйте/)
  })

  it('handles a redelivered update once', async () => {
    const u = tg.user({ language_code: 'en' })
    const first = await tg.push(TEST_BOT_ID, tg.command(u, '/start'))
    await tg.waitForSent(u.id, /Hello/)
    await tg.redeliver(TEST_BOT_ID, first)
    // A later update from the same chat is handled after the redelivered one (per-chat order), so once its answer
    // is there the redelivery has been processed too.
    await tg.push(TEST_BOT_ID, tg.command(u, '/help'))
    await tg.waitForSent(u.id, /\/paysupport/)
    expect(tg.texts(u.id).filter((x) => x?.startsWith('Hello'))).toHaveLength(1)
  })

  it('reports health of the database and the job queue', async () => {
    const r = await fetch(`http://127.0.0.1:${t.app.httpPort}/health`)
    expect(r.status).toBe(200)
    expect(await r.json()).toMatchObject({
      ok: true,
      database: true,
      jobs: true,
      outbox: { new_dead_letters: 0 },
    })
  })
})

describe('webhook mode', () => {
  let tg: BotApiStandIn
  let t: TestApp
  const lines: Record<string, unknown>[] = []
  beforeAll(async () => {
    tg = await startBotApi()
    const sink = new Writable({
      write(chunk, _enc, done) {
        for (const l of String(chunk).split('\n')) if (l.trim()) lines.push(JSON.parse(l))
        done()
      },
    })
    t = await startTestApp({ apiRoot: tg.root, mode: 'webhook', log: createLogger('warn', sink) })
  })
  afterAll(async () => {
    await t?.stop()
    await tg?.close()
  })

  const url = () => `http://127.0.0.1:${t.app.httpPort}/telegram/test`

  it('registers the webhook with the secret and every handled update type', () => {
    const hook = tg.webhook(TEST_BOT_ID)
    expect(hook?.url).toBe(url())
    expect(hook?.secret_token).toBe('test-secret_1')
    expect(hook?.allowed_updates).toEqual(expect.arrayContaining(['message', 'pre_checkout_query']))
  })

  it('rejects a wrong or missing secret with 401 and processes nothing', async () => {
    const u = tg.user()
    const update = { ...tg.command(u, '/start'), update_id: 555001 }
    const wrong = await tg.postUpdate(url(), update, { secret: 'nope' })
    const missing = await tg.postUpdate(url(), update)
    expect(wrong.status).toBe(401)
    expect(missing.status).toBe(401)
    const claimed = await t.db.db
      .selectFrom('processed_update')
      .select('update_id')
      .where('update_id', '=', 555001)
      .execute()
    expect(claimed).toHaveLength(0)
    expect(tg.sentTo(u.id)).toHaveLength(0)
  })

  it('processes a correct delivery, and a redelivery of it once', async () => {
    const u = tg.user({ language_code: 'en' })
    const first = await tg.push(TEST_BOT_ID, tg.command(u, '/start'))
    expect(first.status).toBe(200)
    // The 200 came after the update was stored in the inbox: it is there before it is handled.
    const stored = await t.db.db
      .selectFrom('inbox_update')
      .select(['kind', 'chat_key'])
      .where('bot_id', '=', TEST_BOT_ID)
      .where('update_id', '=', first.update.update_id)
      .execute()
    expect(stored).toEqual([{ kind: 'message', chat_key: String(u.id) }])
    const again = await tg.redeliver(TEST_BOT_ID, first)
    expect(again.status).toBe(200)
    await tg.waitForSent(u.id, /^Hello/)
    await inboxDrained(t.db.db)
    expect(tg.texts(u.id).filter((x) => x?.startsWith('Hello'))).toHaveLength(1)
  })

  it('refuses malformed updates with the right secret: 400, one log line, nothing stored', async () => {
    const u = tg.user()
    const message = tg.command(u, '/start').message!
    const bad: [string, unknown][] = [
      ['malformed JSON', '{"update_id": 12, "message": '],
      ['an array', [{ update_id: 555101, message }]],
      ['{}', {}],
      ['a string update_id', { update_id: '555102', message }],
      ['a message without chat', { update_id: 555103, message: { ...message, chat: undefined } }],
      ['only update_id', { update_id: 555104 }],
      ['a callback without from', { update_id: 555105, callback_query: { id: 'x', data: 'y' } }],
    ]
    const before = lines.length
    for (const [what, body] of bad) {
      const r = await tg.postUpdate(url(), body, { secret: 'test-secret_1' })
      expect(r.status, what).toBe(400)
    }
    const refused = lines.slice(before).filter((l) => l.msg === 'webhook body refused')
    expect(refused).toHaveLength(bad.length)
    expect(lines.slice(before).filter((l) => l.level === 50)).toEqual([])
    // The log says why, never the body.
    expect(JSON.stringify(refused)).not.toContain('/start')
    const stored = await t.db.db
      .selectFrom('inbox_update')
      .select('update_id')
      .where('update_id', 'in', [12, 555101, 555102, 555103, 555104, 555105])
      .execute()
    expect(stored).toEqual([])
  })

  it('refuses a body over 1 MiB with 413 (declared or streamed), stores nothing; a large real update passes', async () => {
    const u = tg.user({ language_code: 'en' })
    const big = { ...tg.command(u, '/start'), update_id: 555201 }
    ;(big.message as { text: string }).text = `/start ${'x'.repeat(1024 * 1024)}`
    const declared = await tg.postUpdate(url(), big, { secret: 'test-secret_1' })
    expect(declared.status).toBe(413)
    // Streamed without a length (chunked): cut off past the limit too.
    const chunk = Buffer.alloc(64 * 1024, 0x20)
    const streamed = await undiciRequest(url(), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': 'test-secret_1' },
      body: Readable.from(
        (function* () {
          yield Buffer.from('{"update_id": 555202, "message": {"text": "')
          for (let i = 0; i < 24; i++) yield chunk
          yield Buffer.from('"}}')
        })(),
      ),
    }).then(
      async (r) => {
        await r.body.text()
        return r.statusCode
      },
      () => 0,
    )
    // 413, or the connection closed while we still wrote (it is not read on): never a 200 or a 500.
    expect([413, 0]).toContain(streamed)
    // A long but real update (a 4096-character text with entities) is well within the limit.
    const ok = { ...tg.command(u, '/start'), update_id: 555203 }
    ;(ok.message as { text: string }).text = `/start ${'я'.repeat(4000)}`
    expect((await tg.postUpdate(url(), ok, { secret: 'test-secret_1' })).status).toBe(200)
    const stored = await t.db.db
      .selectFrom('inbox_update')
      .select('update_id')
      .where('update_id', 'in', [555201, 555202, 555203])
      .execute()
    expect(stored.map((r) => r.update_id)).toEqual([555203])
  })
})
