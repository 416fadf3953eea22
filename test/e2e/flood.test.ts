import type { User } from 'grammy/types'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { termsHash } from '../../src/orders/orders.service'
import { notify } from '../../src/telegram/notify'
import { type BotApiStandIn, type RecordedCall, startBotApi } from '../support/bot-api'
import { type DeskWorld, eventually, inboxDrained, startDeskWorld, TEST_BOT_ID } from '../support/fixtures'

/**
 * A stranger's flood does not hold up anyone else (issue 23), end to end: the real app in one process against the
 * Bot API stand-in enforcing Telegram's limits (3 messages per window into a private chat, windows scaled x0.1 for
 * the stand-in and the app alike), with the shared budget on.
 *
 * 1. A stranger (no consultation, no payment) writes 100 messages; while the desk is refusing them, a client pays.
 *    The client's "✅ Your consultation … is active" goes out, and the stranger is told "no paid consultation" once,
 *    not a hundred times: before the fix each refused message queued one notification, both notification workers
 *    sat in the budget on the stranger's chat window, and the confirmation went after the stranger's refusals.
 * 2. Twenty unknown commands from a stranger get one "unknown command" (before: twenty).
 * 3. Forty notifications queued for a chat whose window is closed (a 429's retry_after), then one for another chat:
 *    the other's goes out before any of the forty (their jobs give their workers up and come back when the window
 *    opens; before the fix both workers sat in the budget on the closed chat and the other's went after them), and
 *    the forty go once it opens, within Telegram's limits. The window is closed on purpose, not filled by the forty
 *    themselves: how many of them fit into the open windows while the workers pass over them depends on the CPU
 *    (under load every one of them found room), so the order is exact only with the window closed.
 * Positions and counts are asserted, never times.
 */

const SCALE = 0.1
const FLOOD = 100

let w: DeskWorld
let tg: BotApiStandIn
beforeAll(async () => {
  tg = await startBotApi({ defaultWaitTimeoutMs: 120_000, limits: { scale: SCALE } })
  w = await startDeskWorld({
    tg,
    throttled: true,
    configure: (c) => {
      c.telegramLimits.windowScale = SCALE
    },
  })
})
afterAll(async () => {
  await w?.stop()
  await tg?.close()
})

const sends = (filter: (c: RecordedCall) => boolean) =>
  tg.callsTo('sendMessage', undefined, { ok: true }).filter(filter)

async function refusedRows(chatId: number): Promise<{ n: number; withContent: number }> {
  const r = await sql<{ n: number; c: number }>`
    select count(*)::int as n, count(content)::int as c from desk_message
      where bot_id = ${TEST_BOT_ID} and chat_id = ${chatId} and state = 'refused'`.execute(w.deps.db)
  return { n: r.rows[0]!.n, withContent: r.rows[0]!.c }
}

/** Notification jobs to a chat not finished yet (a deferred one is written again, so it counts until sent). */
async function notifyJobsLeft(chatId: number): Promise<number> {
  const r = await sql<{ n: number }>`select count(*)::int as n from pgboss.job
    where name like 'tg.notify%' and (data->>'chatId')::bigint = ${chatId} and state < 'completed'`.execute(
    w.deps.db,
  )
  return r.rows[0]!.n
}

describe('a stranger flooding the bot', () => {
  it('a client paying during a 100-message flood is confirmed at once; the stranger is told once', async () => {
    const stranger: User = tg.user({ first_name: 'Stranger', language_code: 'en' })
    const client: User = tg.user({ first_name: 'Payer', language_code: 'en' })

    // The client's invoice and pre-checkout before the flood.
    const since = tg.mark()
    await tg.push(TEST_BOT_ID, tg.callback(client, `tf:buy:quick:${termsHash(w.t.desk.terms.version)}`))
    const invoice = await tg.waitFor('sendInvoice', { chat_id: client.id }, { since })
    const p = invoice.payload as { payload: string; prices: { amount: number }[] }
    const amount = p.prices[0]!.amount
    const q = tg.preCheckout(client, { invoice_payload: p.payload, total_amount: amount })
    await tg.push(TEST_BOT_ID, q)
    await tg.waitFor('answerPreCheckoutQuery', { pre_checkout_query_id: q.pre_checkout_query!.id, ok: true })

    // The flood; the payment once the desk is refusing it.
    for (let i = 0; i < FLOOD; i++) await tg.push(TEST_BOT_ID, tg.privateText(stranger, `hello ${i}`))
    await eventually(async () => (await refusedRows(stranger.id)).n >= 10 || undefined, 'the flood refused')
    await tg.push(
      TEST_BOT_ID,
      tg.successfulPayment(client, { invoice_payload: p.payload, total_amount: amount }),
    )
    await tg.waitForSent(client.id, /Your consultation .* is active/)

    // Every message of the flood refused, and every notification job for the stranger finished.
    await eventually(
      async () => (await refusedRows(stranger.id)).n === FLOOD || undefined,
      'all refused',
      60_000,
    )
    await eventually(
      async () => (await notifyJobsLeft(stranger.id)) === 0 || undefined,
      'stranger jobs done',
      150_000,
    )

    const all = sends(() => true)
    const confirmation = all.findIndex(
      (c) => c.payload.chat_id === client.id && /is active/.test(String(c.payload.text)),
    )
    const toStranger = all.filter((c) => c.payload.chat_id === stranger.id)
    const beforeConfirmation = all.slice(0, confirmation).filter((c) => c.payload.chat_id === stranger.id)
    expect(confirmation).toBeGreaterThanOrEqual(0)
    // One refusal for the whole flood (one per chat and reason in five minutes), not one per message.
    expect(toStranger.map((c) => c.payload.text)).toEqual([expect.stringMatching(/no paid consultation/)])
    expect(beforeConfirmation.length).toBeLessThanOrEqual(1)
    // A stranger's messages are kept without what they wrote.
    expect(await refusedRows(stranger.id)).toEqual({ n: FLOOD, withContent: 0 })
    expect(tg.limiter!.refused, JSON.stringify([...tg.limiter!.refusedBy])).toBe(0)
  }, 180_000)

  it('twenty unknown commands from a stranger: one "unknown command", not twenty', async () => {
    const stranger: User = tg.user({ first_name: 'Commander', language_code: 'en' })
    for (let i = 0; i < 20; i++) await tg.push(TEST_BOT_ID, tg.command(stranger, `foo${i}`))
    await tg.waitForSent(stranger.id, /Unknown command/)
    await inboxDrained(w.deps.db, 60_000)
    await eventually(async () => (await notifyJobsLeft(stranger.id)) === 0 || undefined, 'jobs done', 60_000)
    expect(tg.texts(stranger.id).filter((t) => /Unknown command/.test(t ?? ''))).toHaveLength(1)
  }, 120_000)

  it('forty notifications for a chat whose window is closed do not hold up the next chat: it goes first', async () => {
    const busy: User = tg.user({ first_name: 'Busy', language_code: 'en' })
    const other: User = tg.user({ first_name: 'Other', language_code: 'en' })
    const mark = tg.mark()
    const note = (chatId: number, n: number) => ({
      botId: TEST_BOT_ID,
      chatId,
      lang: 'en',
      key: 'desk-refused-no-consultation',
      dedupeKey: `test:flood:${chatId}:${n}`,
    })
    // Telegram answered 429 for the busy chat (retry_after 60 s): its window is closed in every process. The product's
    // own statement (tg_budget_block), as the Api's transformer runs it on a 429. Opened below, once the other's is out.
    const key = `chat:${TEST_BOT_ID}:${busy.id}`
    await sql`select tg_budget_block(${key}, 60)`.execute(w.deps.db)
    // The forty in one commit, the other chat's in a later one: pg-boss takes jobs by priority, then by created_on
    // (the transaction's start: one commit's jobs tie and go in random id order), so the other's is behind all forty.
    await w.deps.jobs.transaction(w.deps.db, async (_trx, outbox) => {
      for (let i = 0; i < 40; i++) await notify(outbox, note(busy.id, i))
    })
    await w.deps.jobs.transaction(w.deps.db, (_trx, outbox) => notify(outbox, note(other.id, 0)))
    await tg.waitForSent(other.id, /no paid consultation/)
    const busyBefore = tg
      .callsTo('sendMessage', undefined, { ok: true, since: mark })
      .filter((c) => c.payload.chat_id === busy.id).length
    expect(busyBefore, 'sends to the busy chat before the other').toBe(0)

    // The window opens (the block lifted, the forty's jobs written again for it due now): the forty go, each once,
    // within the chat's window (the stand-in refused nothing).
    await sql`update tg_budget set blocked_until = now() where key = ${key}`.execute(w.deps.db)
    await eventually(
      async () => {
        await sql`update pgboss.job set start_after = now() where name = 'tg.notify' and state = 'created'
          and (data->>'chatId')::bigint = ${busy.id} and start_after > now()`.execute(w.deps.db)
        return (await notifyJobsLeft(busy.id)) === 0 || undefined
      },
      'the forty sent',
      150_000,
    )
    const all = tg.callsTo('sendMessage', undefined, { ok: true, since: mark })
    expect(all.filter((c) => c.payload.chat_id === busy.id)).toHaveLength(40)
    expect(all.findIndex((c) => c.payload.chat_id === other.id)).toBe(0)
    expect(tg.limiter!.refused, JSON.stringify([...tg.limiter!.refusedBy])).toBe(0)
  }, 180_000)
})
