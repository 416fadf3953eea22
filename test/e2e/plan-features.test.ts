import type { User } from 'grammy/types'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { appealDueAt } from '../../src/consultations/sla'
import { runWindowClose } from '../../src/lifecycle/window.service'
import { itemPriority } from '../../src/routing/fairness'
import { PRIORITY_NORMAL, PRIORITY_QUESTION, PRIORITY_URGENT } from '../../src/telegram/budget'
import {
  appeals,
  clientSends,
  type DeskWorld,
  itemIn,
  newClient,
  startDeskWorld,
  TEST_BOT_ID,
  topicReady,
} from '../support/fixtures'
import { BASIC, plan, shiftSubscription, subscribe, withPlans } from './subscriptions-support'

/**
 * A plan's features are what its card says (issue 22, src/orders/plan-features.ts): `prioritySla` halves the SLA of
 * every question and puts a new question's first message with the urgent items of the staff group's waiting room;
 * `transcriptExport: false` refuses /transcript (and the button) with the reason, while /mydata is never gated; the
 * card says each feature in words, "not included" where it is not.
 */

const DAY = 86_400_000
const PRIO = plan({
  code: 'prio',
  priceStars: 800,
  questions: 5,
  slaBusinessHours: 4,
  features: { attachments: true, prioritySla: true, transcriptExport: true },
})
const NOEXPORT = plan({
  code: 'noexport',
  priceStars: 300,
  questions: 2,
  features: { attachments: false, prioritySla: false, transcriptExport: false },
})

let w: DeskWorld
beforeAll(async () => {
  w = await startDeskWorld({ configure: withPlans([BASIC, PRIO, NOEXPORT]) })
})
afterAll(() => w?.stop())

async function subscribed(p: typeof BASIC, lang = 'en') {
  const client = await newClient(w, { language_code: lang })
  const { sub } = await subscribe(w, client, p)
  await topicReady(w, sub.consultation_id)
  return { client, sub }
}

/** The client's first question, stored and sent to the topic; its appeal. */
async function firstQuestion(client: User, consultationId: number, text: string) {
  const m = await clientSends(w, client, text)
  const item = await itemIn(w, client.id, m.message_id, 'sent')
  const [appeal] = await appeals(w, consultationId)
  return { m, item, appeal: appeal! }
}

describe('the plan card says each feature in words', () => {
  it('the priority SLA with the usual one beside it; "not included" for what is not', async () => {
    const client = await newClient(w, { language_code: 'en' })
    const since = w.tg.mark()
    await w.tg.push(TEST_BOT_ID, w.tg.command(client, 'plan'))
    const prio = await w.tg.waitForSent(client.id, /Plan prio — 800/, { since })
    expect(prio.text).toContain(
      'Priority answers: within 2 h of business time per question (half the usual 4 h), and your questions reach the experts before others.',
    )
    const none = await w.tg.waitForSent(client.id, /Plan noexport — 300/, { since })
    expect(none.text).toContain('Photos and files: not included in this plan')
    expect(none.text).toContain('Transcript file (/transcript): not included in this plan')
    expect(none.text).toContain('/mydata sends everything we hold about you')
    expect(none.text).toContain('Answers: within 4 h of business time per question.')
    for (const card of [prio, none]) {
      expect(card.text).not.toContain('—  ')
      expect(card.text).not.toMatch(/Priority SLA|✅|·/)
    }
  })

  it('in Russian, with the plural of questions', async () => {
    const client = await newClient(w, { language_code: 'ru' })
    const since = w.tg.mark()
    await w.tg.push(TEST_BOT_ID, w.tg.command(client, 'plan'))
    const prio = await w.tg.waitForSent(client.id, /План prio — 800/, { since })
    expect(prio.text).toContain('Включено: 5 вопросов за период.')
    expect(prio.text).toContain('Приоритетный ответ: в течение 2 ч рабочего времени')
    const basic = await w.tg.waitForSent(client.id, /План basic — 500/, { since })
    expect(basic.text).toContain('Включено: 3 вопроса за период.')
    const none = await w.tg.waitForSent(client.id, /План noexport — 300/, { since })
    expect(none.text).toContain('Файл с перепиской (/transcript): в этот план не входит.')
  })
})

describe('prioritySla', () => {
  it("halves the question's SLA (stored on the question, in the receipt) and ranks its first message urgent", async () => {
    const { client, sub } = await subscribed(PRIO)
    const { m, item, appeal } = await firstQuestion(client, sub.consultation_id, 'The build fails on CI.')
    expect(appeal.sla_minutes).toBe(120)
    expect(appeal.due_at.getTime()).toBe(appealDueAt(w.t.desk, appeal.accepted_at, 120).getTime())
    const receipt = await w.tg.waitForSent(client.id, /Question #1 accepted/)
    expect(receipt.text).toContain('(2 h of business time)')
    expect(await itemPriority(w.deps.db, w.t.desk, item)).toBe(PRIORITY_URGENT)
    // A clarification of the same question keeps its normal place.
    const more = await clientSends(w, client, 'Only on the arm64 runner.')
    const moreItem = await itemIn(w, client.id, more.message_id, 'sent')
    expect(await itemPriority(w.deps.db, w.t.desk, moreItem)).toBe(PRIORITY_NORMAL)
    expect(m.message_id).toBeLessThan(more.message_id)
  })

  it('a plan without it: the plan’s own SLA and the ordinary place of a new question', async () => {
    const { client, sub } = await subscribed(BASIC)
    const { item, appeal } = await firstQuestion(client, sub.consultation_id, 'How do I export a report?')
    expect(appeal.sla_minutes).toBe(240)
    expect(appeal.due_at.getTime()).toBe(appealDueAt(w.t.desk, appeal.accepted_at, 240).getTime())
    expect(await itemPriority(w.deps.db, w.t.desk, item)).toBe(PRIORITY_QUESTION)
  })
})

describe('transcriptExport', () => {
  /** The plan's period (and its window) moved into the past, and the window's close job run now. */
  async function ended(p: typeof BASIC) {
    const s = await subscribed(p)
    await shiftSubscription(w, s.sub.id, 32 * DAY)
    const c = await w.deps.db
      .selectFrom('consultation')
      .select('access_until')
      .where('id', '=', s.sub.consultation_id)
      .executeTakeFirstOrThrow()
    const since = w.tg.mark()
    expect(
      await runWindowClose(w.deps, {
        consultationId: s.sub.consultation_id,
        accessUntil: c.access_until!.toISOString(),
      }),
    ).toBe('closed')
    const closed = await w.tg.waitForSent(s.client.id, /has ended|ended/, { since })
    return { ...s, closed }
  }

  it('not included: /transcript and its button are refused with the reason, no file; /mydata still sends one', async () => {
    const { client, sub, closed } = await ended(NOEXPORT)
    expect(JSON.stringify(closed.reply_markup ?? {})).not.toContain('tr:get:')
    const since = w.tg.mark()
    await w.tg.push(TEST_BOT_ID, w.tg.command(client, 'transcript'))
    const refusal = await w.tg.waitForSent(client.id, /not included in your plan “Plan noexport”/, { since })
    expect(refusal.text).toContain('/mydata')
    await w.tg.push(TEST_BOT_ID, w.tg.callback(client, `tr:get:${sub.consultation_id}`))
    await w.tg.waitFor(
      'answerCallbackQuery',
      (p) => /not included in your plan/.test(String(p.text ?? '')) && p.show_alert === true,
      { since },
    )
    // /mydata is the client's right to their data: never gated by a plan.
    await w.tg.push(TEST_BOT_ID, w.tg.command(client, 'mydata'))
    await w.tg.waitFor('sendDocument', { chat_id: client.id }, { since })
    expect(w.tg.callsTo('sendDocument', { chat_id: client.id }, { since })).toHaveLength(1)
    const jobs = await w.deps.db
      .selectFrom('outbound_message')
      .select('key')
      .where('key', 'like', `transcript:${sub.consultation_id}:%`)
      .execute()
    expect(jobs).toHaveLength(0)
  })

  it('included: the button is offered and /transcript sends the file', async () => {
    const { client, closed } = await ended(BASIC)
    expect(JSON.stringify(closed.reply_markup ?? {})).toContain('tr:get:')
    const since = w.tg.mark()
    await w.tg.push(TEST_BOT_ID, w.tg.command(client, 'transcript'))
    await w.tg.waitFor('sendDocument', { chat_id: client.id }, { since })
  })
})
