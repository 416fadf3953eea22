import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { closeEarly } from '../../src/consultations/desk.service'
import { declineDispute, openDispute } from '../../src/disputes/disputes.service'
import { postDraft } from '../../src/drafting/drafting.service'
import { BOSS_SCHEMA } from '../../src/jobs/jobs'
import { exportQueue } from '../../src/privacy/privacy.jobs'
import type { RecordedFile } from '../support/bot-api'
import {
  ADMIN_ID,
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
import { fastForward, H } from '../support/lifecycle-clock'

/**
 * Data rights (issue 18): /mydata sends a JSON file of everything the desk holds about the client; /forget, after a
 * confirmation, erases or anonymises their personal data and message contents, keeps accounting rows, deletes their
 * topics (through the outbox; issue 26) and is audited; a redelivered confirmation does nothing more. Refused
 * (nothing changed) while a consultation is active.
 */

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

  it('/mydata sends everything; /forget is refused while active, then erases, keeps accounting, deletes the topic once', async () => {
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

    // /forget, confirmed: erased, audited, the topic deleted with its messages (issue 26).
    const since = w.tg.mark()
    await w.tg.push(TEST_BOT_ID, w.tg.privateText(client, '/forget'))
    const ask2 = await w.tg.waitForSent(client.id, /Erase your personal data/, { since })
    const yes = await w.tg.push(TEST_BOT_ID, w.tg.callback(client, 'pv:forget:yes', ask2))
    await w.tg.waitFor('editMessageText', (p) =>
      /your personal data and message contents/.test(String(p.text)),
    )
    await w.tg.waitFor('deleteForumTopic', {
      chat_id: STAFF_CHAT_ID,
      message_thread_id: route.message_thread_id,
    })
    expect(w.tg.topic(STAFF_CHAT_ID, route.message_thread_id)?.deleted).toBe(true)

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
    expect(w.tg.callsTo('deleteForumTopic', { message_thread_id: route.message_thread_id })).toHaveLength(1)
    // No lane recreated the topic, and nothing was sent into it after the deletion.
    expect(w.tg.callsTo('createForumTopic', undefined, { since })).toHaveLength(0)

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

  it('two confirmations at once (a double tap): erased once, the topic deleted once and never recreated; run 10 times', async () => {
    for (let run = 0; run < 10; run++) {
      const { client, consultationId, route } = await consultationWithTopic(w, { language_code: 'en' })
      const q = await clientSends(w, client, `race ${run}: a private detail`)
      await itemIn(w, client.id, q.message_id, 'sent')
      // The window ends with the question unanswered: the topic is deleted all the same (the client asked).
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
      await w.tg.waitFor(
        'deleteForumTopic',
        { chat_id: STAFF_CHAT_ID, message_thread_id: route.message_thread_id },
        { since },
      )
      // A later /status lets every job of the presses finish (its answer comes after them in the chat's order).
      await w.tg.push(TEST_BOT_ID, w.tg.privateText(client, '/status'))
      await w.tg.waitForSent(client.id, /Your orders/, { since })
      expect(
        w.tg.callsTo('deleteForumTopic', { message_thread_id: route.message_thread_id }, { since }),
      ).toHaveLength(1)
      expect(w.tg.callsTo('createForumTopic', undefined, { since })).toHaveLength(0)
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
  }, 240_000)
})

/**
 * Issue 26: markers planted everywhere a client's words and names are stored (the name, a question and its answer,
 * an AI draft's topic note, a low rating's comment and its notification job, a dispute with a follow-up carrying a
 * phone number and the admin's reason), then /forget: no table of the app or of pg-boss holds a marker any more,
 * the accounting rows stay, the consultation's and the dispute's topics are deleted, and so is the staff group's
 * message that quoted the comment. Before it, /mydata shows the comment and the follow-up and none of the staff's notes.
 */
describe('data rights: every place a client is stored (issue 26)', () => {
  let w: DeskWorld
  beforeAll(async () => {
    w = await startDeskWorld()
  })
  afterAll(() => w?.stop())

  /** Every text-like column of the app's schema and of pg-boss's, cast to text, searched for `marker`. */
  async function scan(marker: string): Promise<string[]> {
    const cols = await sql<{ s: string; t: string; c: string }>`
      select c.table_schema as s, c.table_name as t, c.column_name as c
        from information_schema.columns c
        join information_schema.tables t using (table_schema, table_name)
       where c.table_schema in ('public', ${BOSS_SCHEMA}) and t.table_type = 'BASE TABLE'
         and c.data_type in ('text', 'json', 'jsonb', 'character varying', 'ARRAY', 'USER-DEFINED')`.execute(
      w.deps.db,
    )
    expect(cols.rows.length).toBeGreaterThan(50)
    const hits: string[] = []
    for (const { s, t, c } of cols.rows) {
      const r = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(`${s}.${t}`)}
                 where ${sql.ref(c)}::text like ${`%${marker}%`}`.execute(w.deps.db)
      if (r.rows[0]!.n > 0) hits.push(`${s}.${t}.${c}`)
    }
    return hits
  }

  it('/mydata: the comment and the follow-up, no staff notes; /forget: no marker left anywhere, topics deleted', async () => {
    const M = `Mk${Date.now().toString(36)}`
    const { client, consultationId, orderId, route } = await consultationWithTopic(w, {
      language_code: 'en',
      first_name: `${M}first`,
      last_name: `${M}last`,
      username: `${M}user`,
    })
    const paid = await w.deps.db
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
      .returning('id')
      .executeTakeFirstOrThrow()
    const q = await clientSends(w, client, `${M}question: my staging password`)
    await itemIn(w, client.id, q.message_id, 'sent')
    // The owner's private alert quotes the client's name and question.
    const alert = await w.tg.waitForSent(w.expert.id, new RegExp(`${M}question`))
    expect(alert.text).toContain(`${M}first`)
    const a = await staffSends(w, route.message_thread_id, w.expert, `${M}answer: rotate it`)
    await itemIn(w, STAFF_CHAT_ID, a.message.message_id, 'sent')
    // The AI draft's note in the staff topic, as drafting posts it: the text, the model, the usage and cost.
    await w.deps.jobs.transaction(w.deps.db, (trx, outbox) =>
      postDraft(
        trx,
        outbox,
        w.deps,
        w.t.desk,
        {
          id: 1,
          consultation_id: consultationId,
          text: `${M}draft`,
          truncated: false,
          version: 1,
          model: 'gpt-x',
        },
        '120 + 80 tokens, 3 ⭐',
      ),
    )
    await w.tg.waitForSent(STAFF_CHAT_ID, new RegExp(`${M}draft`), { threadId: route.message_thread_id })
    expect(await closeEarly(w.deps, w.t.desk, { consultationId, actorId: ADMIN_ID })).toEqual({
      status: 'closed',
    })
    await w.tg.waitForSent(client.id, /has ended your consultation/)

    // A low rating with a comment: the admins are told (a job carrying the comment, a message in the group).
    await w.tg.push(TEST_BOT_ID, w.tg.callback(client, `rate:${consultationId}:2`))
    await w.tg.waitForSent(client.id, /You rated the consultation 2 of 5/)
    await w.tg.push(TEST_BOT_ID, w.tg.callback(client, `rate:cm:${consultationId}`))
    await w.tg.waitForSent(client.id, /Write your comment in one message/)
    await clientSends(w, client, `${M}comment: rude`)
    await w.tg.waitForSent(client.id, /your comment is saved/)
    const lowComment = await w.tg.waitForSent(STAFF_CHAT_ID, new RegExp(`${M}comment`))

    // A dispute, a follow-up with a phone number, declined with a reason quoting it.
    const lang = 'en'
    const opened = await openDispute(w.deps, w.t.desk, {
      userId: client.id,
      lang,
      paymentId: paid.id,
      reason: `${M}dispute: never answered`,
    })
    expect(opened.status).toBe('opened')
    const ticket = (opened as { dispute: { id: number } }).dispute.id
    const thread = (
      await w.tg.waitFor(
        'createForumTopic',
        (p) => p.chat_id === STAFF_CHAT_ID && String(p.name).includes(`#${ticket}`),
      )
    ).result as { message_thread_id: number }
    const appended = await openDispute(w.deps, w.t.desk, {
      userId: client.id,
      lang,
      paymentId: paid.id,
      reason: `${M}follow-up: call me at +7 900 123-45-67`,
    })
    expect(appended.status).toBe('appended')
    await w.tg.waitForSent(STAFF_CHAT_ID, new RegExp(`${M}follow-up`))

    // /mydata before: the comment and the follow-up are there, the staff's notes are not.
    const before = await myData(w, client.id)
    expect(before.data.ratings).toEqual([
      expect.objectContaining({ consultation_id: consultationId, score: 2, comment: `${M}comment: rude` }),
    ])
    expect(before.data.disputes[0].follow_ups).toEqual([
      expect.objectContaining({ text: `${M}follow-up: call me at +7 900 123-45-67` }),
    ])
    const texts = before.data.messages.map((m: { content: { text?: string } | null }) => m.content?.text)
    expect(texts).toContain(`${M}question: my staging password`)
    expect(texts).toContain(`${M}answer: rotate it`)
    const file = JSON.stringify(before.data)
    expect(file).not.toContain(`${M}draft`)
    expect(file).not.toContain('gpt-x')
    expect(file).not.toContain('Ada')
    expect(
      before.data.messages.filter(
        (m: { direction: string; kind: string }) => m.direction === 'in' && m.kind === 'note',
      ),
    ).toEqual([])

    expect(
      await declineDispute(w.deps, w.t.desk, { disputeId: ticket, adminId: ADMIN_ID, reason: `${M}decline` }),
    ).toMatchObject({ status: 'done' })
    await w.tg.waitForSent(client.id, new RegExp(`${M}decline`))
    expect((await scan(M)).length).toBeGreaterThan(5)

    // /forget, confirmed.
    const since = w.tg.mark()
    await w.tg.push(TEST_BOT_ID, w.tg.privateText(client, '/forget'))
    const ask = await w.tg.waitForSent(client.id, /Erase your personal data/, { since })
    const yes = await w.tg.push(TEST_BOT_ID, w.tg.callback(client, 'pv:forget:yes', ask))
    await w.tg.waitFor(
      'editMessageText',
      (p) => /your personal data and message contents/.test(String(p.text)),
      { since },
    )
    await w.tg.waitFor(
      'deleteForumTopic',
      { chat_id: STAFF_CHAT_ID, message_thread_id: route.message_thread_id },
      { since },
    )
    await w.tg.waitFor(
      'deleteForumTopic',
      { chat_id: STAFF_CHAT_ID, message_thread_id: thread.message_thread_id },
      { since },
    )
    await w.tg.waitFor(
      'deleteMessage',
      { chat_id: STAFF_CHAT_ID, message_id: lowComment.message_id },
      { since },
    )
    await w.tg.waitFor('deleteMessage', { chat_id: w.expert.id, message_id: alert.message_id }, { since })
    // The press handled (its stored update done): nothing of it is left to run. No later update of the client's is
    // pushed before the scan: Telegram sends their name with each, which is not the desk's to erase.
    await eventually(async () => {
      const r = await w.deps.db
        .selectFrom('inbox_update')
        .select('state')
        .where('bot_id', '=', TEST_BOT_ID)
        .where('update_id', '=', yes.update.update_id)
        .executeTakeFirst()
      return r?.state !== 'pending' || undefined
    }, 'the press handled')
    expect(await scan(M)).toEqual([])
    expect(await scan('123-45-67')).toEqual([])
    // Kept: the accounting rows, and the rating's score and the audit rows without their words.
    const pay = await w.deps.db
      .selectFrom('payment')
      .selectAll()
      .where('id', '=', paid.id)
      .executeTakeFirstOrThrow()
    expect(pay).toMatchObject({
      telegram_payment_charge_id: `charge-${client.id}`,
      total_amount: 250,
      order_id: orderId,
    })
    const order = await w.deps.db
      .selectFrom('orders')
      .selectAll()
      .where('id', '=', orderId)
      .executeTakeFirstOrThrow()
    expect(order.price_stars).toBeGreaterThan(0)
    const rated = await w.deps.db
      .selectFrom('consultation_rating')
      .select(['score', 'comment'])
      .where('consultation_id', '=', consultationId)
      .executeTakeFirstOrThrow()
    expect(rated).toEqual({ score: 2, comment: null })
    const added = await w.deps.db
      .selectFrom('audit_log')
      .select('details')
      .where('action', '=', 'dispute.client_added')
      .where('subject_id', '=', String(ticket))
      .execute()
    expect(added).toEqual([{ details: { erased: true } }])

    // /privacy says what cannot be erased.
    await w.tg.push(TEST_BOT_ID, w.tg.privateText(client, '/privacy'))
    const privacy = await w.tg.waitForSent(client.id, /What \/forget cannot erase/, { since })
    expect(privacy.text).toContain('48 hours')
    expect(privacy.text).not.toMatch(/5 years/)
  }, 120_000)
})
