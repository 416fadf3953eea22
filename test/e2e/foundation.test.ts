import { afterAll, beforeAll, describe, expect, it } from 'vitest'
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
  beforeAll(async () => {
    tg = await startBotApi()
    t = await startTestApp({ apiRoot: tg.root, mode: 'webhook' })
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
})
