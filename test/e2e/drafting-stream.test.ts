import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkInvariants } from '../../src/ledger/ledger.invariants'
import type { SentMessage } from '../support/bot-api'
import { startBotApi } from '../support/bot-api'
import {
  consultationWithQuestion,
  type DraftWorld,
  draftIn,
  drafts,
  draftsAccount,
  EXPERT_ID,
  STAFF_CHAT_ID,
  startDraftWorld,
} from '../support/drafting'
import { eventually, lanesIdle, staffSends, TEST_BOT_ID } from '../support/fixtures'

/**
 * Streamed drafts, Stop and the hand-off summary (issue 25): the real app, the Bot API stand-in and a fake
 * OpenAI-compatible server that streams (server-sent events) over real HTTP; real PostgreSQL. The home group lists
 * Ed and Eve; group B lists Zed only (a staff member of another group). Consultations use the tariff naming Ed, so
 * they live in the home group.
 */

const EVE_ID = 900003
const ZED_ID = 900004
const GROUP_B = -1009000000778

describe('drafting: streaming, Stop, hand-off summary', () => {
  let w: DraftWorld
  beforeAll(async () => {
    const tg = await startBotApi({ defaultWaitTimeoutMs: 15_000 })
    tg.forum({ id: GROUP_B, title: 'Staff B' })
    w = await startDraftWorld({
      tg,
      configure: (c) => {
        const d = c.desks[0]!
        d.staff.experts = [EXPERT_ID, EVE_ID, ZED_ID]
        d.staffGroups = [
          { chatId: STAFF_CHAT_ID, experts: [EXPERT_ID, EVE_ID] },
          { chatId: GROUP_B, experts: [ZED_ID] },
        ]
        d.expertSettings.names = { [String(EVE_ID)]: 'Eve', [String(ZED_ID)]: 'Zed' }
        d.tariffs.push({ ...d.tariffs[0]!, code: 'ed', expert: EXPERT_ID })
        c.llm.drafting.monthlyBudget = { unit: 'tokens', amount: 1_000_000 }
        // Streams here take a few seconds (paced chunks, or held open until a Stop).
        c.llm.timeoutMs = 15_000
      },
    })
  })
  afterAll(() => w?.stop())

  const budgetUsed = async () =>
    (await w.deps.db
      .selectFrom('ledger_account')
      .select(['used', 'reserved'])
      .where('scope', '=', 'desk')
      .where('unit', '=', 'llm_tokens')
      .executeTakeFirst()) ?? { used: 0, reserved: 0 }

  /** The bot's message in the topic carrying a draft's Send button (version 1). */
  const draftMessage = (thread: number, draftId: number) =>
    w.tg.waitForSent(
      STAFF_CHAT_ID,
      (m) =>
        (m.reply_markup?.inline_keyboard ?? []).some((row: { callback_data?: string }[]) =>
          row.some((b) => b.callback_data === `dr:s:${draftId}:1`),
        ),
      { threadId: thread },
    )

  const stopMessage = (chatId: number, draftId: number, threadId?: number) =>
    w.tg.waitForSent(
      chatId,
      (m) =>
        (m.reply_markup?.inline_keyboard ?? []).some((row: { callback_data?: string }[]) =>
          row.some((b) => b.callback_data === `dr:x:${draftId}`),
        ),
      threadId === undefined ? {} : { threadId },
    )

  async function press(user: { id: number }, data: string, on: SentMessage, chatId: number) {
    const u = w.tg.callback(w.tg.user({ id: user.id }), data, on, { chatId })
    await w.tg.push(TEST_BOT_ID, u)
    return w.tg.waitFor('answerCallbackQuery', { callback_query_id: u.callback_query!.id })
  }

  const firstDraft = (consultationId: number) =>
    eventually(async () => (await drafts(w, consultationId))[0], 'a draft')

  it('streams into the expert’s private chat with growing text; the final draft lands in the topic with its buttons', async () => {
    const { client, consultationId, thread } = await consultationWithQuestion(w, 'How do I rotate keys?', {
      tariff: 'ed',
    })
    const pieces = [
      'Rotate ',
      'the ',
      'keys ',
      'every ',
      'ninety ',
      'days, ',
      'keeping ',
      'the ',
      'old ',
      'one ',
    ]
    w.ai.script({
      kind: 'ok',
      chunks: pieces,
      chunkDelayMs: 350,
      usage: { prompt: 200, completion: pieces.length },
    })
    const full = pieces.join('').trim()
    await staffSends(w, thread, w.expert, '/draft')
    const d0 = await firstDraft(consultationId)
    // The topic's note has Stop while it is written; the expert's private chat gets the message with Stop.
    await stopMessage(STAFF_CHAT_ID, d0.id, thread)
    const header = await stopMessage(EXPERT_ID, d0.id)
    const posted = await draftMessage(thread, d0.id)
    expect(posted.text).toContain(full)
    expect(w.ai.requests.at(-1)!.body.stream).toBe(true)

    const streamed = w.tg
      .callsTo('sendMessageDraft', { chat_id: EXPERT_ID, draft_id: d0.id }, { ok: true })
      .map((c) => String(c.payload.text))
    expect(streamed.length).toBeGreaterThanOrEqual(2)
    for (let i = 1; i < streamed.length; i++) {
      expect(streamed[i]!.startsWith(streamed[i - 1]!)).toBe(true)
      expect(streamed[i]!.length).toBeGreaterThan(streamed[i - 1]!.length)
    }
    for (const text of streamed) expect(full.startsWith(text.trim())).toBe(true)
    // The final text always goes, as a message that stays (a streamed draft is only a preview); Stop leaves.
    const final = await w.tg.waitForSent(EXPERT_ID, /Черновик #\d+ готов/)
    expect(final.text).toContain(full)
    await w.tg.waitFor('editMessageReplyMarkup', { chat_id: EXPERT_ID, message_id: header.message_id })
    // Nothing reached the client.
    await lanesIdle(w, consultationId)
    expect(w.tg.sentTo(client.id).some((m) => m.text?.includes('Rotate the keys'))).toBe(false)
    expect((await drafts(w, consultationId))[0]).toMatchObject({
      state: 'ready',
      text: full,
      output_tokens: 10,
    })
  })

  it('an expert who never opened a private chat with the bot (403): no stream, the draft still lands in the topic', async () => {
    const { consultationId, thread } = await consultationWithQuestion(w, 'Is TLS 1.2 enough?', {
      tariff: 'ed',
    })
    w.tg.block(EXPERT_ID)
    try {
      w.ai.script({ kind: 'ok', chunks: ['Yes, ', 'for ', 'now.'], chunkDelayMs: 50 })
      await staffSends(w, thread, w.expert, '/draft')
      const d0 = await firstDraft(consultationId)
      const posted = await draftMessage(thread, d0.id)
      expect(posted.text).toContain('Yes, for now.')
      expect(w.tg.callsTo('sendMessageDraft', { draft_id: d0.id })).toEqual([])
      const d = await draftIn(w, d0.id, ['ready'])
      expect(d.stream_message_id).toBeNull()
    } finally {
      w.tg.unblock(EXPERT_ID)
    }
  })

  it('Stop mid-stream cancels the provider call, settles only what was used (exact), keeps the partial draft; a second Stop changes nothing', async () => {
    const { client, consultationId, thread } = await consultationWithQuestion(w, 'Explain OAuth scopes', {
      tariff: 'ed',
    })
    const before = await budgetUsed()
    w.ai.script({ kind: 'ok', chunks: ['Scopes ', 'limit ', 'what '], hangAfterChunks: true })
    const reqIndex = w.ai.requests.length
    await staffSends(w, thread, w.expert, '/draft')
    const d0 = await firstDraft(consultationId)
    await w.ai.waitForRequests(reqIndex + 1)
    const req = w.ai.requests[reqIndex]!
    await eventually(async () => req.chunksSent === 3 || undefined, 'three chunks streamed')
    // The streamed text reached the private chat before the Stop (so the job had read the chunks).
    await w.tg.waitFor(
      'sendMessageDraft',
      (p) => p.draft_id === d0.id && String(p.text).trim() === 'Scopes limit what',
    )
    const header = await stopMessage(EXPERT_ID, d0.id)

    const r = await press({ id: EXPERT_ID }, `dr:x:${d0.id}`, header, EXPERT_ID)
    expect(r.payload.text).toBe('Останавливаю: написанное сохранится как черновик.')
    await w.ai.waitForClosed(reqIndex)
    const d = await draftIn(w, d0.id, ['ready'])
    expect(d).toMatchObject({
      text: 'Scopes limit what',
      finish_reason: 'stopped',
      input_tokens: d0.est_input_tokens,
      output_tokens: 3,
      stop_requested_by: EXPERT_ID,
    })
    // Exactly the prompt estimate plus the three chunks on the budget; nothing left reserved; one draft unit.
    const after = await budgetUsed()
    expect(Number(after.used) - Number(before.used)).toBe(d0.est_input_tokens! + 3)
    expect(Number(after.reserved)).toBe(0)
    expect((await draftsAccount(w, consultationId)).used).toBe(1)
    // Kept as a draft in the topic, with its buttons; never sent to the client.
    const posted = await draftMessage(thread, d0.id)
    expect(posted.text).toContain('Scopes limit what')
    expect(posted.text).toMatch(/остановлен: \d+ \+ 3 токенов до остановки/)
    const done = await w.tg.waitForSent(EXPERT_ID, new RegExp(`Черновик #${d0.id} остановлен`))
    expect(done.text).toContain('Scopes limit what')

    // A second Stop (in the topic this time) changes nothing.
    const ack = await stopMessage(STAFF_CHAT_ID, d0.id, thread)
    const again = await press({ id: EXPERT_ID }, `dr:x:${d0.id}`, ack, STAFF_CHAT_ID)
    expect(again.payload.text).toBe('Этот черновик уже остановлен.')
    expect(await budgetUsed()).toEqual(after)
    const stops = await w.deps.db
      .selectFrom('audit_log')
      .select('actor_id')
      .where('action', '=', 'draft.stopped')
      .where('subject_id', '=', String(d0.id))
      .execute()
    expect(stops).toHaveLength(1)
    await lanesIdle(w, consultationId)
    expect(w.tg.sentTo(client.id).some((m) => m.text?.includes('Scopes limit'))).toBe(false)
    expect((await checkInvariants(w.deps.db)).violations).toEqual([])
  })

  it('20 rounds: Stop pressed as the call finishes: the answer to the presser matches the draft, charged by the rule', async () => {
    const { client, consultationId, thread } = await consultationWithQuestion(w, 'Stop or finish?', {
      tariff: 'ed',
    })
    const acc = await draftsAccount(w, consultationId)
    // Room for 20 drafts on the consultation, through the ledger (journalled).
    await w.deps.db
      .transaction()
      .execute((trx) =>
        w.deps.ledger.in(trx).adjust({ accountId: acc.id, dGranted: 40, note: 'test: room for 20 drafts' }),
      )
    const seen = { stopped: 0, finished: 0 }
    let last = 0
    for (let round = 0; round < 20; round++) {
      w.ai.script({
        kind: 'ok',
        chunks: ['Alpha ', 'beta ', 'gamma'],
        holdFinish: true,
        usage: { prompt: 200, completion: 3 },
      })
      const reqIndex = w.ai.requests.length
      const before = await budgetUsed()
      await staffSends(w, thread, w.expert, `/draft round ${round}`)
      const d0 = await eventually(
        async () => (await drafts(w, consultationId)).find((d) => d.id > last),
        'the new draft',
      )
      last = d0.id
      await w.ai.waitForRequests(reqIndex + 1)
      const req = w.ai.requests[reqIndex]!
      await eventually(async () => req.chunksSent === 3 || undefined, 'three chunks streamed')
      const header = await stopMessage(EXPERT_ID, d0.id)

      // Even rounds: the press and the finish sent together (the finish a little later from round to round). Odd
      // rounds: the finish the moment the Stop is committed, before the job's next look at the flag, so the call
      // ends normally with the Stop already on the row.
      const u = w.tg.callback(w.tg.user({ id: EXPERT_ID }), `dr:x:${d0.id}`, header, { chatId: EXPERT_ID })
      const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
      const stopOnRow = async () => {
        for (;;) {
          const r = await w.deps.db
            .selectFrom('draft')
            .select(['stop_requested_at', 'state'])
            .where('id', '=', d0.id)
            .executeTakeFirstOrThrow()
          if (r.stop_requested_at || r.state !== 'calling') return
          await sleep(5)
        }
      }
      await Promise.all([
        w.tg.push(TEST_BOT_ID, u),
        (round % 2 === 0 ? sleep((round % 10) * 5) : stopOnRow()).then(() => w.ai.finish(reqIndex)),
      ])
      const answer = String(
        (await w.tg.waitFor('answerCallbackQuery', { callback_query_id: u.callback_query!.id })).payload.text,
      )
      const d = await draftIn(w, d0.id, ['ready'])
      const final = await w.tg.waitForSent(EXPERT_ID, new RegExp(`Черновик #${d0.id} (готов|остановлен)`))
      const posted = await draftMessage(thread, d0.id)
      const after = await budgetUsed()
      expect(Number(after.reserved), `round ${round}`).toBe(0)
      if (answer === 'Останавливаю: написанное сохранится как черновик.') {
        seen.stopped++
        // Told "Stopping": the draft is a stopped one, everywhere, charged the prompt estimate plus the chunks.
        expect(d, `round ${round}`).toMatchObject({
          finish_reason: 'stopped',
          stop_requested_by: EXPERT_ID,
          input_tokens: d0.est_input_tokens,
          output_tokens: 3,
        })
        expect(Number(after.used) - Number(before.used), `round ${round}`).toBe(d0.est_input_tokens! + 3)
        expect(final.text, `round ${round}`).toMatch(/остановлен/)
        expect(posted.text, `round ${round}`).toMatch(/остановлен: \d+ \+ 3 токенов до остановки/)
      } else {
        seen.finished++
        // Told it was finished: it was, nothing stopped it, charged the usage the provider reported.
        expect(answer, `round ${round}`).toBe('Этот черновик уже готов.')
        expect(d, `round ${round}`).toMatchObject({
          finish_reason: 'stop',
          stop_requested_at: null,
          input_tokens: 200,
          output_tokens: 3,
        })
        expect(Number(after.used) - Number(before.used), `round ${round}`).toBe(203)
        expect(final.text, `round ${round}`).toMatch(/готов/)
        expect(posted.text, `round ${round}`).not.toMatch(/остановлен/)
      }
      expect(d.text, `round ${round}`).toContain('Alpha beta')
    }
    console.log('Stop vs finish, 20 rounds:', seen)
    expect((await draftsAccount(w, consultationId)).used).toBe(acc.used + 20)
    await lanesIdle(w, consultationId)
    expect(w.tg.sentTo(client.id).some((m) => m.text?.includes('Alpha beta'))).toBe(false)
    expect((await checkInvariants(w.deps.db)).violations).toEqual([])
  })

  it('a stranger’s Stop and a Stop by staff of another group are refused and change nothing', async () => {
    const { consultationId, thread } = await consultationWithQuestion(w, 'What is PKCE?', { tariff: 'ed' })
    w.ai.script({ kind: 'ok', chunks: ['PKCE ', 'binds '], hangAfterChunks: true })
    await staffSends(w, thread, w.expert, '/draft')
    const d0 = await firstDraft(consultationId)
    const ack = await stopMessage(STAFF_CHAT_ID, d0.id, thread)
    await draftIn(w, d0.id, ['calling'])

    const stranger = w.tg.user({ first_name: 'Mallory' })
    const s = await press(stranger, `dr:x:${d0.id}`, ack, STAFF_CHAT_ID)
    expect(s.payload.text).toBe('Это доступно только сотрудникам.')
    // Zed is staff, but of group B: from his private chat the press names a draft of the home group.
    const z = await press({ id: ZED_ID }, `dr:x:${d0.id}`, ack, ZED_ID)
    expect(z.payload.show_alert).toBe(true)
    expect(z.payload.text).not.toMatch(/Останавливаю/)
    const d = await draftIn(w, d0.id, ['calling'])
    expect(d.stop_requested_at).toBeNull()
    // The rightful expert stops it (so the hanging call ends).
    const ok = await press({ id: EXPERT_ID }, `dr:x:${d0.id}`, ack, STAFF_CHAT_ID)
    expect(ok.payload.text).toMatch(/Останавливаю/)
    await draftIn(w, d0.id, ['ready'])
  })

  it('/assign: the new owner gets a short summary in private once (redelivered press = once), charged once', async () => {
    const { client, consultationId, thread } = await consultationWithQuestion(w, 'Migrating from v1 to v2?', {
      tariff: 'ed',
    })
    w.ai.script({
      kind: 'ok',
      content: 'HANDOFF-SUMMARY: the client migrates v1 to v2; nothing answered yet.',
    })
    const before = await draftsAccount(w, consultationId)
    await staffSends(w, thread, w.expert, '/assign')
    const pick = await w.tg.waitForSent(STAFF_CHAT_ID, /Кому передать/, { threadId: thread })
    const u = w.tg.callback(w.admin, `ex:as:${consultationId}:${EVE_ID}`, pick, { chatId: STAFF_CHAT_ID })
    const pushed = await w.tg.push(TEST_BOT_ID, u)
    const summary = await w.tg.waitForSent(EVE_ID, /HANDOFF-SUMMARY/)
    expect(summary.text).toContain(`#${consultationId}`)
    await w.tg.redeliver(TEST_BOT_ID, pushed)
    const handoffs = await eventually(async () => {
      const list = (await drafts(w, consultationId)).filter((d) => d.source === 'handoff')
      return list.length === 1 && list[0]!.state === 'delivered' ? list : undefined
    }, 'the delivered summary')
    expect(handoffs[0]).toMatchObject({ requested_by: EVE_ID })
    await lanesIdle(w, consultationId)
    expect(w.tg.sentTo(EVE_ID).filter((m) => m.text?.includes('HANDOFF-SUMMARY'))).toHaveLength(1)
    expect(w.tg.sentTo(client.id).some((m) => m.text?.includes('HANDOFF-SUMMARY'))).toBe(false)
    expect(w.tg.sentTo(STAFF_CHAT_ID).some((m) => m.text?.includes('HANDOFF-SUMMARY'))).toBe(false)
    // Charged once on the consultation's drafts, and the journal holds one commit for it.
    expect((await draftsAccount(w, consultationId)).used).toBe(before.used + 1)
    const holds = await w.deps.db
      .selectFrom('ledger_reservation')
      .select(['state'])
      .where('request_id', '=', handoffs[0]!.request_id)
      .execute()
    expect(holds).toEqual([{ state: 'committed' }])
  })

  it('/assign with no drafts left: the new owner is told, without a summary, and nothing is charged', async () => {
    const { consultationId, thread } = await consultationWithQuestion(w, 'One more?', { tariff: 'ed' })
    const acc = await draftsAccount(w, consultationId)
    await w.deps.db
      .updateTable('ledger_account')
      .set({ granted: acc.used })
      .where('id', '=', acc.id)
      .execute()
    const calls = w.ai.requests.length
    await staffSends(w, thread, w.expert, '/assign')
    const pick = await w.tg.waitForSent(STAFF_CHAT_ID, /Кому передать/, { threadId: thread })
    const u = w.tg.callback(w.admin, `ex:as:${consultationId}:${EVE_ID}`, pick, { chatId: STAFF_CHAT_ID })
    await w.tg.push(TEST_BOT_ID, u)
    const told = await w.tg.waitForSent(
      EVE_ID,
      new RegExp(`Консультация #${consultationId} теперь ваша. Сводки`),
    )
    expect(told.text).toMatch(/черновик/i)
    expect(w.ai.requests.length).toBe(calls)
    expect((await draftsAccount(w, consultationId)).used).toBe(acc.used)
  })
})
