import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runReminder } from '../../src/lifecycle/sla.service'
import {
  ADMIN_ID,
  activeConsultation,
  appeals,
  clientSends,
  consultationWithTopic,
  type DeskWorld,
  EXPERT_ID,
  eventually,
  itemIn,
  lanesIdle,
  newClient,
  paidConsultation,
  STAFF_CHAT_ID,
  staffSends,
  TEST_BOT_ID,
  topicReady,
} from '../support/fixtures'

/**
 * Experts (src/experts): an owner per consultation chosen at activation (tariff's expert, else least loaded, round
 * robin on ties, under a lock), /assign hand-over with its history, /away and /back, the SLA reminder to the owner or
 * the admins. Alerts, snippets and days off: experts-alerts.test.ts.
 */

import { EVE_ID, history, MIN, owner, remindFirstQuestion, unassignAll, world } from '../support/experts'

describe('experts: owners', () => {
  let w: DeskWorld
  let eve: ReturnType<DeskWorld['tg']['user']>
  beforeAll(async () => {
    w = await world()
    eve = w.tg.user({ id: EVE_ID, first_name: 'Eve', language_code: 'en' })
  })
  afterAll(() => w?.stop())

  it('least loaded first (open questions, then consultations), round robin on ties; the tariff names its expert', async () => {
    await unassignAll(w)
    const a = await consultationWithTopic(w, { language_code: 'en' })
    const b = await paidConsultation(w, { language_code: 'en' })
    const ownerA = (await owner(w, a.consultationId))!.expert_id
    const ownerB = (await owner(w, b.consultationId))!.expert_id
    expect(new Set([ownerA, ownerB])).toEqual(new Set([EXPERT_ID, EVE_ID]))
    // A question on A: A's owner has an open question, B's has none: the next goes to B's owner.
    const q = await clientSends(w, a.client, 'A question')
    await itemIn(w, a.client.id, q.message_id, 'sent')
    const c = await paidConsultation(w, { language_code: 'en' })
    expect((await owner(w, c.consultationId))!.expert_id).toBe(ownerB)
    // Now B's owner has two consultations, A's one (with an open question): open questions count first.
    const d = await paidConsultation(w, { language_code: 'en' })
    expect((await owner(w, d.consultationId))!.expert_id).toBe(ownerB)
    // The tariff that names Eve gives Eve, whatever the load.
    const e = await paidConsultation(w, { language_code: 'en' }, { tariff: 'eve' })
    expect(await owner(w, e.consultationId)).toMatchObject({ expert_id: EVE_ID, reason: 'tariff' })
    // The card and the topic's name show the owner; the owner was told in private.
    const route = await topicReady(w, a.consultationId)
    const name = ownerA === EVE_ID ? 'Eve' : `id ${EXPERT_ID}`
    await eventually(
      async () => w.tg.topic(STAFF_CHAT_ID, route.message_thread_id)?.name.includes(`👤 ${name}`),
      'the topic name with the owner',
    )
    const card = w.tg.message(STAFF_CHAT_ID, route.card_message_id!)
    expect(card?.text).toContain(`Ведёт: ${name}`)
    await w.tg.waitForSent(ownerA, new RegExp(`Консультация #${a.consultationId} .*ваша`))
  })

  it('two activations at once choose one after the other: each expert gets one (30 rounds)', async () => {
    await unassignAll(w)
    for (let round = 0; round < 30; round++) {
      const [x, y] = await Promise.all([newClient(w), newClient(w)])
      const [cx, cy] = await Promise.all([activeConsultation(w, x!), activeConsultation(w, y!)])
      const ox = (await owner(w, cx.consultationId))!.expert_id
      const oy = (await owner(w, cy.consultationId))!.expert_id
      expect(ox).not.toBe(oy)
    }
    const per = await w.deps.db
      .selectFrom('expert_assignment')
      .select(['expert_id', (eb) => eb.fn.countAll<number>().as('n')])
      .where('ended_at', 'is', null)
      .where('reason', '=', 'least_loaded')
      .groupBy('expert_id')
      .execute()
    expect(per.length).toBe(2)
  })

  it('/assign lists the staff as buttons; a press hands over, tells the new owner, keeps the history', async () => {
    await unassignAll(w)
    const { consultationId, route } = await consultationWithTopic(w, { language_code: 'en' })
    const first = (await owner(w, consultationId))!.expert_id
    const target = first === EVE_ID ? EXPERT_ID : EVE_ID
    const thread = route.message_thread_id
    await staffSends(w, thread, w.expert, '/assign')
    const pick = await w.tg.waitForSent(STAFF_CHAT_ID, /Кому передать/, { threadId: thread })
    const buttons = (pick.reply_markup.inline_keyboard as { text: string; callback_data: string }[][]).flat()
    expect(buttons.map((b) => b.callback_data)).toEqual([
      `ex:as:${consultationId}:${EXPERT_ID}`,
      `ex:as:${consultationId}:${EVE_ID}`,
      `ex:as:${consultationId}:${ADMIN_ID}`,
    ])
    const press = w.tg.callback(w.admin, `ex:as:${consultationId}:${target}`, pick, { chatId: STAFF_CHAT_ID })
    await w.tg.push(TEST_BOT_ID, press)
    await w.tg.waitForSent(target, new RegExp(`передал\\(а\\) вам консультацию #${consultationId}`))
    await w.tg.waitForSent(STAFF_CHAT_ID, /🔁 Ведущий: .* → /, { threadId: thread })
    // A second press for the same person (a double tap) changes nothing.
    const again = w.tg.callback(w.expert, `ex:as:${consultationId}:${target}`, pick, {
      chatId: STAFF_CHAT_ID,
    })
    await w.tg.push(TEST_BOT_ID, again)
    await w.tg.waitFor('answerCallbackQuery', {
      callback_query_id: again.callback_query!.id,
      text: 'Уже ведёт эту консультацию.',
    })
    const h = await history(w, consultationId)
    expect(h.map((r) => [r.expert_id, r.reason])).toEqual([
      [first, 'least_loaded'],
      [target, 'handover'],
    ])
    expect(h[0]!.ended_at!.getTime()).toBe(h[1]!.started_at.getTime())
    expect(h[1]).toMatchObject({ assigned_by: ADMIN_ID, ended_at: null })
    const audits = await w.deps.db
      .selectFrom('audit_log')
      .select('details')
      .where('action', '=', 'consultation.handed_over')
      .where('subject_id', '=', String(consultationId))
      .execute()
    expect(audits).toHaveLength(1)
    // A non-staff press is refused and changes nothing.
    const stranger = w.tg.user({ first_name: 'Stranger' })
    const strange = w.tg.callback(stranger, `ex:as:${consultationId}:${first}`, pick, {
      chatId: STAFF_CHAT_ID,
    })
    await w.tg.push(TEST_BOT_ID, strange)
    await w.tg.waitFor('answerCallbackQuery', {
      callback_query_id: strange.callback_query!.id,
      text: 'Это могут только сотрудники.',
    })
    expect(await history(w, consultationId)).toHaveLength(2)
    await lanesIdle(w, consultationId)
  })

  it('two staff handing the same consultation to different people at once: one after the other (15 rounds)', async () => {
    for (let round = 0; round < 15; round++) {
      const { consultationId } = await paidConsultation(w, { language_code: 'en' })
      const first = (await owner(w, consultationId))!.expert_id
      const others = [EXPERT_ID, EVE_ID, ADMIN_ID].filter((id) => id !== first)
      const pushes = others.map((to, i) =>
        w.tg.callback(i ? w.admin : w.expert!, `ex:as:${consultationId}:${to}`, undefined, {
          chatId: STAFF_CHAT_ID,
        }),
      )
      await Promise.all(pushes.map((p) => w.tg.push(TEST_BOT_ID, p)))
      for (const p of pushes)
        await w.tg.waitFor('answerCallbackQuery', { callback_query_id: p.callback_query!.id })
      const h = await history(w, consultationId)
      expect(h).toHaveLength(3)
      expect(h.filter((r) => r.ended_at === null)).toHaveLength(1)
      for (let i = 1; i < h.length; i++)
        expect(h[i - 1]!.ended_at!.getTime()).toBe(h[i]!.started_at.getTime())
      expect(new Set(h.slice(1).map((r) => r.expert_id))).toEqual(new Set(others))
    }
  })

  it('two staff taking the same consultation for the same person at once: one hand-over, one "already" (10 rounds)', async () => {
    for (let round = 0; round < 10; round++) {
      const { consultationId } = await paidConsultation(w, { language_code: 'en' })
      const first = (await owner(w, consultationId))!.expert_id
      const to = first === EVE_ID ? EXPERT_ID : EVE_ID
      const presses = [w.expert, w.admin].map((u) =>
        w.tg.callback(u, `ex:as:${consultationId}:${to}`, undefined, { chatId: STAFF_CHAT_ID }),
      )
      await Promise.all(presses.map((p) => w.tg.push(TEST_BOT_ID, p)))
      const answers = []
      for (const p of presses)
        answers.push(
          String(
            (await w.tg.waitFor('answerCallbackQuery', { callback_query_id: p.callback_query!.id })).payload
              .text,
          ),
        )
      expect(answers.filter((a) => a.startsWith('Передано'))).toHaveLength(1)
      expect(answers.filter((a) => a === 'Уже ведёт эту консультацию.')).toHaveLength(1)
      const h = await history(w, consultationId)
      expect(h.map((r) => r.expert_id)).toEqual([first, to])
    }
  })

  it('/away: no new assignments while away; /back: assignments again; the SLA reminder goes to the admins meanwhile', async () => {
    await unassignAll(w)
    const { client, consultationId } = await consultationWithTopic(w, { language_code: 'en' })
    const o = (await owner(w, consultationId))!.expert_id
    const ownerUser = o === EVE_ID ? eve : w.expert
    const other = o === EVE_ID ? EXPERT_ID : EVE_ID
    await w.tg.push(TEST_BOT_ID, w.tg.command(ownerUser, 'away'))
    await w.tg.waitForSent(o, /(вы отсутствуете|you are away)/)
    // The owner has the least load, but is away: the next ones go to the other expert.
    for (let i = 0; i < 2; i++) {
      const n = await paidConsultation(w, { language_code: 'en' })
      expect((await owner(w, n.consultationId))!.expert_id).toBe(other)
    }
    // The reminder of the away owner's consultation mentions the admins, and says the owner is away.
    await clientSends(w, client, 'Urgent')
    const reminder = await remindFirstQuestion(w, consultationId)
    expect(reminder.text).toMatch(/отсутствует/)
    expect(reminder.message.entities?.map((e) => (e as { user?: { id: number } }).user?.id)).toEqual([
      ADMIN_ID,
    ])
    await w.tg.waitForSent(ADMIN_ID, new RegExp(`Консультация #${consultationId}: ответ на вопрос №1`))

    await w.tg.push(TEST_BOT_ID, w.tg.command(ownerUser, 'back'))
    await w.tg.waitForSent(o, /(С возвращением|Welcome back)/)
    await unassignAll(w)
    // Both free again: config order / round robin decides, and the owner is among the candidates again.
    const seen = new Set<number>()
    for (let i = 0; i < 2; i++)
      seen.add((await owner(w, (await paidConsultation(w)).consultationId))!.expert_id)
    expect(seen).toEqual(new Set([EXPERT_ID, EVE_ID]))
    // A client typing /away is only a client: the unknown-command answer, nothing changes.
    const c2 = await newClient(w)
    await w.tg.push(TEST_BOT_ID, w.tg.command(c2, 'away'))
    await w.tg.waitForSent(c2.id)
    const p = await w.deps.db.selectFrom('expert_profile').selectAll().where('user_id', '=', c2.id).execute()
    expect(p).toHaveLength(0)
  })

  it('the reminder goes to the owner when present: a mention in the topic and a private message', async () => {
    await unassignAll(w)
    const { client, consultationId } = await consultationWithTopic(w, { language_code: 'en' })
    const o = (await owner(w, consultationId))!.expert_id
    await clientSends(w, client, 'Another')
    const [a] = await eventually(async () => {
      const x = await appeals(w, consultationId)
      return x.length ? x : undefined
    }, 'the appeal')
    const since = w.tg.mark()
    expect(await runReminder(w.deps, a!.id, { now: new Date(a!.due_at.getTime() - 30 * MIN) })).toBe(
      'reminded',
    )
    const reminder = await w.tg.waitForSent(STAFF_CHAT_ID, /Ответ на вопрос №1 нужен до/, { since })
    expect(reminder.text).not.toMatch(/отсутствует/)
    expect(reminder.message.entities?.map((e) => (e as { user?: { id: number } }).user?.id)).toEqual([o])
    await w.tg.waitForSent(o, new RegExp(`Консультация #${consultationId}: ответ на вопрос №1`))
  })

  it('/report shows the owners and their load', async () => {
    await paidConsultation(w)
    await paidConsultation(w)
    const since = w.tg.mark()
    await w.tg.push(TEST_BOT_ID, w.tg.groupTopicMessage(STAFF_CHAT_ID, undefined, w.admin, '/report'))
    const r = await w.tg.waitForSent(STAFF_CHAT_ID, /Ведущие/, { since })
    expect(r.text).toContain('Eve: ')
    expect(r.text).toMatch(/• (Ed|id 900002): [1-9]\d* · \d+/)
    expect(r.text).toMatch(/• Eve: [1-9]\d* · \d+/)
  })
})
