import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DeskRuntime } from '../../src/config/load'
import { upsertProfile } from '../../src/experts/experts.repository'
import { findTariff, snapshotTariff } from '../../src/orders/tariffs'
import { buildReport, parseReportRange, renderReport, reportNames } from '../../src/reports/reports.service'
import {
  ADMIN_ID,
  type DeskWorld,
  EXPERT_ID,
  newClient,
  STAFF_CHAT_ID,
  startDeskWorld,
  TEST_BOT_ID,
} from '../support/fixtures'

/**
 * /report on a known data set: rows written straight into the tables the report reads (payments, consultations,
 * appeals, ledger reservations, refused messages), dated inside and outside October 2026 (desk zone Europe/Moscow),
 * and the numbers checked one by one; then the command itself in the staff group.
 */

const OCT = (day: number, hh = 12) => new Date(Date.UTC(2026, 9, day, hh - 3, 0, 0)) // Moscow = UTC+3

describe('report: numbers computed in SQL from the same tables', () => {
  let w: DeskWorld
  let desk: DeskRuntime
  const cons: number[] = []

  beforeAll(async () => {
    w = await startDeskWorld()
    desk = w.t.desk
    const db = w.deps.db
    const client = await newClient(w, { language_code: 'en' })
    const other = await newClient(w, { language_code: 'en' })
    const tariff = findTariff(desk, 'quick')!
    let charge = 0
    const consultation = async (state: string, created: Date, user = client.id) => {
      const o = await db
        .insertInto('orders')
        .values({ bot_id: TEST_BOT_ID, user_id: user, ...snapshotTariff(desk, tariff, 'en') })
        .returning('id')
        .executeTakeFirstOrThrow()
      const c = await sql<{
        id: number
      }>`insert into consultation (bot_id, order_id, user_id, state, created_at)
        values (${TEST_BOT_ID}, ${o.id}, ${user}, ${state}, ${created}) returning id`.execute(db)
      return { orderId: o.id, id: c.rows[0]!.id }
    }
    const pay = async (
      orderId: number,
      amount: number,
      created: Date,
      refunded: Date | null,
      kind = 'payment',
    ) => {
      await sql`insert into payment (bot_id, order_id, user_id, telegram_payment_charge_id, currency, total_amount,
          kind, created_at, refunded_at, refund_source)
        values (${TEST_BOT_ID}, ${orderId}, ${client.id}, ${`ch-${++charge}`}, 'XTR', ${amount}, ${kind}, ${created},
          ${refunded}, ${refunded ? 'admin' : null})`.execute(db)
    }

    // Consultations paid in October: active, closed x2, revoked, waiting; and one from September (closed).
    const a = await consultation('active', OCT(2))
    const b = await consultation('closed', OCT(3))
    const c = await consultation('closed', OCT(4))
    const d = await consultation('revoked', OCT(5))
    const e = await consultation('waiting', OCT(6))
    const old = await consultation('closed', new Date(Date.UTC(2026, 8, 20)))
    cons.push(a.id, b.id, c.id, d.id, e.id, old.id)
    // Payments: 100 + 150 + 500 (an overpayment) in October, 150 of them refunded in October; a September payment
    // of 200 refunded in October. Paid 750, refunded 350 (2), net 400.
    await pay(a.orderId, 100, OCT(2), null)
    await pay(b.orderId, 150, OCT(3), OCT(10))
    await pay(c.orderId, 500, OCT(4), null, 'overpayment')
    await pay(old.orderId, 200, new Date(Date.UTC(2026, 8, 20)), OCT(11))

    // Appeals accepted in October: three in time by the expert (15, 45, 25 business minutes: median 25), one late by
    // the admin (300, breached), one open and breached, one open due in two hours; one from September.
    let n = 0
    const appeal = async (
      consultationId: number,
      accepted: Date,
      r: { by?: number; minutes?: number; inTime?: boolean; breached?: boolean; due?: unknown },
    ) => {
      n++
      const due = r.due ?? new Date(accepted.getTime() + 4 * 3600_000)
      const answered = r.by !== undefined
      await sql`insert into desk_appeal (bot_id, consultation_id, number, state, request_id, opened_by_message_id,
          accepted_at, sla_minutes, due_at, first_response_at, answered_by, response_business_minutes, in_time,
          breached_at)
        values (${TEST_BOT_ID}, ${consultationId}, ${n}, ${answered ? 'answered' : 'open'}, ${`rq-${n}`}, ${n},
          ${accepted}, 240, ${due}, ${answered ? new Date(accepted.getTime() + (r.minutes ?? 0) * 60_000) : null},
          ${r.by ?? null}, ${r.minutes ?? null}, ${r.inTime ?? null},
          ${r.breached ? new Date(accepted.getTime() + 4 * 3600_000) : null})`.execute(db)
    }
    await appeal(a.id, OCT(2), { by: EXPERT_ID, minutes: 15, inTime: true })
    await appeal(b.id, OCT(3), { by: EXPERT_ID, minutes: 45, inTime: true })
    await appeal(c.id, OCT(4), { by: EXPERT_ID, minutes: 25, inTime: true })
    await appeal(c.id, OCT(5), { by: ADMIN_ID, minutes: 300, inTime: false, breached: true })
    await appeal(d.id, OCT(12), { breached: true })
    await appeal(a.id, OCT(13), { due: sql`now() + interval '2 hours'` })
    await appeal(old.id, new Date(Date.UTC(2026, 8, 20)), { by: EXPERT_ID, minutes: 500, inTime: false })

    // Ledger refusals in October: appeals exhausted x2 and a missing drafts account on this bot's consultations, an
    // expert's daily drafts cap on this bot; one refusal of another bot's account (not counted).
    let rq = 0
    const refusal = async (reason: string, scope: string, subject: string, unit: string, at = OCT(15)) => {
      const decision = { reason, line: 0, lines: [{ scope, subject, unit, accountId: null }] }
      await sql`insert into ledger_reservation (request_id, state, account_ids, amounts, fingerprint, decision,
          created_at)
        values (${`refused-${++rq}`}, 'refused', '{null}', '{1}', 'f', ${JSON.stringify(decision)}::jsonb, ${at})`.execute(
        db,
      )
    }
    await refusal('exhausted', 'consultation', String(a.id), 'appeals')
    await refusal('exhausted', 'consultation', String(b.id), 'appeals')
    await refusal('no_account', 'consultation', String(a.id), 'drafts')
    await refusal('exhausted', 'expert', `${TEST_BOT_ID}:${EXPERT_ID}`, 'drafts')
    await refusal('exhausted', 'expert', `999:${EXPERT_ID}`, 'drafts')
    await refusal('exhausted', 'consultation', String(a.id), 'appeals', new Date(Date.UTC(2026, 8, 20)))

    // Client messages refused at admission in October.
    let m = 0
    for (const reason of ['window_closed', 'window_closed', 'no_appeals'])
      await sql`insert into desk_message (bot_id, consultation_id, direction, kind, chat_id, message_id, from_id,
          content_type, content, state, refusal, created_at)
        values (${TEST_BOT_ID}, ${a.id}, 'in', 'copy', ${other.id}, ${++m}, ${other.id}, 'text', '{"text":"x"}',
          'refused', ${JSON.stringify({ reason, numbers: {} })}::jsonb, ${OCT(20)})`.execute(db)
  })
  afterAll(() => w?.stop())

  it('parses ranges in the desk zone', () => {
    const now = new Date('2026-11-15T09:00:00Z')
    expect(parseReportRange('', desk, now)).toEqual({
      ok: true,
      from: new Date(now.getTime() - 30 * 86_400_000),
      to: now,
    })
    expect(parseReportRange('7d', desk, now)).toMatchObject({
      ok: true,
      from: new Date('2026-11-08T09:00:00Z'),
    })
    expect(parseReportRange('2026-10-01 2026-10-31', desk, now)).toEqual({
      ok: true,
      from: new Date('2026-09-30T21:00:00Z'),
      to: new Date('2026-10-31T21:00:00Z'),
    })
    expect(parseReportRange('2026-10-01..2026-10-31', desk, now)).toMatchObject({ ok: true })
    expect(parseReportRange('2026-11-01', desk, now)).toEqual({
      ok: true,
      from: new Date('2026-10-31T21:00:00Z'),
      to: now,
    })
    for (const bad of ['yesterday', '2026-10-31 2026-10-01', '0d', '2026-13-01', '1 2 3'])
      expect(parseReportRange(bad, desk, now)).toEqual({ ok: false })
  })

  it('revenue, consultations by state, appeals, medians per expert, nearest to breach, refusals', async () => {
    const range = parseReportRange('2026-10-01 2026-10-31', desk, new Date())
    if (!range.ok) throw new Error('range')
    const r = await buildReport(w.deps.db, TEST_BOT_ID, range.from, range.to)
    expect(r.revenue).toEqual({
      paidCount: 3,
      paidStars: 750,
      refundedCount: 2,
      refundedStars: 350,
      netStars: 400,
    })
    expect(r.consultations).toEqual([
      { state: 'active', count: 1 },
      { state: 'closed', count: 2 },
      { state: 'revoked', count: 1 },
      { state: 'waiting', count: 1 },
    ])
    expect(r.appeals).toEqual({
      accepted: 6,
      answeredInTime: 3,
      answeredLate: 1,
      breached: 2,
      open: 2,
      openBreached: 1,
    })
    expect(r.experts).toEqual([
      { staffId: EXPERT_ID, answered: 3, inTime: 3, medianMinutes: 25 },
      { staffId: ADMIN_ID, answered: 1, inTime: 0, medianMinutes: 300 },
    ])
    expect(r.nearest.map((a) => [a.consultationId, a.breachedAt !== null])).toEqual([
      [cons[3], true],
      [cons[0], false],
    ])
    expect(r.ledger).toEqual([
      { reason: 'exhausted', scope: 'consultation', unit: 'appeals', count: 2 },
      { reason: 'exhausted', scope: 'expert', unit: 'drafts', count: 1 },
      { reason: 'no_account', scope: 'consultation', unit: 'drafts', count: 1 },
    ])
    expect(r.admission).toEqual([
      { reason: 'window_closed', scope: null, unit: null, count: 2 },
      { reason: 'no_appeals', scope: null, unit: null, count: 1 },
    ])

    const t = (key: string, p?: Record<string, string | number>) => w.deps.i18n.t('ru', key, p)
    const text = renderReport(t, desk, r, new Date())
    expect(text).toContain('оплачено 750 ⭐ (3 платежа), возвращено 350 ⭐ (2), итого 400 ⭐')
    expect(text).toContain(`эксперт id ${EXPERT_ID}: 25 мин по 3 ответам (3 вовремя)`)
    expect(text).toContain(`администратор id ${ADMIN_ID}: 300 мин по 1 ответу (0 вовремя)`)
    expect(text).toMatch(/консультация #\d+, вопрос №5: срок 12 окт\. 2026, 16:00, срок прошёл/)
    expect(text).toMatch(/вопрос №6: срок .*, осталось (1 ч 5\d мин|2 ч) рабочего времени/)
    expect(text).toContain('ничего не осталось (вопросы консультации): 2')
    expect(text).toContain('окно уже закрылось: 2')

    // Names instead of ids (src/experts/names.ts): the Telegram name stored for the expert, the desk document's
    // name for the admin (it wins over a stored one).
    await upsertProfile(w.deps.db, desk.botId, EXPERT_ID, { name: 'Анна Петрова' })
    await upsertProfile(w.deps.db, desk.botId, ADMIN_ID, { name: 'stored admin' })
    const named = {
      ...desk,
      expertSettings: { ...desk.expertSettings, names: { [String(ADMIN_ID)]: 'Борис' } },
    }
    const withNames = renderReport(t, named, r, new Date(), await reportNames(w.deps.db, named, r))
    expect(withNames).toContain('Анна Петрова: 25 мин по 3 ответам (3 вовремя)')
    expect(withNames).toContain('Борис: 300 мин по 1 ответу (0 вовремя)')
    expect(withNames).not.toContain(`id ${EXPERT_ID}`)
    expect(withNames).not.toContain(`id ${ADMIN_ID}`)
  })

  it('/report in the staff group: admins get it (optionally for a range), others are refused', async () => {
    const since = w.tg.mark()
    await w.tg.push(
      TEST_BOT_ID,
      w.tg.groupTopicMessage(STAFF_CHAT_ID, undefined, w.admin, '/report 2026-10-01 2026-10-31'),
    )
    const report = await w.tg.waitForSent(STAFF_CHAT_ID, /📊 Отчёт/, { since })
    expect(report.text).toContain('оплачено 750 ⭐ (3 платежа), возвращено 350 ⭐ (2), итого 400 ⭐')
    expect(report.text).toContain('активны 1, закрыты 2, возвращены 1, ждут старта 1')
    expect(report.text).toContain('Принято вопросов: 6; отвечено вовремя 3, с опозданием 1; нарушений SLA 2')
    await w.tg.push(TEST_BOT_ID, w.tg.groupTopicMessage(STAFF_CHAT_ID, undefined, w.expert, '/report'))
    await w.tg.waitForSent(STAFF_CHAT_ID, /только администраторам/, { since })
    await w.tg.push(
      TEST_BOT_ID,
      w.tg.groupTopicMessage(STAFF_CHAT_ID, undefined, w.admin, '/report last week'),
    )
    await w.tg.waitForSent(STAFF_CHAT_ID, /Формат: \/report/, { since })
    // An anonymous admin (posting as the group) is an admin; the default range is the last 30 days.
    await w.tg.push(
      TEST_BOT_ID,
      w.tg.groupTopicMessage(STAFF_CHAT_ID, undefined, w.admin, '/report', { senderChat: true }),
    )
    const recent = await w.tg.waitForSent(
      STAFF_CHAT_ID,
      (m) => /📊 Отчёт/.test(m.text ?? '') && m.message_id !== report.message_id,
      { since },
    )
    expect(recent.text).toContain('оплачено 0 ⭐')
  })
})
