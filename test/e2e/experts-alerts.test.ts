import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  ADMIN_ID,
  appeals,
  clientSends,
  consultationWithTopic,
  type DeskWorld,
  EXPERT_ID,
  eventually,
  inboxDrained,
  itemIn,
  lanesIdle,
  paidConsultation,
  STAFF_CHAT_ID,
  staffSends,
  startDeskWorld,
  TEST_BOT_ID,
} from '../support/fixtures'

/**
 * Experts (src/experts), the second half (owners: experts.test.ts): the owner's private alert per question with a
 * link to the topic, /mute, a 403 owner, snippets sent as answers, days off in the config.
 */

import { EVE_ID, owner, remindFirstQuestion, world } from '../support/experts'

describe('experts: private alerts and snippets', () => {
  let w: DeskWorld
  beforeAll(async () => {
    w = await world()
    w.tg.user({ id: EVE_ID, first_name: 'Eve', language_code: 'en' })
  })
  afterAll(() => w?.stop())

  const alertsTo = (w: DeskWorld, to: number, consultationId: number) =>
    w.tg.sentTo(to).filter((m) => (m.text ?? '').includes(`консультация #${consultationId}`))

  it('one alert per question (not per message), with a button that opens the topic; /mute and /unmute', async () => {
    const { client, consultationId, route } = await consultationWithTopic(
      w,
      { language_code: 'en' },
      { tariff: 'many' },
    )
    const o = (await owner(w, consultationId))!.expert_id
    const thread = route.message_thread_id
    const m1 = await clientSends(w, client, 'First part of my question')
    const m2 = await clientSends(w, client, 'second part')
    await itemIn(w, client.id, m2.message_id, 'sent')
    const alert = await w.tg.waitForSent(o, /Вопрос №1 · консультация/)
    expect(alert.text).toContain('First part of my question')
    expect(alert.reply_markup.inline_keyboard[0][0].url).toBe(`https://t.me/c/9000000001/${thread}`)
    await itemIn(w, client.id, m1.message_id, 'sent')
    // The answer closes question 1; the next message opens question 2: a second alert.
    await staffSends(w, thread, w.expert, 'Answer one')
    await eventually(async () => (await appeals(w, consultationId))[0]?.state === 'answered', 'answer 1')
    await lanesIdle(w, consultationId)
    expect(alertsTo(w, o, consultationId)).toHaveLength(1)
    await clientSends(w, client, 'Question two')
    await w.tg.waitForSent(o, /Вопрос №2 · консультация/)
    expect(alertsTo(w, o, consultationId)).toHaveLength(2)

    // /mute by the owner: question 3 makes no alert; after /unmute the next question would alert again.
    const ownerUser = o === EVE_ID ? w.tg.user({ id: EVE_ID, first_name: 'Eve' }) : w.expert
    await staffSends(w, thread, ownerUser, '/mute')
    await w.tg.waitForSent(STAFF_CHAT_ID, /🔕/, { threadId: thread })
    await staffSends(w, thread, w.expert, 'Answer two')
    await eventually(async () => (await appeals(w, consultationId))[1]?.state === 'answered', 'answer 2')
    const q3 = await clientSends(w, client, 'Question three')
    await itemIn(w, client.id, q3.message_id, 'sent')
    await eventually(async () => (await appeals(w, consultationId)).length === 3, 'question 3')
    await lanesIdle(w, consultationId)
    expect(await w.deps.db.selectFrom('expert_mute').selectAll().execute()).toHaveLength(1)
    await staffSends(w, thread, ownerUser, '/unmute')
    await w.tg.waitForSent(STAFF_CHAT_ID, /🔔/, { threadId: thread })
    expect(await w.deps.db.selectFrom('expert_mute').selectAll().execute()).toHaveLength(0)
    await staffSends(w, thread, w.expert, 'Answer three')
    await eventually(async () => (await appeals(w, consultationId))[2]?.state === 'answered', 'answer 3')
    await clientSends(w, client, 'Question four')
    await w.tg.waitForSent(o, /Вопрос №4 · консультация/)
    expect(alertsTo(w, o, consultationId).map((m) => /Вопрос №(\d)/.exec(m.text!)![1])).toEqual([
      '1',
      '2',
      '4',
    ])
  })

  it('an owner who never started the bot (403): recorded once, quietly, nothing retried', async () => {
    const { client, consultationId } = await consultationWithTopic(w, { language_code: 'en' })
    const o = (await owner(w, consultationId))!.expert_id
    const rule = w.tg.fail(
      'sendMessage',
      { error_code: 403, description: "Forbidden: bot can't initiate conversation with a user" },
      {
        times: Number.POSITIVE_INFINITY,
        when: (p) => Number(p.chat_id) === o,
      },
    )
    try {
      await clientSends(w, client, 'Hello?')
      const row = await eventually(
        () =>
          w.deps.db
            .selectFrom('outbound_message')
            .selectAll()
            .where('key', 'like', 'experts:alert:%')
            .where('chat_id', '=', o)
            .where('outcome', '=', 'forbidden')
            .executeTakeFirst(),
        'the forbidden alert recorded',
      )
      expect(row.message_id).toBeNull()
      const dead = await w.deps.db
        .selectFrom('pgboss.job' as any)
        .select('id')
        .where('name', '=', 'dead-letter')
        .execute()
      expect(dead).toHaveLength(0)
    } finally {
      rule.cancel()
    }
  })

  it('/s NAME answers the client through the answer path; /snippet add|list|del for admins', async () => {
    const { client, consultationId, route } = await consultationWithTopic(w, { language_code: 'en' })
    const thread = route.message_thread_id
    const q = await clientSends(w, client, 'Is anyone there?')
    await itemIn(w, client.id, q.message_id, 'sent')
    const cmd = await w.tg.push(
      TEST_BOT_ID,
      w.tg.groupTopicMessage(STAFF_CHAT_ID, thread, w.expert, '/s hello'),
    )
    await w.tg.waitForSent(client.id, 'Hello! Looking into it.')
    const [a] = await appeals(w, consultationId)
    expect(a).toMatchObject({ state: 'answered', answered_by: EXPERT_ID, in_time: true })
    expect(a!.first_response_at).not.toBeNull()
    // A redelivered /s sends nothing more.
    await w.tg.redeliver(TEST_BOT_ID, cmd)
    await inboxDrained(w.deps.db)
    await lanesIdle(w, consultationId)
    expect(w.tg.texts(client.id).filter((t) => t === 'Hello! Looking into it.')).toHaveLength(1)

    await staffSends(w, thread, w.expert, '/s nope')
    await w.tg.waitForSent(STAFF_CHAT_ID, /Заготовки «nope» нет/, { threadId: thread })

    // An expert cannot edit snippets; an admin can.
    const general = (from: typeof w.admin, text: string) =>
      w.tg.push(TEST_BOT_ID, w.tg.groupTopicMessage(STAFF_CHAT_ID, undefined, from, text))
    await general(w.expert, '/snippet add bye Bye for now')
    await w.tg.waitForSent(STAFF_CHAT_ID, /только администраторы/)
    await general(w.admin, '/snippet add bye Bye for now, {name}!')
    await w.tg.waitForSent(STAFF_CHAT_ID, /«bye» добавлена/)
    await general(w.admin, '/snippet list')
    const list = await w.tg.waitForSent(STAFF_CHAT_ID, /Заготовки:/)
    expect(list.text).toContain('bye: Bye for now, {name}!')
    expect(list.text).toContain('hello ⚙️')
    await general(w.admin, '/snippet del hello')
    await w.tg.waitForSent(STAFF_CHAT_ID, /задана в файле настроек/)
    await general(w.admin, '/snippet add Bad!name text')
    await w.tg.waitForSent(STAFF_CHAT_ID, /Имя заготовки/)

    await clientSends(w, client, 'One more thing')
    await eventually(async () => (await appeals(w, consultationId)).length === 2, 'question 2')
    await staffSends(w, thread, w.expert, '/s bye')
    await w.tg.waitForSent(client.id, 'Bye for now, {name}!')
    await eventually(async () => (await appeals(w, consultationId))[1]?.state === 'answered', 'answered')

    await general(w.admin, '/snippet del bye')
    await w.tg.waitForSent(STAFF_CHAT_ID, /«bye» удалена/)
    const rows = await w.deps.db.selectFrom('desk_snippet').selectAll().execute()
    expect(rows).toHaveLength(0)
  })
})

describe('experts: days off in config', () => {
  let w: DeskWorld
  beforeAll(async () => {
    w = await startDeskWorld({
      configure: (c) => {
        const d = c.desks[0]!
        d.staff.experts = [EXPERT_ID, EVE_ID]
        // Eve is off every day of the week: never given a consultation, and her reminders go to the admins.
        d.expertSettings.daysOff = { [String(EVE_ID)]: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] }
        d.tariffs.push({ ...d.tariffs[0]!, code: 'eve', expert: EVE_ID })
      },
    })
  })
  afterAll(() => w?.stop())

  it('nobody is given a consultation on their day off; a tariff that names them still does, and the admins are reminded', async () => {
    for (let i = 0; i < 3; i++)
      expect((await owner(w, (await paidConsultation(w)).consultationId))!.expert_id).toBe(EXPERT_ID)
    const { client, consultationId } = await consultationWithTopic(
      w,
      { language_code: 'en' },
      { tariff: 'eve' },
    )
    expect((await owner(w, consultationId))!.expert_id).toBe(EVE_ID)
    await clientSends(w, client, 'Anyone?')
    const reminder = await remindFirstQuestion(w, consultationId)
    expect(reminder.text).toMatch(/Ведущий \(id 900003\) отсутствует/)
    expect(reminder.message.entities?.map((e) => (e as { user?: { id: number } }).user?.id)).toEqual([
      ADMIN_ID,
    ])
  })
})
