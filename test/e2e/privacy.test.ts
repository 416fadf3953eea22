import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { exportQueue } from '../../src/privacy/privacy.jobs'
import type { RecordedFile } from '../support/bot-api'
import {
  clientSends,
  consultationWithTopic,
  type DeskWorld,
  eventually,
  inboxDrained,
  itemIn,
  newClient,
  STAFF_CHAT_ID,
  staffSends,
  startDeskWorld,
  TEST_BOT_ID,
} from '../support/fixtures'
import { fastForward } from '../support/lifecycle-clock'

/**
 * Data rights (issue 18): /mydata sends a JSON file of everything the desk holds about the client; /forget, after a
 * confirmation, erases or anonymises their personal data and message contents, keeps accounting rows, closes their
 * topics with a note (through the outbox) and is audited; a redelivered confirmation does nothing more. Refused
 * (nothing changed) while a consultation is active.
 */

const H = 3600_000

async function auditCount(w: DeskWorld, action: string, subjectId: number) {
  const r = await w.deps.db
    .selectFrom('audit_log')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('action', '=', action)
    .where('subject_id', '=', String(subjectId))
    .executeTakeFirstOrThrow()
  return r.n
}

async function myData(w: DeskWorld, clientId: number) {
  const since = w.tg.mark()
  const press = await w.tg.push(TEST_BOT_ID, w.tg.privateText({ id: clientId } as never, '/mydata'))
  const doc = await w.tg.waitFor('sendDocument', { chat_id: clientId }, { since })
  const file = doc.payload.document as RecordedFile
  return { press, file, data: JSON.parse(file.data!.toString('utf8')) }
}

describe('data rights: /mydata and /forget', () => {
  let w: DeskWorld
  beforeAll(async () => {
    w = await startDeskWorld()
  })
  afterAll(() => w?.stop())

  it('/mydata sends everything; /forget is refused while active, then erases, keeps accounting, closes the topic once', async () => {
    const { client, consultationId, orderId, route } = await consultationWithTopic(w, {
      language_code: 'en',
      first_name: 'Zinaida',
      username: 'zina_private',
    })
    // A payment row as the payment flow writes it (accounting must keep it).
    await w.deps.db
      .insertInto('payment')
      .values({
        bot_id: TEST_BOT_ID,
        order_id: orderId,
        user_id: client.id,
        telegram_payment_charge_id: `charge-${client.id}`,
        currency: 'XTR',
        total_amount: 250,
        kind: 'payment',
      })
      .execute()
    const q = await clientSends(w, client, 'My secret staging password is hunter2')
    await itemIn(w, client.id, q.message_id, 'sent')
    const a = await staffSends(w, route.message_thread_id, w.expert, 'Rotate hunter2 right away.')
    await itemIn(w, STAFF_CHAT_ID, a.message.message_id, 'sent')

    // /mydata: one JSON file with the profile, order, payment, consultation, question and both messages.
    const first = await myData(w, client.id)
    expect(first.file.filename).toMatch(/^mydata-.*\.json$/)
    expect(first.data.client).toMatchObject({ first_name: 'Zinaida', username: 'zina_private' })
    expect(first.data.orders.map((o: { id: number }) => o.id)).toEqual([orderId])
    expect(first.data.payments[0]).toMatchObject({
      telegram_payment_charge_id: `charge-${client.id}`,
      total_amount: 250,
    })
    expect(first.data.consultations.map((c: { id: number }) => c.id)).toEqual([consultationId])
    expect(first.data.appeals).toHaveLength(1)
    const texts = first.data.messages.map((m: { content: { text?: string } | null }) => m.content?.text)
    expect(texts).toContain('My secret staging password is hunter2')
    expect(texts).toContain('Rotate hunter2 right away.')
    // A redelivered /mydata sends no second file.
    await w.tg.redeliver(TEST_BOT_ID, first.press)
    await w.tg.push(TEST_BOT_ID, w.tg.privateText(client, '/privacy'))
    const privacy = await w.tg.waitForSent(client.id, /What we keep, for how long, and why/)
    expect(privacy.text).toContain('/forget')
    expect(w.tg.callsTo('sendDocument', { chat_id: client.id })).toHaveLength(1)

    // /forget while the consultation is active: a specific refusal, nothing changes.
    await w.tg.push(TEST_BOT_ID, w.tg.privateText(client, '/forget'))
    const ask = await w.tg.waitForSent(client.id, /Erase your personal data/)
    expect(
      ask.reply_markup?.inline_keyboard?.[0]?.map((b: { callback_data?: string }) => b.callback_data),
    ).toEqual(['pv:forget:yes', 'pv:forget:no'])
    await w.tg.push(TEST_BOT_ID, w.tg.callback(client, 'pv:forget:yes', ask))
    const refusal = await w.tg.waitFor('answerCallbackQuery', (p) =>
      /paid, waiting or active/.test(String(p.text)),
    )
    expect(refusal.payload.show_alert).toBe(true)
    expect(await auditCount(w, 'client.forgotten', client.id)).toBe(0)
    const still = await w.deps.db
      .selectFrom('client')
      .select(['first_name', 'forgotten_at'])
      .where('bot_id', '=', TEST_BOT_ID)
      .where('user_id', '=', client.id)
      .executeTakeFirstOrThrow()
    expect(still).toEqual({ first_name: 'Zinaida', forgotten_at: null })

    // The window ends (every question answered: the lifecycle closes the topic).
    await fastForward(w.deps.db, consultationId, 25 * H)
    await w.tg.waitFor('closeForumTopic', {
      chat_id: STAFF_CHAT_ID,
      message_thread_id: route.message_thread_id,
    })

    // /forget, confirmed: erased, audited, the topic gets a note, its anonymised name and is closed again.
    const since = w.tg.mark()
    await w.tg.push(TEST_BOT_ID, w.tg.privateText(client, '/forget'))
    const ask2 = await w.tg.waitForSent(client.id, /Erase your personal data/, { since })
    const yes = await w.tg.push(TEST_BOT_ID, w.tg.callback(client, 'pv:forget:yes', ask2))
    await w.tg.waitFor('editMessageText', (p) =>
      /your personal data and message contents/.test(String(p.text)),
    )
    const note = await w.tg.waitForSent(STAFF_CHAT_ID, /воспользовался \/forget/, {
      threadId: route.message_thread_id,
    })
    expect(note.text).toContain(`#${consultationId}`)
    // The topic's card (it showed the name and username) now shows the note instead.
    await w.tg.waitFor(
      'editMessageText',
      (p) =>
        p.chat_id === STAFF_CHAT_ID &&
        p.message_id === route.card_message_id &&
        /\/forget/.test(String(p.text)),
    )
    await w.tg.waitFor(
      'editForumTopic',
      (p) => p.message_thread_id === route.message_thread_id && p.name === `#${consultationId}`,
    )
    await eventually(
      async () => w.tg.topic(STAFF_CHAT_ID, route.message_thread_id)?.closed === true || undefined,
      'the topic closed again',
    )

    const row = await w.deps.db
      .selectFrom('client')
      .selectAll()
      .where('bot_id', '=', TEST_BOT_ID)
      .where('user_id', '=', client.id)
      .executeTakeFirstOrThrow()
    expect(row).toMatchObject({ first_name: '—', last_name: null, username: null, language_code: null })
    expect(row.forgotten_at).toBeInstanceOf(Date)
    const msgs = await w.deps.db
      .selectFrom('desk_message')
      .select(['kind', 'content'])
      .where('consultation_id', '=', consultationId)
      .where('kind', '<>', 'note')
      .execute()
    expect(msgs.length).toBeGreaterThanOrEqual(2)
    expect(msgs.every((m) => m.content === null)).toBe(true)
    const pay = await w.deps.db
      .selectFrom('payment')
      .select(['telegram_payment_charge_id', 'total_amount', 'created_at'])
      .where('order_id', '=', orderId)
      .executeTakeFirstOrThrow()
    expect(pay).toMatchObject({ telegram_payment_charge_id: `charge-${client.id}`, total_amount: 250 })
    const topicName = await w.deps.db
      .selectFrom('desk_route')
      .select('topic_name')
      .where('consultation_id', '=', consultationId)
      .executeTakeFirstOrThrow()
    expect(topicName.topic_name).toBe(`#${consultationId}`)
    const leaked = await sql<{ n: number }>`
      select count(*)::int as n from inbox_update where payload::text like '%hunter2%'`.execute(w.deps.db)
    expect(leaked.rows[0]!.n).toBe(0)
    expect(await auditCount(w, 'client.forgotten', client.id)).toBe(1)

    // Idempotent: the confirmation redelivered changes nothing and sends no second note.
    await w.tg.redeliver(TEST_BOT_ID, yes)
    await w.tg.push(TEST_BOT_ID, w.tg.privateText(client, '/status'))
    await w.tg.waitForSent(client.id, /Your orders/)
    expect(await auditCount(w, 'client.forgotten', client.id)).toBe(1)
    const notes = w.tg.callsTo('sendMessage', (p) => /воспользовался \/forget/.test(String(p.text)), {
      ok: true,
    })
    expect(notes).toHaveLength(1)

    // /mydata after (the per-client interval passed): the accounting rows, no name, no message contents.
    await sql`update data_export_request set requested_at = now() - interval '1 hour' where user_id = ${client.id}`.execute(
      w.deps.db,
    )
    const after = await myData(w, client.id)
    expect(after.data.client.first_name).toBe('—')
    expect(after.data.payments).toHaveLength(1)
    expect(JSON.stringify(after.data)).not.toContain('hunter2')
    expect(JSON.stringify(after.data)).not.toContain('Zinaida')
  })

  it('25 /mydata at once queue one export; the others are told when they can ask again (en 25, ru 10)', async () => {
    // Each refusal is a reply in the client's chat (one a second there): a smaller second round.
    for (const [lang, n] of [
      ['en', 25],
      ['ru', 10],
    ] as const) {
      const client = await newClient(w, { language_code: lang })
      const since = w.tg.mark()
      await Promise.all(
        Array.from({ length: n }, () => w.tg.push(TEST_BOT_ID, w.tg.privateText(client, '/mydata'))),
      )
      await w.tg.waitFor('sendDocument', { chat_id: client.id }, { since })
      const told = /ask for a new one in 10 minutes\.|Новый можно запросить через 10 минут\./
      await eventually(
        async () =>
          w.tg.sentTo(client.id).filter((m) => told.test(m.text ?? '')).length === n - 1 || undefined,
        `${n - 1} refusals`,
        90_000,
      )
      await inboxDrained(w.deps.db)
      const jobs = await sql<{ n: number }>`select count(*)::int as n from pgboss.job
        where name = ${exportQueue.name} and data->>'userId' = ${String(client.id)}`.execute(w.deps.db)
      expect(jobs.rows[0]!.n).toBe(1)
      expect(w.tg.callsTo('sendDocument', { chat_id: client.id })).toHaveLength(1)
      expect(w.tg.sentTo(client.id).filter((m) => told.test(m.text ?? ''))).toHaveLength(n - 1)
    }
  }, 240_000)

  it('two confirmations at once (a double tap): erased once, one note per topic; run 4 times', async () => {
    for (let run = 0; run < 4; run++) {
      const { client, consultationId, route } = await consultationWithTopic(w, { language_code: 'en' })
      const q = await clientSends(w, client, `race ${run}: a private detail`)
      await itemIn(w, client.id, q.message_id, 'sent')
      // The window ends with the question unanswered: the topic stays open for the answer (forget leaves it open).
      const ended = w.tg.mark()
      await fastForward(w.deps.db, consultationId, 25 * H)
      await w.tg.waitForSent(client.id, /ended at/, { since: ended })
      const since = w.tg.mark()
      await w.tg.push(TEST_BOT_ID, w.tg.privateText(client, '/forget'))
      const ask = await w.tg.waitForSent(client.id, /Erase your personal data/, { since })
      await Promise.all([
        w.tg.push(TEST_BOT_ID, w.tg.callback(client, 'pv:forget:yes', ask)),
        w.tg.push(TEST_BOT_ID, w.tg.callback(client, 'pv:forget:yes', ask)),
      ])
      await w.tg.waitForCount('answerCallbackQuery', 2, undefined, { since })
      await w.tg.waitForSent(STAFF_CHAT_ID, /воспользовался \/forget/, {
        threadId: route.message_thread_id,
        since,
      })
      await w.tg.waitFor(
        'editForumTopic',
        (p) => p.message_thread_id === route.message_thread_id && p.name === `#${consultationId}`,
        { since },
      )
      // A later /status lets every job of the presses finish (its answer comes after them in the chat's order).
      await w.tg.push(TEST_BOT_ID, w.tg.privateText(client, '/status'))
      await w.tg.waitForSent(client.id, /Your orders/, { since })
      const notes = w.tg.callsTo('sendMessage', (p) => /воспользовался \/forget/.test(String(p.text)), {
        ok: true,
        since,
      })
      expect(notes.filter((n) => n.payload.message_thread_id === route.message_thread_id)).toHaveLength(1)
      const row = await w.deps.db
        .selectFrom('client')
        .select(['first_name', 'forgotten_at'])
        .where('bot_id', '=', TEST_BOT_ID)
        .where('user_id', '=', client.id)
        .executeTakeFirstOrThrow()
      expect(row.first_name).toBe('—')
      const left = await sql<{ n: number }>`
        select count(*)::int as n from desk_message where consultation_id = ${consultationId}
          and kind <> 'note' and content is not null`.execute(w.deps.db)
      expect(left.rows[0]!.n).toBe(0)
    }
  }, 120_000)
})
