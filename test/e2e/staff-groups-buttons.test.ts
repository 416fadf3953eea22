import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startBotApi } from '../support/bot-api'
import {
  ADMIN_ID,
  consultationWithQuestion,
  type DraftWorld,
  drafts,
  EXPERT_ID,
  STAFF_CHAT_ID,
  startDraftWorld,
} from '../support/drafting'
import { owner } from '../support/experts'
import { appeals, eventually, lanesIdle, staffSends, TEST_BOT_ID } from '../support/fixtures'

/**
 * Buttons name a consultation (or its draft); whoever presses one is judged in that consultation's own staff group,
 * never in the chat where the button was pressed (issue 23). Ed is listed for the home group (A), Eve for group B
 * only; each forges the other group's buttons in their own group: refused with a clear pop-up, nothing changes.
 */

const EVE_ID = 900003
const GROUP_B = -1009000000777
const REFUSED_RU =
  'Эта консультация ведётся в другой группе сотрудников, где вас нет среди экспертов: ничего не сделано. Действовать могут эксперты её группы или администратор.'
const REFUSED_EN =
  "This consultation is handled in another staff group, where you are not one of the experts: nothing was done. Its own group's experts or an admin can act on it."

describe('staff buttons are judged in the consultation’s own group', () => {
  let w: DraftWorld
  let eve: ReturnType<DraftWorld['tg']['user']>

  beforeAll(async () => {
    const tg = await startBotApi({ defaultWaitTimeoutMs: 15_000 })
    tg.forum({ id: GROUP_B, title: 'Staff B' })
    w = await startDraftWorld({
      tg,
      configure: (c) => {
        const d = c.desks[0]!
        d.staff.experts = [EXPERT_ID, EVE_ID]
        d.staffGroups = [
          { chatId: STAFF_CHAT_ID, experts: [EXPERT_ID] },
          { chatId: GROUP_B, experts: [EVE_ID] },
        ]
        d.tariffs.push({ ...d.tariffs[0]!, code: 'eve', expert: EVE_ID })
        d.tariffs.push({ ...d.tariffs[0]!, code: 'ed', expert: EXPERT_ID })
      },
    })
    eve = w.tg.user({ id: EVE_ID, first_name: 'Eve', language_code: 'en' })
  })
  afterAll(() => w?.stop())

  /** A button pressed in `chatId` (on the bot's latest message there): the answerCallbackQuery it got. */
  async function forge(user: ReturnType<DraftWorld['tg']['user']>, data: string, chatId: number) {
    const u = w.tg.callback(user, data, undefined, { chatId })
    await w.tg.push(TEST_BOT_ID, u)
    return (await w.tg.waitFor('answerCallbackQuery', { callback_query_id: u.callback_query!.id })).payload
  }

  const consultation = (id: number) =>
    w.deps.db
      .selectFrom('consultation')
      .select(['state', 'staff_chat_id'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow()
  const ownerOf = async (id: number) => (await owner(w, id))?.expert_id

  it('an expert of group B forging group A’s buttons in B: no draft, no send, no edit, no discard, no close, no hand-over', async () => {
    const { client, consultationId, thread } = await consultationWithQuestion(
      w,
      'Which index for this query?',
      {
        tariff: 'ed',
      },
    )
    expect((await consultation(consultationId)).staff_chat_id).toBe(STAFF_CHAT_ID)
    const ownerBefore = await ownerOf(consultationId)

    // dr:new: no draft is created, nothing is reserved.
    const n = await forge(eve, `dr:new:${consultationId}`, GROUP_B)
    expect(n).toMatchObject({ text: REFUSED_RU, show_alert: true })
    expect(await drafts(w, consultationId)).toHaveLength(0)

    // Ed drafts in A (his group): a ready draft with its buttons.
    w.ai.script({ kind: 'ok', content: 'GROUP-A-DRAFT: add a partial index.' })
    await staffSends(w, thread, w.expert!, '/draft')
    const d = await eventually(
      async () => (await drafts(w, consultationId)).find((x) => x.state === 'ready'),
      'a draft',
    )

    for (const op of ['s', 'e', 'd']) {
      const r = await forge(eve, `dr:${op}:${d.id}:1`, GROUP_B)
      expect(r, `dr:${op}`).toMatchObject({ text: REFUSED_RU, show_alert: true })
    }
    expect((await drafts(w, consultationId))[0]).toMatchObject({
      state: 'ready',
      version: 1,
      approved_by: null,
      editing_by: null,
    })
    expect((await appeals(w, consultationId))[0]).toMatchObject({ state: 'open', answered_by: null })

    const close = await forge(eve, `desk:close:${consultationId}:yes`, GROUP_B)
    expect(close).toMatchObject({ text: REFUSED_EN, show_alert: true })
    expect((await consultation(consultationId)).state).toBe('active')

    const assign = await forge(eve, `ex:as:${consultationId}:${ADMIN_ID}`, GROUP_B)
    expect(assign).toMatchObject({ text: REFUSED_RU, show_alert: true })
    expect(await ownerOf(consultationId)).toBe(ownerBefore)

    await lanesIdle(w, consultationId)
    expect(w.tg.sentTo(client.id).some((m) => m.text?.includes('GROUP-A-DRAFT'))).toBe(false)

    // The same buttons still work for the group's own expert.
    const sent = await forge(w.expert!, `dr:s:${d.id}:1`, STAFF_CHAT_ID)
    expect(sent.text).toBe('Отправлено клиенту.')
    await w.tg.waitForSent(client.id, 'GROUP-A-DRAFT: add a partial index.')
    expect((await appeals(w, consultationId))[0]).toMatchObject({ state: 'answered', answered_by: EXPERT_ID })
  })

  it('the other way round: the home group’s expert forging group B’s buttons in A is refused too', async () => {
    const { consultationId } = await consultationWithQuestion(w, 'Is my schema fine?', { tariff: 'eve' })
    expect((await consultation(consultationId)).staff_chat_id).toBe(GROUP_B)
    const n = await forge(w.expert!, `dr:new:${consultationId}`, STAFF_CHAT_ID)
    expect(n).toMatchObject({ text: REFUSED_RU, show_alert: true })
    expect(await drafts(w, consultationId)).toHaveLength(0)
    const close = await forge(w.expert!, `desk:close:${consultationId}:yes`, STAFF_CHAT_ID)
    expect(close).toMatchObject({ show_alert: true })
    expect(close.text).toMatch(/другой группе|another staff group/)
    expect((await consultation(consultationId)).state).toBe('active')
  })
})
