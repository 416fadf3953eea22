import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { itemPriority } from '../../src/routing/fairness'
import { PRIORITY_NORMAL, PRIORITY_QUESTION, PRIORITY_URGENT } from '../../src/telegram/budget'
import {
  clientSends,
  consultationWithTopic,
  type DeskWorld,
  itemIn,
  items,
  staffSends,
  startDeskWorld,
} from '../support/fixtures'

/**
 * Which items go first within a staff group's budget (src/routing/fairness.ts), on items the desk stored through
 * the real flow. The waiting room's order itself is test/integration/telegram-budget.test.ts's; the flood from
 * outside is test/e2e/telegram-fairness.test.ts's, where on a loaded machine the app's own latency hides the
 * priorities, so they are pinned here.
 */
describe('priorities within the group budget', () => {
  let w: DeskWorld
  beforeAll(async () => {
    w = await startDeskWorld()
  })
  afterAll(() => w?.stop())

  it('SLA alerts are urgent, a new question comes next; clarifications, answers and notes after them', async () => {
    const { client, consultationId, route } = await consultationWithTopic(w)
    const q1 = await clientSends(w, client, 'How do I rotate the key?')
    await itemIn(w, client.id, q1.message_id, 'sent')
    const more = await clientSends(w, client, 'It is the signing key, not the API key.')
    await itemIn(w, client.id, more.message_id, 'sent')
    const answer = await staffSends(
      w,
      route.message_thread_id,
      w.expert,
      'Rotate it in the console, then redeploy.',
    )
    await itemIn(w, answer.message.chat.id, answer.message.message_id, 'sent')
    const q2 = await clientSends(w, client, 'And the old signatures?')
    await itemIn(w, client.id, q2.message_id, 'sent')

    const all = await items(w, consultationId)
    const of = (m: { chat: { id: number }; message_id: number }) =>
      all.find((i) => i.chat_id === m.chat.id && i.message_id === m.message_id)!
    const priorities = {
      firstQuestion: await itemPriority(w.deps.db, w.t.desk, of(q1)),
      clarification: await itemPriority(w.deps.db, w.t.desk, of(more)),
      answer: await itemPriority(w.deps.db, w.t.desk, of(answer.message)),
      questionAfterAnswer: await itemPriority(w.deps.db, w.t.desk, of(q2)),
      slaAlert: await itemPriority(w.deps.db, w.t.desk, {
        ...of(more),
        kind: 'note',
        dedupe_key: 'sla:1:reminder',
      }),
      note: await itemPriority(w.deps.db, w.t.desk, { ...of(more), kind: 'note', chat_id: null }),
    }
    expect(priorities).toEqual({
      firstQuestion: PRIORITY_QUESTION,
      clarification: PRIORITY_NORMAL,
      answer: PRIORITY_NORMAL,
      questionAfterAnswer: PRIORITY_QUESTION,
      slaAlert: PRIORITY_URGENT,
      note: PRIORITY_NORMAL,
    })
    expect(PRIORITY_URGENT).toBeLessThan(PRIORITY_QUESTION)
    expect(PRIORITY_QUESTION).toBeLessThan(PRIORITY_NORMAL)
  })
})
