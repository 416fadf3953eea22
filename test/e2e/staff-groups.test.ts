import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startBotApi } from '../support/bot-api'
import {
  ADMIN_ID,
  activeConsultation,
  clientSends,
  type DeskWorld,
  EXPERT_ID,
  eventually,
  itemIn,
  lanesIdle,
  newClient,
  paidConsultation,
  STAFF_CHAT_ID,
  startDeskWorld,
  TEST_BOT_ID,
  topicReady,
} from '../support/fixtures'

/**
 * Several staff groups per desk (issue 16): the home group (STAFF_CHAT_ID) lists Ed, group B lists Eve. A new
 * consultation goes to its owner's group; its topic, card, copies and answers live there; an expert of the other
 * group cannot answer it (told so, nothing reaches the client); /assign offers the group's people only; /report in
 * group B counts B alone, in the home group the whole desk with each group's load.
 */

const EVE_ID = 900003
const GROUP_B = -1009000000777

describe('several staff groups', () => {
  let w: DeskWorld
  let eve: ReturnType<DeskWorld['tg']['user']>

  beforeAll(async () => {
    const tg = await startBotApi({ defaultWaitTimeoutMs: 15_000 })
    tg.forum({ id: GROUP_B, title: 'Staff B' })
    w = await startDeskWorld({
      tg,
      configure: (c) => {
        const d = c.desks[0]!
        d.staff.experts = [EXPERT_ID, EVE_ID]
        d.staffGroups = [
          { chatId: STAFF_CHAT_ID, experts: [EXPERT_ID] },
          { chatId: GROUP_B, experts: [EVE_ID] },
        ]
        d.expertSettings.names = { [String(EVE_ID)]: 'Eve' }
        d.tariffs.push({ ...d.tariffs[0]!, code: 'eve', expert: EVE_ID })
        d.tariffs.push({ ...d.tariffs[0]!, code: 'ed', expert: EXPERT_ID })
      },
    })
    eve = w.tg.user({ id: EVE_ID, first_name: 'Eve', language_code: 'en' })
  })
  afterAll(() => w?.stop())

  const groupOf = async (id: number) =>
    (
      await w.deps.db
        .selectFrom('consultation')
        .select('staff_chat_id')
        .where('id', '=', id)
        .executeTakeFirstOrThrow()
    ).staff_chat_id

  it("the owner's group: topic, pinned card, copies and answers there; the other group's expert is refused", async () => {
    const c = await paidConsultation(w, { language_code: 'en' }, { tariff: 'eve' })
    expect(await groupOf(c.consultationId)).toBe(GROUP_B)
    const route = await topicReady(w, c.consultationId)
    expect(route.support_chat_id).toBe(GROUP_B)
    const thread = route.message_thread_id
    expect(w.tg.callsTo('createForumTopic', { chat_id: GROUP_B }, { ok: true })).toHaveLength(1)
    expect(w.tg.callsTo('createForumTopic', { chat_id: STAFF_CHAT_ID })).toHaveLength(0)
    await w.tg.waitFor('pinChatMessage', { chat_id: GROUP_B, message_id: route.card_message_id! })

    const q = await clientSends(w, c.client, 'Which index for this query?')
    await w.tg.waitFor(
      'copyMessage',
      { chat_id: GROUP_B, from_chat_id: c.client.id, message_id: q.message_id, message_thread_id: thread },
      { ok: true },
    )
    await itemIn(w, c.client.id, q.message_id, 'sent')

    // Ed is staff of the desk but not of group B: nothing reaches the client, and he is told so in the topic.
    const edSays = w.tg.groupTopicMessage(GROUP_B, thread, w.expert, 'A btree on (a, b).')
    await w.tg.push(TEST_BOT_ID, edSays)
    await w.tg.waitForSent(GROUP_B, /Not sent to the client|Клиенту не отправлено/, { threadId: thread })
    // The same update again (Telegram delivers at least once): still one refusal.
    await w.tg.push(TEST_BOT_ID, edSays)
    // Eve (group B) answers: copied to the client; the admin may act in every group.
    const eveSays = w.tg.groupTopicMessage(GROUP_B, thread, eve, 'A btree on (a, b), then ANALYZE.')
    await w.tg.push(TEST_BOT_ID, eveSays)
    await w.tg.waitFor(
      'copyMessage',
      { chat_id: c.client.id, from_chat_id: GROUP_B, message_id: eveSays.message!.message_id },
      { ok: true },
    )
    const adaSays = w.tg.groupTopicMessage(GROUP_B, thread, w.admin, 'Admin here: also check the plan.')
    await w.tg.push(TEST_BOT_ID, adaSays)
    await w.tg.waitFor(
      'copyMessage',
      { chat_id: c.client.id, from_chat_id: GROUP_B, message_id: adaSays.message!.message_id },
      { ok: true },
    )
    await lanesIdle(w, c.consultationId)
    expect(
      w.tg.callsTo('copyMessage', {
        chat_id: c.client.id,
        from_chat_id: GROUP_B,
        message_id: edSays.message!.message_id,
      }),
    ).toHaveLength(0)
    expect(
      w.tg
        .sentTo(GROUP_B, { threadId: thread })
        .filter((m) => /Not sent to the client|Клиенту не отправлено/.test(m.text ?? '')),
    ).toHaveLength(1)
    const appeal = await w.deps.db
      .selectFrom('desk_appeal')
      .select(['state', 'answered_by'])
      .where('consultation_id', '=', c.consultationId)
      .executeTakeFirstOrThrow()
    expect(appeal).toEqual({ state: 'answered', answered_by: EVE_ID })
  })

  it("without a named expert: the least loaded expert, and the topic goes to that expert's group", async () => {
    await w.deps.db
      .updateTable('consultation')
      .set({ state: 'closed' })
      .where('state', '=', 'active')
      .execute()
    const seen: [number, number | null][] = []
    for (let i = 0; i < 4; i++) {
      const c = await paidConsultation(w, { language_code: 'en' })
      const o = await w.deps.db
        .selectFrom('expert_assignment')
        .select('expert_id')
        .where('consultation_id', '=', c.consultationId)
        .where('ended_at', 'is', null)
        .executeTakeFirstOrThrow()
      seen.push([o.expert_id, await groupOf(c.consultationId)])
    }
    for (const [owner, group] of seen) expect(group).toBe(owner === EVE_ID ? GROUP_B : STAFF_CHAT_ID)
    expect(seen.filter(([o]) => o === EVE_ID)).toHaveLength(2)
  })

  it('nobody available: the least loaded group; two activations at once take one group each (20 rounds)', async () => {
    await w.deps.db
      .updateTable('consultation')
      .set({ state: 'closed' })
      .where('state', '=', 'active')
      .execute()
    const away = (on: boolean) =>
      w.deps.db
        .insertInto('expert_profile')
        .values(
          [EXPERT_ID, EVE_ID].map((id) => ({
            bot_id: TEST_BOT_ID,
            user_id: id,
            away_since: on ? new Date() : null,
          })),
        )
        .onConflict((oc) =>
          oc.columns(['bot_id', 'user_id']).doUpdateSet({ away_since: on ? new Date() : null }),
        )
        .execute()
    await away(true)
    try {
      for (let round = 0; round < 20; round++) {
        const [x, y] = await Promise.all([newClient(w), newClient(w)])
        const [cx, cy] = await Promise.all([activeConsultation(w, x!), activeConsultation(w, y!)])
        const groups = [await groupOf(cx.consultationId), await groupOf(cy.consultationId)]
        expect(new Set(groups)).toEqual(new Set([STAFF_CHAT_ID, GROUP_B]))
      }
      const owned = await w.deps.db
        .selectFrom('expert_assignment')
        .innerJoin('consultation', 'consultation.id', 'expert_assignment.consultation_id')
        .where('consultation.state', '=', 'active')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
      expect(Number(owned.n)).toBe(0)
    } finally {
      await away(false)
    }
  })

  it('/assign in a group offers its experts and the admins; handing over to the other group is refused', async () => {
    const c = await paidConsultation(w, { language_code: 'en' }, { tariff: 'eve' })
    const route = await topicReady(w, c.consultationId)
    const since = w.tg.mark()
    await w.tg.push(TEST_BOT_ID, w.tg.groupTopicMessage(GROUP_B, route.message_thread_id, w.admin, '/assign'))
    const pick = await w.tg.waitForSent(GROUP_B, (m) => !!m.reply_markup, {
      threadId: route.message_thread_id,
      since,
    })
    const data = (pick.reply_markup?.inline_keyboard ?? [])
      .flat()
      .map((b: { callback_data?: string }) => ('callback_data' in b ? b.callback_data : ''))
    expect(data).toEqual([`ex:as:${c.consultationId}:${EVE_ID}`, `ex:as:${c.consultationId}:${ADMIN_ID}`])
    // A crafted press for Ed (group A) changes nothing.
    const press = w.tg.callback(w.admin, `ex:as:${c.consultationId}:${EXPERT_ID}`, pick, { chatId: GROUP_B })
    await w.tg.push(TEST_BOT_ID, press)
    const answered = await w.tg.waitFor('answerCallbackQuery', {
      callback_query_id: press.callback_query!.id,
    })
    expect(answered.payload.text).toMatch(/нет среди экспертов этой группы/)
    const owners = await w.deps.db
      .selectFrom('expert_assignment')
      .select('expert_id')
      .where('consultation_id', '=', c.consultationId)
      .execute()
    expect(owners.map((o) => o.expert_id)).toEqual([EVE_ID])
  })

  it("/report in group B counts its consultations only; in the home group the whole desk and each group's load", async () => {
    const since = w.tg.mark()
    await w.tg.push(TEST_BOT_ID, w.tg.groupTopicMessage(GROUP_B, undefined, w.admin, '/report'))
    const inB = await w.tg.waitForSent(GROUP_B, /📊 Отчёт/, { since })
    await w.tg.push(TEST_BOT_ID, w.tg.groupTopicMessage(STAFF_CHAT_ID, undefined, w.admin, '/report'))
    const inHome = await w.tg.waitForSent(STAFF_CHAT_ID, /📊 Отчёт/, { since })
    const count = async (group?: number) =>
      Number(
        (
          await w.deps.db
            .selectFrom('consultation')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .$if(group !== undefined, (q) => q.where('staff_chat_id', '=', group!))
            .executeTakeFirstOrThrow()
        ).n,
      )
    const stateTotal = (text: string) =>
      [...(/📦[^\n]*: ([^\n]*)/.exec(text)?.[1] ?? '').matchAll(/(\d+)/g)].reduce(
        (s, m) => s + Number(m[1]),
        0,
      )
    expect(inB.text).toContain(`Только эта группа сотрудников (${GROUP_B})`)
    expect(stateTotal(inB.text!)).toBe(await count(GROUP_B))
    expect(stateTotal(inHome.text!)).toBe(await count())
    expect(await count(GROUP_B)).toBeLessThan(await count())
    const live = await w.deps.db
      .selectFrom('consultation')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('state', '=', 'active')
      .where('staff_chat_id', '=', GROUP_B)
      .executeTakeFirstOrThrow()
    expect(inHome.text).toMatch(new RegExp(`Группы сотрудников сейчас:[\\s\\S]*• ${GROUP_B}: ${live.n} `))
    // An expert of group B is not an admin: refused there as before.
    await w.tg.push(TEST_BOT_ID, w.tg.groupTopicMessage(GROUP_B, undefined, eve, '/report'))
    await eventually(
      async () => w.tg.sentTo(GROUP_B, { since }).some((m) => m !== inB && !/📊/.test(m.text ?? '')),
      'the refusal',
    )
  })
})
