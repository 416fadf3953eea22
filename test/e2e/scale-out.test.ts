import type { User } from 'grammy/types'
import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { termsHash } from '../../src/orders/orders.service'
import { EXPERT_ID, STAFF_CHAT_ID, TEST_BOT_ID } from '../support/app'
import type { RecordedCall } from '../support/bot-api'
import { eventually } from '../support/fixtures'
import { type AppProcess, configFile, isRunning, spawnApp, stopGracefully } from '../support/processes'
import {
  activeClient,
  deliver,
  expectAllDelivered,
  type FaultWorld,
  type Sent,
  useFaultWorld,
} from '../support/resilience'
import { TcpProxy } from '../support/tcp-proxy'

/**
 * Scale-out (issue 18): two bot processes (webhook, behind a balancer: Telegram knows one URL) and two worker
 * processes on one database, under a burst of client messages and staff replies at once, while clients pay (the
 * successful payment delivered twice, as Telegram redelivers, and landing on either bot process). Every message is
 * delivered once, each consultation has one topic, every staff reply reaches its client once, and no payment or
 * activation happens twice. No kills here (tests/e2e/faults-kill.test.ts does that): duplicates must be zero.
 */

const CLIENTS = 6
const PER_CLIENT = 12
/** Two replies per topic: a client message after an answer opens a new question, and the tariff allows three. */
const REPLIES = 2
const PAYERS = 3

let w: FaultWorld
useFaultWorld((x) => {
  w = x
})

/** The real payment path, over the webhook; the successful payment is delivered twice (same update). */
async function pay(user: User): Promise<void> {
  const since = w.tg.mark()
  await deliver(w.tg, w.tg.callback(user, `tf:buy:quick:${termsHash(w.desk.terms.version)}`))
  const invoice = await w.tg.waitFor('sendInvoice', { chat_id: user.id }, { since })
  const p = invoice.payload as { payload: string; prices: { amount: number }[] }
  const amount = p.prices[0]!.amount
  const q = w.tg.preCheckout(user, { invoice_payload: p.payload, total_amount: amount })
  await deliver(w.tg, q)
  await w.tg.waitFor('answerPreCheckoutQuery', { pre_checkout_query_id: q.pre_checkout_query!.id, ok: true })
  const paid = await deliver(
    w.tg,
    w.tg.successfulPayment(user, { invoice_payload: p.payload, total_amount: amount }),
  )
  await Promise.all([w.tg.redeliver(TEST_BOT_ID, paid), w.tg.redeliver(TEST_BOT_ID, paid)])
}

describe('scale-out: two bot processes and two workers on one database', () => {
  it('a burst of client messages and staff replies, and payments delivered twice: each thing happens once', async () => {
    const expert = w.tg.user({ id: EXPERT_ID, first_name: 'Ed', language_code: 'ru' })
    const clients = []
    for (let i = 0; i < CLIENTS; i++) clients.push(await activeClient(w, i))
    const payers = Array.from({ length: PAYERS }, (_, i) =>
      w.tg.user({ first_name: `Payer${i}`, language_code: 'en' }),
    )

    const balancer = await TcpProxy.start([])
    const config = configFile({ mode: 'webhook', publicUrl: `http://127.0.0.1:${balancer.port}` })
    const procs: AppProcess[] = (['bot', 'worker', 'bot', 'worker'] as const).map((role, i) =>
      spawnApp({ name: `${role}-${i}`, role, databaseUrl: w.db.url, apiRoot: w.tg.root, configFile: config }),
    )
    try {
      await Promise.all(procs.map((p) => p.started))
      balancer.setTargets(
        procs.filter((p) => p.role === 'bot').map((p) => ({ host: '127.0.0.1', port: p.port! })),
      )
      // Every consultation's topic exists (the workers create them from the activation's job).
      const threads = new Map<number, number>()
      for (const c of clients) {
        const r = await eventually(
          () =>
            w.db.db
              .selectFrom('desk_route')
              .select('message_thread_id')
              .where('consultation_id', '=', c.consultationId)
              .where('state', '=', 'active')
              .executeTakeFirst(),
          `the topic of consultation ${c.consultationId}`,
          60_000,
        )
        threads.set(c.consultationId, r.message_thread_id)
      }

      // The burst: every client's messages back to back (each chat in order), the expert's replies in every topic
      // and the payments, all at once.
      const replyIds: number[] = []
      const [sent] = await Promise.all([
        Promise.all(
          clients.map(async (c, k): Promise<Sent> => {
            const ids: number[] = []
            for (let i = 0; i < PER_CLIENT; i++) {
              const d = w.tg.privateText(c.user, `burst ${i} from client ${k}`)
              ids.push(d.message.message_id)
              await deliver(w.tg, d)
            }
            return { ...c, messageIds: ids }
          }),
        ),
        Promise.all(
          clients.map(async (c, k) => {
            for (let i = 0; i < REPLIES; i++) {
              const d = w.tg.groupTopicMessage(
                STAFF_CHAT_ID,
                threads.get(c.consultationId)!,
                expert,
                `reply ${i} to ${k}`,
              )
              replyIds.push(d.message.message_id)
              await deliver(w.tg, d)
            }
          }),
        ),
        Promise.all(payers.map(pay)),
      ])

      // Client messages: each accepted and copied once, in order, one topic per consultation.
      const duplicates = await expectAllDelivered(w, sent)
      expect(duplicates).toBe(0)

      // Staff replies: each delivered to its client once.
      const count = async () => {
        const r = await sql<{ n: number }>`
          select count(*)::int as n from desk_message
            where bot_id = ${TEST_BOT_ID} and chat_id = ${STAFF_CHAT_ID} and direction = 'out' and state = 'sent'
              and message_id = any(${replyIds}::bigint[])`.execute(w.db.db)
        return r.rows[0]!.n
      }
      await eventually(async () => (await count()) === replyIds.length, 'every reply delivered', 60_000)
      for (const id of replyIds) {
        const copies = w.tg
          .callsTo(['copyMessage', 'copyMessages'], (p) => p.from_chat_id === STAFF_CHAT_ID, { ok: true })
          .filter((c: RecordedCall) => (c.payload.message_ids ?? [c.payload.message_id]).includes(id))
        expect(copies, `reply ${id} copied once`).toHaveLength(1)
      }

      // Payments: one payment row, one consultation, one activation notice each, whichever process took which copy.
      for (const u of payers) {
        const c = await eventually(async () => {
          const r = await w.db.db
            .selectFrom('consultation')
            .select(['id', 'state'])
            .where('bot_id', '=', TEST_BOT_ID)
            .where('user_id', '=', u.id)
            .execute()
          return r.length === 1 && r[0]!.state === 'active' ? r[0] : undefined
        }, `the consultation of payer ${u.id}`)
        const payments = await w.db.db
          .selectFrom('payment')
          .select('id')
          .where('bot_id', '=', TEST_BOT_ID)
          .where('user_id', '=', u.id)
          .execute()
        expect(payments).toHaveLength(1)
        const activations = await sql<{ n: number }>`
          select count(*)::int as n from audit_log where action = 'consultation.activated'
            and subject_id = ${String(c.id)}`.execute(w.db.db)
        expect(activations.rows[0]!.n).toBe(1)
        // The activation's grant once: the tariff's 3 questions, not 6.
        const grants = await sql<{ granted: string }>`
          select granted from ledger_account
            where scope = 'consultation' and subject = ${String(c.id)} and unit = 'appeals'`.execute(w.db.db)
        expect(grants.rows.map((r) => Number(r.granted))).toEqual([3])
        await eventually(
          async () => w.tg.texts(u.id).filter((t) => /is active/.test(t ?? '')).length > 0 || undefined,
          'the activation notice',
        )
      }
      // Both bot processes took webhook connections, and nobody died.
      for (const p of procs.filter((x) => x.role === 'bot'))
        expect(balancer.connectionsTo.get(p.port!) ?? 0, `${p.name} took connections`).toBeGreaterThan(0)
      for (const p of procs) expect(isRunning(p), `${p.name} is running`).toBe(true)
      for (const p of payers)
        expect(w.tg.texts(p.id).filter((t) => /is active/.test(t ?? ''))).toHaveLength(1)
    } catch (e) {
      for (const p of procs) console.error(`--- ${p.name}\n${p.output().slice(-2500)}`)
      // The processes' warnings in the error itself: a CI log may keep only the failure's summary.
      throw new Error(`${(e as Error).message}\n${procs.map((p) => p.problems()).join('\n')}`, { cause: e })
    } finally {
      await Promise.all(procs.map((p) => stopGracefully(p)))
      await balancer.close()
    }
  }, 240_000)
})
