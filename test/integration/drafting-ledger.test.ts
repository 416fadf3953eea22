// Longer than ~400 lines: drafting's settle, races, unknown outcomes and periods on one world (the real app, the
// fake provider, the ledger); its shared setup is test/support/drafting.ts.

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type DraftRequestInput, refusalNote, requestDraft } from '../../src/drafting/request'
import { runDraft } from '../../src/drafting/run'
import { checkInvariants } from '../../src/ledger/ledger.invariants'
import { Ledger } from '../../src/ledger/ledger.service'
import { createLlmClient } from '../../src/llm/provider'
import {
  consultationWithQuestion,
  type DraftWorld,
  draftIn,
  drafts,
  draftsAccount,
  STAFF_CHAT_ID,
  startDraftWorld,
  widenDraftsPeriod,
} from '../support/drafting'
import { eventually, lanesIdle, staffSends, TEST_BOT_ID } from '../support/fixtures'

/**
 * Drafting against the quota ledger: the settle of reported usage, races on the last unit, outcomes that leave the
 * hold unknown and their reconciliation, and the periods (the expert's desk-local day, the desk's month). Instants
 * are injected (`at`, as the ledger takes it) instead of waiting for midnight. Real PostgreSQL, the real app with
 * its workers, the fake OpenAI-compatible server over HTTP.
 */

let seq = 0
/** A /draft request as the handler makes it, with a fresh message id (so a fresh request id). */
function ask(w: DraftWorld, consultationId: number, extra: Partial<DraftRequestInput> = {}) {
  return requestDraft(w.deps, w.t.desk, {
    consultationId,
    staffId: w.expert.id,
    source: 'command',
    chatId: STAFF_CHAT_ID,
    messageId: 500_000 + ++seq,
    ...extra,
  })
}

function account(w: DraftWorld, scope: string, subject: string, unit: string, at: Date) {
  return w.deps.db
    .selectFrom('ledger_account')
    .selectAll()
    .where('scope', '=', scope)
    .where('subject', '=', subject)
    .where('unit', '=', unit)
    .where('period_start', '<=', at)
    .where('period_end', '>', at)
    .executeTakeFirst()
}

function reservation(w: DraftWorld, requestId: string) {
  return new Ledger(w.deps.db).reservation(requestId)
}

async function invariantsHold(w: DraftWorld) {
  const r = await checkInvariants(w.deps.db)
  expect(r.violations).toEqual([])
}

describe('drafting on the ledger: settle, races, unknown outcomes', () => {
  let w: DraftWorld
  beforeAll(async () => {
    w = await startDraftWorld({
      configure: (c) => {
        c.llm.drafting.monthlyBudget = { unit: 'tokens', amount: 1_000_000 }
        c.llm.drafting.concurrency = 100
        // A tariff with one draft, for the races on the last unit.
        const quick = c.desks[0]!.tariffs.find((t) => t.code === 'quick')!
        c.desks[0]!.tariffs.push({ ...quick, code: 'one', drafts: 1 })
      },
    })
  })
  afterAll(() => w?.stop())

  it('usage below the estimate commits the actual and releases the rest; above it records the overrun; counters equal the journal', async () => {
    const { consultationId } = await consultationWithQuestion(w)
    const at = new Date()
    const budgetBefore = (await account(w, 'desk', String(TEST_BOT_ID), 'llm_tokens', at))?.used ?? 0

    w.ai.script({ kind: 'ok', usage: { prompt: 100, completion: 50 } })
    const low = await ask(w, consultationId)
    expect(low.status).toBe('queued')
    if (low.status !== 'queued') return
    const dLow = await draftIn(w, low.draftId, ['ready'])
    const bound = dLow.est_input_tokens! + dLow.max_output_tokens!
    expect(dLow.budget_reserved).toBe(bound)
    const rLow = await reservation(w, low.requestId)
    expect(rLow).toMatchObject({
      state: 'committed',
      amounts: [1, 1, bound],
      actuals: [1, 1, 150],
      charged: [1, 1, 150],
      overrun: false,
    })
    // priced: 100 * 2.50 + 50 * 10.00 per 1M tokens, in cents, rounded up
    expect(dLow).toMatchObject({ input_tokens: 100, output_tokens: 50, cost: 1, overrun: false })

    const big = { prompt: dLow.est_input_tokens! + 1000, completion: 400 }
    w.ai.script({ kind: 'ok', usage: big })
    const high = await ask(w, consultationId)
    if (high.status !== 'queued') throw new Error(high.status)
    const dHigh = await draftIn(w, high.draftId, ['ready'])
    const rHigh = await reservation(w, high.requestId)
    expect(rHigh).toMatchObject({ state: 'committed', overrun: true })
    expect(rHigh!.actuals![2]).toBe(big.prompt + big.completion)
    expect(rHigh!.charged![2]).toBe(big.prompt + big.completion) // policy allow: the actual is charged
    expect(dHigh.overrun).toBe(true)

    const budget = await account(w, 'desk', String(TEST_BOT_ID), 'llm_tokens', at)
    expect(budget!.used - budgetBefore).toBe(150 + big.prompt + big.completion)
    expect(await draftsAccount(w, consultationId)).toMatchObject({ granted: 5, reserved: 0, used: 2 })
    await invariantsHold(w)
  })

  it('a question accepted in the window can be drafted for after the window closed, charged to that window', async () => {
    const { consultationId } = await consultationWithQuestion(w)
    const c = await w.deps.db
      .selectFrom('consultation')
      .select('access_until')
      .where('id', '=', consultationId)
      .executeTakeFirstOrThrow()
    // Two hours after the close: the expert is still answering the accepted question.
    const late = new Date(c.access_until!.getTime() + 2 * 3_600_000)
    w.ai.script({ kind: 'ok', usage: { prompt: 10, completion: 5 } })
    const r = await ask(w, consultationId, { at: late })
    expect(r.status).toBe('queued')
    if (r.status !== 'queued') return
    await draftIn(w, r.draftId, ['ready'])
    expect(await draftsAccount(w, consultationId)).toMatchObject({ reserved: 0, used: 1 })
    await invariantsHold(w)
  })

  it('two /draft at once on the last draft unit: one admitted, one refused with numbers (x25)', async () => {
    for (let i = 0; i < 25; i++) {
      const { consultationId } = await consultationWithQuestion(w, `race ${i}`, { tariff: 'one' })
      const [a, b] = await Promise.all([ask(w, consultationId), ask(w, consultationId)])
      const results = [a!, b!]
      const admitted = results.filter((r) => r.status === 'queued')
      const refused = results.filter((r) => r.status === 'refused')
      expect(admitted).toHaveLength(1)
      expect(refused).toHaveLength(1)
      const r = refused[0]!
      if (r.status !== 'refused') throw new Error('unreachable')
      expect(r.refusal).toMatchObject({ reason: 'no_drafts_left', left: 0, total: 1 })
      const acc = await draftsAccount(w, consultationId)
      expect(acc.reserved + acc.used).toBe(1)
      expect((await drafts(w, consultationId)).map((d) => d.state).sort()).toEqual(
        expect.arrayContaining(['refused']),
      )
    }
    await eventually(async () => {
      const busy = await w.deps.db
        .selectFrom('draft')
        .select('id')
        .where('state', 'in', ['queued', 'calling'])
        .executeTakeFirst()
      return busy ? undefined : true
    }, 'every admitted draft to settle')
    await invariantsHold(w)
  })

  it('provider hangs past the timeout -> unknown, still held, never expired by the sweeper; an admin reconciles it (audited)', async () => {
    const { consultationId, thread } = await consultationWithQuestion(w)
    w.ai.script({ kind: 'hang' })
    await staffSends(w, thread, w.expert, '/draft')
    const [d0] = await eventually(async () => {
      const l = await drafts(w, consultationId)
      return l.length ? l : undefined
    }, 'the draft')
    const d = await draftIn(w, d0!.id, ['unknown'])
    expect(d.error).toMatch(/timed out after sending/)
    const note = await w.tg.waitForSent(STAFF_CHAT_ID, /Провайдер мог его списать/, { threadId: thread })
    expect(note.text).toContain(`#${d.id}`)

    expect((await reservation(w, d.request_id))!.state).toBe('unknown')
    expect(await draftsAccount(w, consultationId)).toMatchObject({ reserved: 1, used: 0 })

    // Past its deadline, the sweeper still leaves it alone: a timeout is not proof of zero cost.
    await w.deps.db
      .updateTable('ledger_reservation')
      .set({ expires_at: new Date(Date.now() - 3_600_000) })
      .where('request_id', '=', d.request_id)
      .execute()
    await new Ledger(w.deps.db).sweep()
    expect((await reservation(w, d.request_id))!.state).toBe('unknown')
    expect(await draftsAccount(w, consultationId)).toMatchObject({ reserved: 1, used: 0 })
    await invariantsHold(w)

    // Admins see it; an expert may not reconcile.
    const list = w.tg.groupTopicMessage(STAFF_CHAT_ID, undefined, w.admin, '/drafts')
    await w.tg.push(TEST_BOT_ID, list)
    const shown = await w.tg.waitForSent(STAFF_CHAT_ID, /с неизвестным исходом/)
    expect(shown.text).toContain(`#${d.id} · консультация #${consultationId}`)
    await w.tg.push(
      TEST_BOT_ID,
      w.tg.groupTopicMessage(STAFF_CHAT_ID, undefined, w.expert, `/draft_release ${d.id}`),
    )
    await w.tg.waitForSent(STAFF_CHAT_ID, 'Это могут только администраторы.')
    expect((await reservation(w, d.request_id))!.state).toBe('unknown')

    const commit = await w.tg.push(
      TEST_BOT_ID,
      w.tg.groupTopicMessage(STAFF_CHAT_ID, undefined, w.admin, `/draft_commit ${d.id} 300 100`),
    )
    await w.tg.waitForSent(STAFF_CHAT_ID, `Черновик #${d.id}: списано 300 + 100 токенов = 0.01 USD`)
    await w.tg.redeliver(TEST_BOT_ID, commit)
    const r = await reservation(w, d.request_id)
    expect(r).toMatchObject({ state: 'committed', actuals: [1, 1, 400] })
    expect(await draftsAccount(w, consultationId)).toMatchObject({ reserved: 0, used: 1 })
    expect(await draftIn(w, d.id, ['failed'])).toMatchObject({
      reconciled_by: w.admin.id,
      reconciliation: expect.stringMatching(/^committed: 300 \+ 100 tokens/),
    })
    const audits = await w.deps.db
      .selectFrom('audit_log')
      .selectAll()
      .where('action', '=', 'draft.reconciled')
      .where('subject_id', '=', String(d.id))
      .execute()
    expect(audits).toHaveLength(1)
    expect(audits[0]!).toMatchObject({
      actor_id: w.admin.id,
      details: { action: 'commit', usage: { input: 300, output: 100 } },
    })
    await lanesIdle(w, consultationId)
    expect(w.tg.texts(STAFF_CHAT_ID).filter((t) => t?.startsWith(`Черновик #${d.id}: списано`))).toHaveLength(
      1,
    )
    await invariantsHold(w)
  })

  it('refused before the ledger: provider unavailable (no key) and no open question; nothing reserved or queued', async () => {
    const { consultationId } = await consultationWithQuestion(w)
    const real = w.deps.llm
    w.deps.llm = createLlmClient({ baseUrl: w.ai.baseUrl, apiKey: undefined, timeoutMs: 1000 })
    try {
      const r = await ask(w, consultationId)
      expect(r).toMatchObject({ status: 'refused', refusal: { reason: 'provider_unavailable' } })
      if (r.status === 'refused') expect(await reservation(w, r.requestId)).toBeNull()
    } finally {
      w.deps.llm = real
    }
    await w.deps.db
      .updateTable('desk_appeal')
      .set({ state: 'answered' })
      .where('consultation_id', '=', consultationId)
      .execute()
    const none = await ask(w, consultationId)
    expect(none).toMatchObject({ status: 'refused', refusal: { reason: 'no_open_appeal' } })
    expect(await draftsAccount(w, consultationId)).toMatchObject({ reserved: 0, used: 0 })
    expect(
      await w.deps.db
        .selectFrom('draft')
        .select('state')
        .where('consultation_id', '=', consultationId)
        .execute(),
    ).toEqual([{ state: 'refused' }, { state: 'refused' }])
  })

  it('a job retried after a crash mid-call never calls the provider again: the hold goes to unknown', async () => {
    const { consultationId } = await consultationWithQuestion(w)
    const calls = w.ai.requests.length
    w.ai.script({ kind: 'ok', usage: { prompt: 10, completion: 10 }, delayMs: 800 })
    const r = await ask(w, consultationId)
    if (r.status !== 'queued') throw new Error(r.status)
    await w.ai.waitForRequests(calls + 1)
    await draftIn(w, r.draftId, ['calling'])
    // What a retried job does when it finds the draft in `calling` (its first attempt died during the call).
    expect(await runDraft(w.deps, r.draftId)).toMatchObject({ status: 'unknown' })
    expect((await reservation(w, r.requestId))!.state).toBe('unknown')
    // The first attempt's late answer does not move it: an admin reconciles with the provider's numbers.
    await new Promise((resolve) => setTimeout(resolve, 1200))
    expect(await draftIn(w, r.draftId, ['unknown'])).toMatchObject({ state: 'unknown' })
    expect(w.ai.requests.length - calls).toBe(1)
    await invariantsHold(w)
  })

  it('a lost connection is unknown too; release by an admin returns the unit', async () => {
    const { consultationId } = await consultationWithQuestion(w)
    w.ai.script({ kind: 'drop' })
    const r = await ask(w, consultationId)
    if (r.status !== 'queued') throw new Error(r.status)
    await draftIn(w, r.draftId, ['unknown'])
    const { reconcileDraft } = await import('../../src/drafting/reconcile')
    expect(
      await reconcileDraft(w.deps, w.t.desk, { draftId: r.draftId, adminId: w.admin.id, action: 'release' }),
    ).toEqual({
      status: 'released',
    })
    expect(
      await reconcileDraft(w.deps, w.t.desk, { draftId: r.draftId, adminId: w.admin.id, action: 'commit' }),
    ).toMatchObject({
      status: 'not_unknown',
      reconciliation: 'released',
    })
    expect(await draftsAccount(w, consultationId)).toMatchObject({ reserved: 0, used: 0 })
    await invariantsHold(w)
  })
})

describe('drafting on the ledger: periods and limits (injected instants, desk zone Europe/Moscow)', () => {
  let w: DraftWorld
  const PRICEY = 'pricey'
  beforeAll(async () => {
    w = await startDraftWorld({
      configure: (c) => {
        // Cents per 1M tokens: $250 input, $1000 output, so one draft's bound is tens of cents.
        c.llm.models.push({
          id: PRICEY,
          inputPer1M: 25_000,
          outputPer1M: 100_000,
          maxTokensParam: 'max_tokens',
        })
        c.llm.defaultModel = PRICEY
        c.llm.drafting.expertDailyCap = 1
        c.llm.drafting.monthlyBudget = { unit: 'money', amount: 100 }
        c.llm.drafting.concurrency = 1
        // The other experts asOther() names: staff of the desk, since a draft is asked only by staff of the
        // consultation's group.
        c.desks[0]!.staff.experts.push(...Array.from({ length: 20 }, (_, i) => 910_001 + i), 920_001)
      },
    })
  })
  afterAll(() => w?.stop())

  const msk = (iso: string) => new Date(`${iso}+03:00`)
  let staff = 910_000
  /** Each request from another expert unless given: the daily cap is per expert. */
  const asOther = () => ({ staffId: ++staff })

  it('the desk budget is exhausted mid-month (refused with numbers); the next month has its own budget', async () => {
    const { consultationId } = await consultationWithQuestion(w)
    await widenDraftsPeriod(w, consultationId, msk('2026-11-01T00:00:00'), msk('2027-06-01T00:00:00'))
    const usage = { prompt: 200, completion: 300 } // 5 + 30 = 35 cents
    for (let i = 0; i < 2; i++) {
      w.ai.script({ kind: 'ok', usage })
      const r = await ask(w, consultationId, { at: msk(`2026-12-15T12:0${i}:00`), ...asOther() })
      if (r.status !== 'queued') throw new Error(JSON.stringify(r))
      await draftIn(w, r.draftId, ['ready'])
    }
    const refused = await ask(w, consultationId, { at: msk('2026-12-15T12:05:00'), ...asOther() })
    expect(refused).toMatchObject({
      status: 'refused',
      refusal: {
        reason: 'desk_budget',
        unit: 'money',
        used: '0.70 USD',
        held: '0.00 USD',
        limit: '1.00 USD',
      },
    })
    if (refused.status !== 'refused' || refused.refusal.reason !== 'desk_budget')
      throw new Error('unreachable')
    expect(refused.refusal.month).toBe('декабрь 2026')
    const needed = Number.parseFloat(refused.refusal.needed)
    expect(needed).toBeGreaterThan(0.3)
    const text = w.deps.i18n.t('ru', refusalNote(refused.refusal).key, refusalNote(refused.refusal).params)
    expect(text).toContain('Бюджет команды на черновики за декабрь 2026 исчерпан: использовано 0.70 USD')
    // Nothing was queued or reserved for it.
    const d = (await drafts(w, consultationId)).at(-1)!
    expect(d).toMatchObject({ state: 'refused' })
    expect(await reservation(w, d.request_id)).toMatchObject({ state: 'refused' })

    w.ai.script({ kind: 'ok', usage })
    const january = await ask(w, consultationId, { at: msk('2027-01-02T10:00:00'), ...asOther() })
    expect(january.status).toBe('queued')
    if (january.status === 'queued') await draftIn(w, january.draftId, ['ready'])
    const dec = await account(w, 'desk', String(TEST_BOT_ID), 'llm_money', msk('2026-12-15T12:00:00'))
    const jan = await account(w, 'desk', String(TEST_BOT_ID), 'llm_money', msk('2027-01-02T10:00:00'))
    expect(dec).toMatchObject({ granted: 100, used: 70, reserved: 0, time_zone: 'Europe/Moscow' })
    expect(dec!.period_start.toISOString()).toBe('2026-11-30T21:00:00.000Z')
    expect(jan).toMatchObject({ granted: 100, used: 35 })
    await invariantsHold(w)
  })

  it('the expert’s daily cap resets at 00:00 desk time', async () => {
    const { consultationId } = await consultationWithQuestion(w)
    await widenDraftsPeriod(w, consultationId, msk('2026-11-01T00:00:00'), msk('2027-06-01T00:00:00'))
    const me = { staffId: 920_001 }
    w.ai.script({ kind: 'ok', usage: { prompt: 10, completion: 10 } })
    const first = await ask(w, consultationId, { at: msk('2027-03-10T23:50:00'), ...me })
    if (first.status !== 'queued') throw new Error(JSON.stringify(first))
    await draftIn(w, first.draftId, ['ready'])
    const late = await ask(w, consultationId, { at: msk('2027-03-10T23:59:59'), ...me })
    expect(late).toMatchObject({
      status: 'refused',
      refusal: { reason: 'expert_cap', used: 1, held: 0, cap: 1, resetsAt: '00:00' },
    })
    if (late.status === 'refused')
      expect(w.deps.i18n.t('ru', refusalNote(late.refusal).key, refusalNote(late.refusal).params)).toBe(
        'Ваш дневной лимит черновиков исчерпан (использовано 1 из 1). Сбросится в 00:00.',
      )
    w.ai.script({ kind: 'ok', usage: { prompt: 10, completion: 10 } })
    const next = await ask(w, consultationId, { at: msk('2027-03-11T00:00:01'), ...me })
    expect(next.status).toBe('queued')
    if (next.status === 'queued') await draftIn(w, next.draftId, ['ready'])
    const day = await account(w, 'expert', `${TEST_BOT_ID}:920001`, 'drafts', msk('2027-03-10T23:50:00'))
    expect(day!.period_start.toISOString()).toBe('2027-03-09T21:00:00.000Z')
    expect(day!.period_end.toISOString()).toBe('2027-03-10T21:00:00.000Z')
    await invariantsHold(w)
  })

  it('a draft settling after the month rolled over is charged to the month it was reserved in; one running at a time', async () => {
    const { consultationId } = await consultationWithQuestion(w)
    await widenDraftsPeriod(w, consultationId, msk('2026-11-01T00:00:00'), msk('2027-06-01T00:00:00'))
    // January's draft generates slowly: February's account exists and takes a draft before January's settles.
    w.ai.script({ kind: 'ok', usage: { prompt: 200, completion: 300 }, delayMs: 1200 })
    const calls = w.ai.requests.length
    const jan = await ask(w, consultationId, { at: msk('2027-01-31T23:59:50'), ...asOther() })
    if (jan.status !== 'queued') throw new Error(JSON.stringify(jan))
    await w.ai.waitForRequests(calls + 1) // its call is under way (the answer comes 1.2 s later)

    // The desk's concurrency limit (1) holds February's first try back while January's runs.
    const busy = await ask(w, consultationId, { at: msk('2027-02-01T00:00:10'), ...asOther() })
    expect(busy).toMatchObject({
      status: 'refused',
      refusal: { reason: 'too_many_running', running: 1, max: 1 },
    })
    await draftIn(w, jan.draftId, ['ready'])

    w.ai.script({ kind: 'ok', usage: { prompt: 100, completion: 100 } })
    const feb = await ask(w, consultationId, { at: msk('2027-02-01T00:00:20'), ...asOther() })
    if (feb.status !== 'queued') throw new Error(JSON.stringify(feb))
    await draftIn(w, feb.draftId, ['ready'])

    const janAcc = await account(w, 'desk', String(TEST_BOT_ID), 'llm_money', msk('2027-01-31T23:59:50'))
    const febAcc = await account(w, 'desk', String(TEST_BOT_ID), 'llm_money', msk('2027-02-01T00:00:10'))
    const rJan = await reservation(w, jan.requestId)
    expect(rJan!.accountIds).toContain(janAcc!.id)
    expect(rJan!.accountIds).not.toContain(febAcc!.id)
    // January: 35 (this test) on top of the 35 of the previous test's January draft.
    expect(janAcc).toMatchObject({ used: 70, reserved: 0 })
    expect(febAcc).toMatchObject({ used: 13, reserved: 0 }) // 100 * 2.5 + 100 * 10 = 12.5 cents, rounded up
    await invariantsHold(w)
  })
})
