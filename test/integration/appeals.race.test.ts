import type { Message, User } from 'grammy/types'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { admitClientMessage } from '../../src/consultations/admission'
import { recordStaffAnswer } from '../../src/consultations/answers'
import { checkInvariants } from '../../src/ledger/ledger.invariants'
import { appeals, type DeskWorld, paidConsultation, startDeskWorld, TEST_BOT_ID } from '../support/fixtures'

/**
 * Races on the appeals allowance, many times, through the real admission (one transaction per message, each on its
 * own pooled connection) against real PostgreSQL. The bot runs without workers: nothing is sent, only decided.
 */

const ROUNDS = 30

describe('appeals: racing messages', () => {
  let w: DeskWorld
  beforeAll(async () => {
    w = await startDeskWorld({
      role: 'bot',
      configure: (c) => {
        const quick = c.desks[0]!.tariffs[0]!
        c.desks[0]!.tariffs.push({ ...quick, code: 'one', appeals: 1 })
      },
    })
  })
  afterAll(() => w?.stop())

  const message = (client: User, text: string): Message => w.tg.privateText(client, text).message
  const admit = (m: Message) => admitClientMessage(w.deps, w.t.desk, { message: m, lang: 'en' })
  const answer = (consultationId: number) =>
    w.deps.jobs.transaction(w.deps.db, (trx, outbox) =>
      recordStaffAnswer(trx, outbox, w.deps, w.t.desk, {
        consultationId,
        staffId: w.expert.id,
        item: { kind: 'text', text: 'answer' },
      }),
    )

  it(`two first messages on the last unit: one opens the appeal, the other joins it (${ROUNDS} times)`, async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const { client, consultationId } = await paidConsultation(w, {}, { tariff: 'one' })
      const [a, b] = await Promise.all([admit(message(client, 'a')), admit(message(client, 'b'))])
      expect([a!.status, b!.status]).toEqual(['accepted', 'accepted'])
      const opened = [a, b].filter((r) => r!.status === 'accepted' && r!.openedAppeal)
      expect(opened).toHaveLength(1)
      const list = await appeals(w, consultationId)
      expect(list).toHaveLength(1)
      if (a!.status === 'accepted' && b!.status === 'accepted') expect(a!.appealId).toBe(b!.appealId)

      // Answered: the unit is used, and the next two are refused with the same numbers.
      await answer(consultationId)
      const [c, d] = await Promise.all([admit(message(client, 'c')), admit(message(client, 'd'))])
      for (const r of [c!, d!]) {
        expect(r.status).toBe('refused')
        if (r.status === 'refused')
          expect(r.refusal).toEqual({
            reason: 'no_appeals',
            numbers: {
              granted: 1,
              used: 1,
              held: 0,
              left: 0,
              ledgerReason: 'exhausted',
              // The end of the account's period (a plan's refusal names the next period's start).
              periodEnd: expect.any(String),
            },
          })
      }
    }
    expect((await checkInvariants(w.deps.db)).ok).toBe(true)
  })

  it(`an answer racing two messages on the last unit: whatever the order, no unit is taken twice (${ROUNDS} times)`, async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const { client, consultationId } = await paidConsultation(w, {}, { tariff: 'one' })
      const first = await admit(message(client, 'question'))
      expect(first.status === 'accepted' && first.openedAppeal).toBe(true)
      const [m1, , m2] = await Promise.all([
        admit(message(client, 'x')),
        answer(consultationId),
        admit(message(client, 'y')),
      ])
      const [appeal] = await appeals(w, consultationId)
      expect(await appeals(w, consultationId)).toHaveLength(1)
      for (const r of [m1!, m2!]) {
        // Before the answer: part of the appeal. After it: refused, the allowance being used up.
        if (r.status === 'accepted') {
          expect(r.appealId).toBe(appeal!.id)
          expect(r.acceptedAt.getTime()).toBeLessThanOrEqual(appeal!.first_response_at!.getTime())
        } else {
          expect(r.status).toBe('refused')
          if (r.status === 'refused')
            expect(r.refusal.numbers).toMatchObject({ granted: 1, used: 1, held: 0 })
        }
      }
    }
    expect((await checkInvariants(w.deps.db)).ok).toBe(true)
  })

  it('twenty messages at once on a fresh consultation: one appeal, one unit held, every message stored once', async () => {
    for (let i = 0; i < 5; i++) {
      const { client, consultationId } = await paidConsultation(w)
      const msgs = Array.from({ length: 20 }, (_, k) => message(client, `m${k}`))
      // Each also delivered twice, as Telegram may.
      const results = await Promise.all([...msgs, ...msgs].map((m) => admit(m)))
      expect(results.filter((r) => r.status === 'accepted')).toHaveLength(20)
      expect(results.filter((r) => r.status === 'duplicate')).toHaveLength(20)
      expect(results.filter((r) => r.status === 'accepted' && r.openedAppeal)).toHaveLength(1)
      const account = await w.deps.db
        .selectFrom('ledger_account')
        .selectAll()
        .where('subject', '=', String(consultationId))
        .where('unit', '=', 'appeals')
        .executeTakeFirstOrThrow()
      expect(account).toMatchObject({ granted: 3, reserved: 1, used: 0 })
      const stored = await w.deps.db
        .selectFrom('desk_message')
        .select('accepted_at')
        .where('bot_id', '=', TEST_BOT_ID)
        .where('chat_id', '=', client.id)
        .orderBy('id')
        .execute()
      expect(stored).toHaveLength(20)
    }
  })
})
