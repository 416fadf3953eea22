import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  clientSends,
  consultationWithTopic,
  type DeskWorld,
  eventually,
  itemIn,
  lanesIdle,
  newClient,
  STAFF_CHAT_ID,
  staffSends,
  startDeskWorld,
  TEST_BOT_ID,
  waitingConsultation,
} from '../support/fixtures'

/** Staff commands in a consultation topic, and the client-side refusals that do not depend on the window's end. */

describe('desk: staff commands in a topic', () => {
  let w: DeskWorld
  beforeAll(async () => {
    w = await startDeskWorld()
  })
  afterAll(() => w?.stop())

  async function started() {
    const { client, consultationId, route } = await consultationWithTopic(w, { language_code: 'en' })
    return { client, consultationId, thread: route.message_thread_id, card: route.card_message_id! }
  }

  const auditRows = (action: string, subject: number) =>
    w.deps.db
      .selectFrom('audit_log')
      .selectAll()
      .where('action', '=', action)
      .where('subject_id', '=', String(subject))
      .execute()

  it('/card re-renders the pinned card in place; commands are never relayed', async () => {
    const { client, consultationId, thread, card } = await started()
    const q = await clientSends(w, client, 'A question')
    await itemIn(w, client.id, q.message_id, 'sent')
    const since = w.tg.mark()
    await staffSends(w, thread, w.expert, '/card')
    const edit = await w.tg.waitFor(
      'editMessageText',
      { chat_id: STAFF_CHAT_ID, message_id: card },
      { since },
    )
    expect(edit.payload.text).toContain('ждут ответа: 1')
    await lanesIdle(w, consultationId)
    expect(w.tg.callsTo('copyMessage', { chat_id: client.id }, { since })).toHaveLength(0)
  })

  it('/extend is for admins; an admin extends the window, audited, the client told the new end', async () => {
    const { client, consultationId, thread } = await started()
    const before = await w.deps.db
      .selectFrom('consultation')
      .select('access_until')
      .where('id', '=', consultationId)
      .executeTakeFirstOrThrow()
    await staffSends(w, thread, w.expert, '/extend 2')
    await w.tg.waitForSent(STAFF_CHAT_ID, /только администраторы/, { threadId: thread })

    const cmd = w.tg.groupTopicMessage(STAFF_CHAT_ID, thread, w.admin, '/extend 2')
    const pushed = await w.tg.push(TEST_BOT_ID, cmd)
    await w.tg.waitForSent(client.id, /extended by 2 h/)
    await w.tg.redeliver(TEST_BOT_ID, pushed)
    await staffSends(w, thread, w.admin, '/card')
    await lanesIdle(w, consultationId)
    const after = await w.deps.db
      .selectFrom('consultation')
      .select('access_until')
      .where('id', '=', consultationId)
      .executeTakeFirstOrThrow()
    expect(after.access_until!.getTime() - before.access_until!.getTime()).toBe(2 * 3600_000)
    const audits = await auditRows('consultation.extended', consultationId)
    expect(audits).toHaveLength(1)
    expect(audits[0]).toMatchObject({ actor_id: w.admin.id, details: { hours: 2, reason: 'admin' } })
    // The ledger's window moved with it.
    const accounts = await w.deps.db
      .selectFrom('ledger_account')
      .select('period_end')
      .where('subject', '=', String(consultationId))
      .execute()
    for (const a of accounts) expect(a.period_end.getTime()).toBe(after.access_until!.getTime())
  })

  it('/close asks for confirmation; Yes ends the consultation early (audited), the client is told, new messages are refused', async () => {
    const { client, consultationId, thread } = await started()
    await staffSends(w, thread, w.expert, '/close')
    const ask = await w.tg.waitForSent(STAFF_CHAT_ID, /Завершить консультацию/, { threadId: thread })
    const yes = ask.reply_markup.inline_keyboard[0][0].callback_data as string
    expect(yes).toBe(`desk:close:${consultationId}:yes`)
    await w.tg.push(TEST_BOT_ID, w.tg.callback(w.expert, yes, ask))
    await w.tg.waitForSent(client.id, /ended your consultation/)
    const c = await w.deps.db
      .selectFrom('consultation')
      .selectAll()
      .where('id', '=', consultationId)
      .executeTakeFirstOrThrow()
    expect(c.state).toBe('closed')
    expect(await auditRows('consultation.closed_early', consultationId)).toHaveLength(1)
    // Pressed again: nothing more happens.
    await w.tg.push(TEST_BOT_ID, w.tg.callback(w.expert, yes, ask))
    await w.tg.waitFor('answerCallbackQuery', { show_alert: true })
    expect(await auditRows('consultation.closed_early', consultationId)).toHaveLength(1)

    const late = await clientSends(w, client, 'Still there?')
    const row = await itemIn(w, client.id, late.message_id, 'refused')
    expect(row.refusal).toMatchObject({ reason: 'closed' })
    await w.tg.waitForSent(client.id, /The desk closed this consultation/)
    // The topic's name shows the state.
    await w.tg.waitFor('editForumTopic', { message_thread_id: thread, name: /^⚪ / })
  })

  it('/ban (admin): the client is refused politely and not relayed; /unban lets them back', async () => {
    const { client, consultationId, thread } = await started()
    await staffSends(w, thread, w.admin, '/ban')
    await eventually(async () => {
      const c = await w.deps.db
        .selectFrom('client')
        .select('banned_at')
        .where('user_id', '=', client.id)
        .executeTakeFirst()
      return c?.banned_at
    }, 'the ban')
    const refused = await clientSends(w, client, 'hello?')
    await itemIn(w, client.id, refused.message_id, 'refused')
    await w.tg.waitForSent(client.id, /are not accepted/)
    expect(await auditRows('client.banned', client.id)).toHaveLength(1)
    // A second /ban (another message, not a redelivery) changes nothing and says so.
    await staffSends(w, thread, w.admin, '/ban')
    await w.tg.waitForSent(STAFF_CHAT_ID, /Клиент уже забанен, ничего не изменилось/, { threadId: thread })
    expect(await auditRows('client.banned', client.id)).toHaveLength(1)

    await staffSends(w, thread, w.admin, '/unban')
    await eventually(async () => (await auditRows('client.unbanned', client.id)).length === 1, 'the unban')
    await staffSends(w, thread, w.admin, '/unban')
    await w.tg.waitForSent(STAFF_CHAT_ID, /Клиент не забанен, ничего не изменилось/, { threadId: thread })
    expect(await auditRows('client.unbanned', client.id)).toHaveLength(1)
    const back = await clientSends(w, client, 'hello again')
    await itemIn(w, client.id, back.message_id, 'sent')
    await lanesIdle(w, consultationId)
    expect(
      w.tg.callsTo('copyMessage', {
        chat_id: STAFF_CHAT_ID,
        from_chat_id: client.id,
        message_id: refused.message_id,
      }),
    ).toHaveLength(0)
  })

  it("an anonymous admin (allowed by the desk) extends and bans from a topic: the write's re-check lets them", async () => {
    const { client, consultationId, thread } = await started()
    const anon = { senderChat: true } as const
    await staffSends(w, thread, w.admin, '/extend 1', anon)
    await eventually(
      async () => (await auditRows('consultation.extended', consultationId)).length === 1,
      'the extension',
    )
    await staffSends(w, thread, w.admin, '/ban', anon)
    await eventually(async () => (await auditRows('client.banned', client.id)).length === 1, 'the ban')
    expect((await auditRows('client.banned', client.id))[0]).toMatchObject({ actor_id: STAFF_CHAT_ID })
    await staffSends(w, thread, w.admin, '/unban', anon)
    await eventually(async () => (await auditRows('client.unbanned', client.id)).length === 1, 'the unban')
  })

  it('/note keeps an internal note on the consultation; an unknown command gets the list', async () => {
    const { client, consultationId, thread } = await started()
    await staffSends(w, thread, w.expert, '/note client prefers Go examples')
    await w.tg.waitForSent(STAFF_CHAT_ID, /Заметка сохранена/, { threadId: thread })
    const notes = await auditRows('consultation.note', consultationId)
    expect(notes[0]?.details).toMatchObject({ text: 'client prefers Go examples' })
    await staffSends(w, thread, w.expert, '/frobnicate')
    const unknown = await w.tg.waitForSent(STAFF_CHAT_ID, /Неизвестная команда/, { threadId: thread })
    // The list is the declared topic commands for the asker (an expert: no admin tools), with no near miss here.
    for (const c of ['/card', '/note', '/close', '/assign', '/mute', '/s', '/draft', '/away', '/report'])
      expect(unknown.text).toContain(c)
    for (const c of ['/grant', '/tariffs', '/mine']) expect(unknown.text).not.toContain(c)
    expect(unknown.text).not.toContain('имели в виду')
    // A near miss: the nearest command is offered.
    await staffSends(w, thread, w.expert, '/ntoe')
    await w.tg.waitForSent(STAFF_CHAT_ID, /Возможно, вы имели в виду \/note\?/, { threadId: thread })
    await lanesIdle(w, consultationId)
    expect(w.tg.callsTo('copyMessage', { chat_id: client.id })).toHaveLength(0)
  })
})

describe('desk: refusals before and outside a consultation', () => {
  let w: DeskWorld
  beforeAll(async () => {
    w = await startDeskWorld()
  })
  afterAll(() => w?.stop())

  it("an unknown command: a client gets the clients' commands and the nearest one; an admin in private, theirs", async () => {
    const client = await newClient(w, { language_code: 'en' })
    await w.tg.push(TEST_BOT_ID, w.tg.command(client, '/tarifs'))
    const told = await w.tg.waitForSent(client.id, /Unknown command/)
    expect(told.text).toContain('Did you mean /tariffs?')
    for (const c of ['/start', '/tariffs', '/status', '/paysupport', '/forget'])
      expect(told.text).toContain(c)
    for (const c of ['/mine', '/grant', '/card', '/dashboard']) expect(told.text).not.toContain(c)
    const since = w.tg.mark()
    await w.tg.push(TEST_BOT_ID, w.tg.command(w.admin, '/frobnicate'))
    const staff = await w.tg.waitForSent(w.admin.id, /Неизвестная команда|Unknown command/, { since })
    for (const c of ['/mine', '/grant', '/stuck', '/dashboard', '/tariffs']) expect(staff.text).toContain(c)
    expect(staff.text).not.toContain('/card')
  })

  it('a command the client formatted (another entity first at offset 0) is a command, as grammY reads one', async () => {
    const client = await newClient(w, { language_code: 'en' })
    const m = w.tg.privateMessage(client, {
      text: '/tarifs please',
      entities: [
        { type: 'bold', offset: 0, length: 14 },
        { type: 'bot_command', offset: 0, length: 7 },
      ],
    })
    await w.tg.push(TEST_BOT_ID, m)
    const told = await w.tg.waitForSent(client.id, /Unknown command/)
    expect(told.text).toContain('Did you mean /tariffs?')
    // Not taken for a question (refused or admitted, a question leaves a desk_message row): none for it.
    const rows = await w.deps.db
      .selectFrom('desk_message')
      .select('id')
      .where('bot_id', '=', TEST_BOT_ID)
      .where('chat_id', '=', client.id)
      .where('message_id', '=', m.message.message_id)
      .execute()
    expect(rows).toEqual([])
  })

  it('no consultation: the client is pointed to the tariffs; nothing is copied', async () => {
    const client = await newClient(w, { language_code: 'ru' })
    const m = await clientSends(w, client, 'Здравствуйте, сколько стоит?')
    const row = await itemIn(w, client.id, m.message_id, 'refused')
    expect(row.consultation_id).toBeNull()
    await w.tg.waitForSent(client.id, /нет оплаченной консультации/)
  })

  it('a paid window that starts on request: refused until Start, nothing counted', async () => {
    const client = await newClient(w, { language_code: 'en' })
    await waitingConsultation(w, client, { tariff: 'later' })
    const m = await clientSends(w, client, 'Can I ask already?')
    const row = await itemIn(w, client.id, m.message_id, 'refused')
    expect(row.refusal).toMatchObject({
      reason: 'not_started',
      numbers: { startsAt: null, startMode: 'on_request' },
    })
    await w.tg.waitForSent(client.id, /opens when you press “Start”/)
  })

  it('a refunded consultation refuses new questions but still delivers the answer to an accepted one', async () => {
    const { client, consultationId, route } = await consultationWithTopic(w, { language_code: 'en' })
    const q = await clientSends(w, client, 'Accepted before the refund')
    await itemIn(w, client.id, q.message_id, 'sent')
    // What a refund does to the consultation (src/payments/refunds.ts, policy "deliver").
    await w.deps.db
      .updateTable('consultation')
      .set({ state: 'revoked', revoked_at: new Date(), refund_policy: 'deliver' })
      .where('id', '=', consultationId)
      .execute()
    const after = await clientSends(w, client, 'After the refund')
    await itemIn(w, client.id, after.message_id, 'refused')
    await w.tg.waitForSent(client.id, /was refunded/)
    const answer = await staffSends(w, route.message_thread_id, w.expert, 'The answer you paid for')
    await itemIn(w, STAFF_CHAT_ID, answer.message.message_id, 'sent')
  })

  it('refunded under "stop": staff messages are withheld and the staff told once', async () => {
    const { client, consultationId, route } = await consultationWithTopic(w, { language_code: 'en' })
    await w.deps.db
      .updateTable('consultation')
      .set({ state: 'revoked', revoked_at: new Date(), refund_policy: 'stop' })
      .where('id', '=', consultationId)
      .execute()
    const a = await staffSends(w, route.message_thread_id, w.expert, 'Not delivered')
    const b = await staffSends(w, route.message_thread_id, w.expert, 'Not delivered either')
    await itemIn(w, STAFF_CHAT_ID, a.message.message_id, 'withheld')
    await itemIn(w, STAFF_CHAT_ID, b.message.message_id, 'withheld')
    await w.tg.waitForSent(STAFF_CHAT_ID, /по условиям тарифа она закрыта сразу/, {
      threadId: route.message_thread_id,
    })
    await lanesIdle(w, consultationId)
    expect(w.tg.callsTo('copyMessage', { chat_id: client.id })).toHaveLength(0)
    const notes = w.tg
      .sentTo(STAFF_CHAT_ID, { threadId: route.message_thread_id })
      .filter((m) => /по условиям тарифа она закрыта сразу/.test(m.text ?? ''))
    expect(notes).toHaveLength(1)
  })

  it('postToClient: a text to the client in order with the staff messages, once per key', async () => {
    const { postToClient } = await import('../../src/consultations/desk.service')
    const { client, consultationId } = await consultationWithTopic(w, { language_code: 'en' })
    for (let i = 0; i < 2; i++)
      await w.deps.jobs.transaction(w.deps.db, (trx, outbox) =>
        postToClient(trx, outbox, {
          consultationId,
          botId: TEST_BOT_ID,
          key: 'desk-window-extended',
          params: { hours: 1, end: 'soon' },
          dedupeKey: `test:${consultationId}`,
        }),
      )
    await w.tg.waitForSent(client.id, /extended by 1 h: it now ends at soon/)
    await lanesIdle(w, consultationId)
    expect(w.tg.texts(client.id).filter((t) => t?.includes('extended by 1 h'))).toHaveLength(1)
  })
})
