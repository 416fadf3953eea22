import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkInvariants } from '../../src/ledger/ledger.invariants'
import type { SentMessage } from '../support/bot-api'
import {
  consultationWithQuestion,
  type DraftWorld,
  draftIn,
  drafts,
  draftsAccount,
  LLM_KEY,
  MODEL,
  STAFF_CHAT_ID,
  startDraftWorld,
  topicTexts,
} from '../support/drafting'
import { appeals, eventually, lanesIdle, staffSends, TEST_BOT_ID } from '../support/fixtures'

/**
 * AI drafts end to end: the real app, Telegram played by the Bot API stand-in and the provider by a fake
 * OpenAI-compatible server, both over HTTP; real PostgreSQL. Staff texts are in the desk's language (ru).
 */

/** The bot's message in the topic carrying a draft's buttons (version v). */
function draftMessage(w: DraftWorld, thread: number, draftId: number, v = 1): Promise<SentMessage> {
  return w.tg.waitForSent(
    STAFF_CHAT_ID,
    (m) =>
      (m.reply_markup?.inline_keyboard ?? []).some((row: { callback_data?: string }[]) =>
        row.some((b) => b.callback_data === `dr:s:${draftId}:${v}`),
      ),
    { threadId: thread },
  )
}

function firstDraft(w: DraftWorld, consultationId: number) {
  return eventually(async () => {
    const list = await drafts(w, consultationId)
    return list.length > 0 ? list : undefined
  }, 'a draft')
}

async function press(w: DraftWorld, user: DraftWorld['expert'], data: string, on: SentMessage) {
  const u = w.tg.callback(user, data, on, { chatId: STAFF_CHAT_ID })
  await w.tg.push(TEST_BOT_ID, u)
  return w.tg.waitFor('answerCallbackQuery', { callback_query_id: u.callback_query!.id })
}

describe('drafting: /draft, buttons, edit', () => {
  let w: DraftWorld
  beforeAll(async () => {
    w = await startDraftWorld({ captureLogs: true })
  })
  afterAll(() => w?.stop())

  it('/draft -> ack with numbers -> draft posted with buttons -> Send -> the client receives it as the expert’s answer', async () => {
    // Another client's consultation exists with a distinctive question: it must never reach this prompt.
    await consultationWithQuestion(w, 'OTHER-CLIENT-SECRET: my staging password is hunter2', {
      client: { first_name: 'Olga', username: 'olga_other' },
    })
    const { client, consultationId, thread } = await consultationWithQuestion(
      w,
      'How do I verify the Stripe webhook signature in Node?',
      { client: { first_name: 'Anna', username: 'anna_dev' } },
    )
    w.ai.script({
      kind: 'ok',
      usage: { prompt: 300, completion: 60 },
      content: 'Use stripe.webhooks.constructEvent.',
    })

    await staffSends(w, thread, w.expert, '/draft shorter, with a code example')
    const ack = await w.tg.waitForSent(STAFF_CHAT_ID, /Готовлю черновик #\d+/, { threadId: thread })
    expect(ack.text).toMatch(/осталось 4 из 5 черновиков/)
    const [d0] = await drafts(w, consultationId)
    const bound = /до ([\d\s\u00a0]+) токенов/.exec(ack.text ?? '')?.[1]?.replace(/\D/g, '')
    expect(Number(bound)).toBe(d0!.est_input_tokens! + 400)

    const posted = await draftMessage(w, thread, d0!.id)
    expect(posted.text).toContain('Use stripe.webhooks.constructEvent.')
    expect(posted.text).toMatch(/300 \+ 60 токенов/)
    const labels = posted.reply_markup.inline_keyboard
      .flat()
      .map((b: { callback_data: string }) => b.callback_data)
    expect(labels).toEqual([`dr:s:${d0!.id}:1`, `dr:e:${d0!.id}:1`, `dr:d:${d0!.id}:1`])
    // Nothing reached the client yet.
    expect(w.tg.sentTo(client.id).some((m) => m.text?.includes('constructEvent'))).toBe(false)

    // The provider saw the key in the Authorization header, max_tokens as priced, and only this consultation.
    const [req] = w.ai.requests.slice(-1)
    expect(req!.headers.authorization).toBe(`Bearer ${LLM_KEY}`)
    expect(req!.body.model).toBe(MODEL)
    expect(req!.body.max_tokens).toBe(400)
    expect(req!.headers['idempotency-key']).toBe(d0!.request_id)
    const prompt = req!.raw
    expect(prompt).toContain('How do I verify the Stripe webhook signature in Node?')
    expect(prompt).toContain('shorter, with a code example')
    expect(prompt).toContain('DESK-INSTRUCTIONS-MARK')
    expect(prompt).toContain('Quick review')
    for (const forbidden of [
      'OTHER-CLIENT-SECRET',
      'hunter2',
      'Olga',
      'olga_other',
      'Anna',
      'anna_dev',
      String(client.id),
      'XTR',
      'charge',
      LLM_KEY,
    ])
      expect(prompt).not.toContain(forbidden)

    const answered = await press(w, w.expert, `dr:s:${d0!.id}:1`, posted)
    expect(answered.payload.text).toBe('Отправлено клиенту.')
    const toClient = await w.tg.waitForSent(client.id, 'Use stripe.webhooks.constructEvent.')
    expect(toClient.method).toBe('sendMessage')
    await w.tg.waitFor('editMessageReplyMarkup', { chat_id: STAFF_CHAT_ID, message_id: posted.message_id })

    const [a] = await appeals(w, consultationId)
    expect(a).toMatchObject({ state: 'answered', answered_by: w.expert.id })
    expect(a!.first_response_at).not.toBeNull()
    const [d] = await drafts(w, consultationId)
    expect(d).toMatchObject({ state: 'sent', approved_by: w.expert.id, requested_by: w.expert.id })
    const item = await w.deps.db
      .selectFrom('desk_message')
      .selectAll()
      .where('id', '=', d!.sent_item_id!)
      .executeTakeFirstOrThrow()
    expect(item).toMatchObject({ direction: 'out', kind: 'text', from_id: w.expert.id, appeal_id: a!.id })
    const audit = await w.deps.db
      .selectFrom('audit_log')
      .selectAll()
      .where('action', '=', 'draft.sent')
      .where('subject_id', '=', String(d!.id))
      .executeTakeFirstOrThrow()
    expect(audit.details).toMatchObject({ approvedBy: w.expert.id, itemId: item.id, appealId: a!.id })

    // A second tap on Send: nothing more reaches the client.
    const again = await press(w, w.expert, `dr:s:${d0!.id}:1`, posted)
    expect(again.payload.text).toBe('Этот черновик уже отправлен.')
    await lanesIdle(w, consultationId)
    expect(w.tg.sentTo(client.id).filter((m) => m.text?.includes('constructEvent'))).toHaveLength(1)
    expect((await draftsAccount(w, consultationId)).used).toBe(1)
    expect((await checkInvariants(w.deps.db)).violations).toEqual([])
  })

  it('Discard: nothing reaches the client, the buttons go, the draft unit stays spent', async () => {
    const { client, consultationId, thread } = await consultationWithQuestion(w)
    w.ai.script({ kind: 'ok', content: 'DISCARDED-DRAFT-TEXT' })
    await staffSends(w, thread, w.expert, '/draft')
    const [d0] = await firstDraft(w, consultationId)
    const posted = await draftMessage(w, thread, d0!.id)
    const r = await press(w, w.expert, `dr:d:${d0!.id}:1`, posted)
    expect(r.payload.text).toBe('Отброшено.')
    await w.tg.waitFor('editMessageReplyMarkup', { chat_id: STAFF_CHAT_ID, message_id: posted.message_id })
    const late = await press(w, w.expert, `dr:s:${d0!.id}:1`, posted)
    expect(late.payload.text).toBe('Этот черновик отброшен.')
    await lanesIdle(w, consultationId)
    expect(w.tg.sentTo(client.id).some((m) => m.text?.includes('DISCARDED-DRAFT-TEXT'))).toBe(false)
    expect((await drafts(w, consultationId))[0]).toMatchObject({
      state: 'discarded',
      discarded_by: w.expert.id,
    })
    expect((await appeals(w, consultationId))[0]!.state).toBe('open')
  })

  it('Edit: the expert’s next text becomes version 2 (not relayed); the old version’s Send is stale; v2 is sent', async () => {
    const { client, consultationId, thread } = await consultationWithQuestion(w)
    w.ai.script({ kind: 'ok', content: 'First version of the draft.' })
    await staffSends(w, thread, w.expert, '/draft')
    const [d0] = await firstDraft(w, consultationId)
    const v1 = await draftMessage(w, thread, d0!.id)

    const e = await press(w, w.expert, `dr:e:${d0!.id}:1`, v1)
    expect(e.payload.text).toMatch(/исправленный текст/)
    await w.tg.waitForSent(STAFF_CHAT_ID, /Черновик #\d+: пришлите исправленный текст/, { threadId: thread })

    const edit = await w.tg.push(
      TEST_BOT_ID,
      w.tg.groupTopicMessage(
        STAFF_CHAT_ID,
        thread,
        w.expert,
        'EDITED: use constructEvent with the raw body.',
      ),
    )
    const v2 = await draftMessage(w, thread, d0!.id, 2)
    expect(v2.text).toContain('EDITED: use constructEvent with the raw body.')
    expect(v2.text).toMatch(/версия 2/)
    // A redelivery of the edit message is still not relayed.
    await w.tg.redeliver(TEST_BOT_ID, edit)

    const stale = await press(w, w.expert, `dr:s:${d0!.id}:1`, v1)
    expect(stale.payload.text).toBe('Это старая версия: используйте версию 2.')
    await press(w, w.expert, `dr:s:${d0!.id}:2`, v2)
    await w.tg.waitForSent(client.id, 'EDITED: use constructEvent with the raw body.')
    await lanesIdle(w, consultationId)
    // Exactly one message to the client: the approved version; the expert's edit message itself was not copied.
    expect(
      w.tg.callsTo('copyMessage', { chat_id: client.id, message_id: edit.update.message!.message_id }),
    ).toHaveLength(0)
    expect(w.tg.sentTo(client.id).filter((m) => m.text?.includes('EDITED'))).toHaveLength(1)
    expect((await drafts(w, consultationId))[0]).toMatchObject({
      state: 'sent',
      version: 2,
      approved_by: w.expert.id,
    })
    const edits = await w.deps.db
      .selectFrom('draft_edit')
      .selectAll()
      .where('draft_id', '=', d0!.id)
      .execute()
    expect(edits).toHaveLength(1)
  })

  it('non-staff /draft is ignored; a redelivered /draft update does nothing new', async () => {
    const { consultationId, thread } = await consultationWithQuestion(w)
    const before = w.ai.requests.length
    const outsider = w.tg.user({ first_name: 'Guest' })
    await staffSends(w, thread, outsider, '/draft')

    const push = await w.tg.push(
      TEST_BOT_ID,
      w.tg.groupTopicMessage(STAFF_CHAT_ID, thread, w.expert, '/draft'),
    )
    const [d0] = await firstDraft(w, consultationId)
    await draftIn(w, d0!.id, ['ready'])
    await w.tg.redeliver(TEST_BOT_ID, push)
    await w.tg.redeliver(TEST_BOT_ID, push)
    await lanesIdle(w, consultationId)
    const all = await drafts(w, consultationId)
    expect(all).toHaveLength(1)
    expect(all[0]!.requested_by).toBe(w.expert.id)
    expect(w.ai.requests.length - before).toBe(1)
    expect(topicTexts(w, thread).filter((t) => /Готовлю черновик/.test(t))).toHaveLength(1)
    expect((await draftsAccount(w, consultationId)).used).toBe(1)
  })

  it('provider 500 -> released, the expert is told nothing was charged; a double tap on "Try again" drafts once', async () => {
    const { consultationId, thread } = await consultationWithQuestion(w)
    w.ai.script({ kind: 'error', status: 500, message: 'upstream exploded' })
    await staffSends(w, thread, w.expert, '/draft')
    const failed = await w.tg.waitForSent(STAFF_CHAT_ID, /не получился: provider error 500/, {
      threadId: thread,
    })
    expect(failed.text).toMatch(/Ничего не списано/)
    const [d0] = await drafts(w, consultationId)
    expect(d0!.state).toBe('failed')
    expect(
      (
        await w.deps.db
          .selectFrom('ledger_reservation')
          .select('state')
          .where('request_id', '=', d0!.request_id)
          .executeTakeFirstOrThrow()
      ).state,
    ).toBe('released')
    const acc = await draftsAccount(w, consultationId)
    expect(acc).toMatchObject({ granted: 5, reserved: 0, used: 0 })

    // Two taps on the same "Try again" button: one new draft (keyed by that message and the expert).
    const before = w.ai.requests.length
    const retry = `dr:new:${consultationId}`
    const u1 = w.tg.callback(w.expert, retry, failed, { chatId: STAFF_CHAT_ID })
    const u2 = w.tg.callback(w.expert, retry, failed, { chatId: STAFF_CHAT_ID })
    await Promise.all([w.tg.push(TEST_BOT_ID, u1), w.tg.push(TEST_BOT_ID, u2)])
    await w.tg.waitFor('answerCallbackQuery', { callback_query_id: u2.callback_query!.id })
    const all = await eventually(async () => {
      const list = await drafts(w, consultationId)
      return list.length === 2 && list[1]!.state === 'ready' ? list : undefined
    }, 'the retried draft')
    expect(all[1]!.source).toBe('button')
    expect(w.ai.requests.length - before).toBe(1)
    expect((await draftsAccount(w, consultationId)).used).toBe(1)
    expect((await checkInvariants(w.deps.db)).violations).toEqual([])
  })

  it('the client’s message in the topic carries "Draft answer"; pressing it drafts for the open question', async () => {
    const { consultationId, thread } = await consultationWithQuestion(w, 'Why is my webhook called twice?')
    const copy = await w.tg.waitForSent(
      STAFF_CHAT_ID,
      (m) =>
        m.method === 'copyMessage' &&
        (m.reply_markup?.inline_keyboard ?? []).some((row: { callback_data?: string }[]) =>
          row.some((b) => b.callback_data === `dr:new:${consultationId}`),
        ),
      { threadId: thread },
    )
    await press(w, w.expert, `dr:new:${consultationId}`, copy)
    const [d] = await firstDraft(w, consultationId)
    expect(d!.source).toBe('button')
    await draftIn(w, d!.id, ['ready'])
  })

  it('refusals are specific: not included in the tariff, model not allowed', async () => {
    const { thread } = await consultationWithQuestion(w, 'Question on a tariff without drafts', {
      tariff: 'later',
    })
    await staffSends(w, thread, w.expert, '/draft')
    await w.tg.waitForSent(STAFF_CHAT_ID, 'Черновики не входят в этот тариф (Start when ready).', {
      threadId: thread,
    })

    const other = await consultationWithQuestion(w)
    await staffSends(w, other.thread, w.expert, '/draft model:gpt-9000 be brief')
    await w.tg.waitForSent(
      STAFF_CHAT_ID,
      'Модель gpt-9000 не разрешена. Разрешены: test-model, other-model.',
      {
        threadId: other.thread,
      },
    )
    expect((await drafts(w, other.consultationId))[0]).toMatchObject({ state: 'refused' })
  })

  it('the API key never appears in logs, Telegram calls or stored errors, even when the provider echoes it', async () => {
    const { consultationId, thread } = await consultationWithQuestion(w)
    w.ai.script({ kind: 'error', status: 401, message: `Incorrect API key provided: ${LLM_KEY}` })
    await staffSends(w, thread, w.expert, '/draft')
    const failed = await w.tg.waitForSent(STAFF_CHAT_ID, /provider error 401/, { threadId: thread })
    expect(failed.text).toContain('[redacted]')
    const [d] = await drafts(w, consultationId)
    expect(d!.error).not.toContain(LLM_KEY)
    expect(w.logs.length).toBeGreaterThan(0)
    expect(w.logs.some((l) => l.includes('draft: provider call finished'))).toBe(true)
    for (const line of w.logs) expect(line).not.toContain(LLM_KEY)
    for (const call of w.tg.calls) expect(JSON.stringify(call.payload)).not.toContain(LLM_KEY)
    const rows = await w.deps.db.selectFrom('draft').select(['error', 'refusal', 'text']).execute()
    expect(JSON.stringify(rows)).not.toContain(LLM_KEY)
  })

  it('a 5,000-character draft with an emoji at the cut settles whole (cut before the emoji); so does a long edit', async () => {
    const { client, consultationId, thread } = await consultationWithQuestion(w)
    // The cut falls at 3,499 UTF-16 units: between the two halves of 😀 (the old cut left a lone surrogate, which
    // the outbox's jsonb refused, so the settle failed and the draft was lost).
    const kept = 'x'.repeat(3498)
    w.ai.script({
      kind: 'ok',
      usage: { prompt: 100, completion: 1200 },
      content: `${kept}😀${'y'.repeat(1501)}`,
    })
    await staffSends(w, thread, w.expert, '/draft')
    const [d0] = await firstDraft(w, consultationId)
    const v1 = await draftMessage(w, thread, d0!.id)
    expect(v1.text).toContain(`${kept}…`)
    expect((await drafts(w, consultationId))[0]).toMatchObject({
      state: 'ready',
      truncated: true,
      text: `${kept}…`,
    })
    expect(w.ai.requests).not.toHaveLength(0)

    // An expert's edit cut at the same place (actions.ts): a ZWJ family straddling the limit goes whole.
    await press(w, w.expert, `dr:e:${d0!.id}:1`, v1)
    await w.tg.waitForSent(STAFF_CHAT_ID, /Черновик #\d+: пришлите исправленный текст/, { threadId: thread })
    const family = '👨‍👩‍👧‍👦'
    const edited = `${'z'.repeat(3495)}${family}${'w'.repeat(400)}`
    await w.tg.push(TEST_BOT_ID, w.tg.groupTopicMessage(STAFF_CHAT_ID, thread, w.expert, edited))
    const v2 = await draftMessage(w, thread, d0!.id, 2)
    expect(v2.text).toContain(`${'z'.repeat(3495)}…`)
    expect((await drafts(w, consultationId))[0]).toMatchObject({ version: 2, text: `${'z'.repeat(3495)}…` })
    await press(w, w.expert, `dr:s:${d0!.id}:2`, v2)
    await w.tg.waitForSent(client.id, `${'z'.repeat(3495)}…`)
    expect((await checkInvariants(w.deps.db)).violations).toEqual([])
  })
})
