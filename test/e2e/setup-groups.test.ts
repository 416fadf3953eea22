import type { User } from 'grammy/types'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { termsHash } from '../../src/orders/orders.service'
import { changeDesk } from '../../src/settings/settings'
import { startBotApi } from '../support/bot-api'
import {
  ADMIN_ID,
  activeConsultation,
  type DeskWorld,
  eventually,
  inboxDrained,
  newClient,
  restartWorld,
  STAFF_CHAT_ID,
  startDeskWorld,
  TEST_BOT_ID,
} from '../support/fixtures'

/**
 * Binding staff groups by adding the bot (issue 24, src/setup/groups.ts), black-box through the stand-in: the bot
 * added to a group without Topics and without rights says which switches are missing, re-checks on each rights
 * change, asks to confirm once everything is there; the confirmation is checked on press; a stranger's group is
 * left; a bound group that breaks tells the admins once, stops selling and shows on /health.
 */

const ALL = { can_manage_topics: true, can_pin_messages: true, can_delete_messages: true }

describe('staff groups bound by adding the bot', () => {
  let w: DeskWorld
  let admin: User

  beforeAll(async () => {
    const tg = await startBotApi({ defaultWaitTimeoutMs: 15_000 })
    w = await startDeskWorld({ tg })
    admin = w.admin
  })
  afterAll(() => w?.stop())

  const adminTexts = (since: number) => w.tg.sentTo(ADMIN_ID, { since }).map((m) => m.text ?? '')
  const push = async (u: Parameters<DeskWorld['tg']['push']>[1]) => {
    const r = await w.tg.push(TEST_BOT_ID, u)
    await inboxDrained(w.deps.db)
    return r
  }
  const desk = () => w.deps.desk(TEST_BOT_ID)

  it('asks for updates of the bot membership (my_chat_member) from Telegram', async () => {
    const allowed = await eventually(async () => w.tg.lastAllowedUpdates(TEST_BOT_ID), 'a getUpdates')
    expect(allowed).toContain('my_chat_member')
  })

  it('refuses a group without Topics and rights, in words; re-checks on each change; binds after confirmation', async () => {
    const g = w.tg.supergroup({ title: 'Team B' })
    let mark = w.tg.mark()
    await push(w.tg.setBotMember(TEST_BOT_ID, g.id, admin, 'member'))
    const first = await w.tg.waitForSent(ADMIN_ID, /cannot be the staff group yet/, { since: mark })
    expect(first.text).toContain('Turn on Topics in the group')
    expect(first.text).toContain('Make me an admin of the group')
    expect(desk().staffGroups).toBeUndefined()

    // Topics on and Manage topics granted: two switches left, named.
    w.tg.setForum(g.id, true)
    mark = w.tg.mark()
    await push(w.tg.setBotMember(TEST_BOT_ID, g.id, admin, { rights: { can_manage_topics: true } }))
    const second = await w.tg.waitForSent(ADMIN_ID, /still cannot be the staff group/, { since: mark })
    expect(second.text).toContain('Pin messages')
    expect(second.text).toContain('Delete messages')
    expect(second.text).not.toContain('Topics')
    expect(second.text).not.toContain('Manage topics')

    // Everything there: the question, with its button.
    mark = w.tg.mark()
    await push(w.tg.setBotMember(TEST_BOT_ID, g.id, admin, { rights: ALL }))
    const ask = await w.tg.waitForSent(ADMIN_ID, /Use «Team B» as the staff group\?/, { since: mark })
    const button = ask.reply_markup?.inline_keyboard?.[0]?.[0] as { callback_data?: string } | undefined
    expect(button?.callback_data).toBe(`sg:use:${g.id}`)

    // Pressed by someone who does not run the desk: refused, nothing bound.
    const stranger = await newClient(w, { first_name: 'Mallory' })
    mark = w.tg.mark()
    await push(w.tg.callback(stranger, `sg:use:${g.id}`))
    const refusal = await w.tg.waitFor('answerCallbackQuery', {}, { since: mark })
    expect(refusal.payload.text).toMatch(/Only the desk's owner or an admin/)
    expect(desk().staffGroups).toBeUndefined()

    // Pressed by the admin: the desk lists both groups, each with every expert.
    mark = w.tg.mark()
    await push(w.tg.callback(admin, `sg:use:${g.id}`, ask))
    await w.tg.waitForSent(ADMIN_ID, /«Team B» is one more staff group now/, { since: mark })
    await eventually(
      async () => desk().staffGroups?.some((x) => x.chatId === g.id),
      'the desk to list Team B',
    )
    expect(desk().staffGroups!.map((x) => x.chatId)).toEqual([STAFF_CHAT_ID, g.id])
    expect(desk().staffChatId).toBe(STAFF_CHAT_ID)

    // The same press again (a stale button, or Telegram redelivering): nothing changes.
    mark = w.tg.mark()
    await push(w.tg.callback(admin, `sg:use:${g.id}`, ask))
    const again = await w.tg.waitFor('answerCallbackQuery', {}, { since: mark })
    expect(again.payload.text).toMatch(/is a staff group already/)
    expect(desk().staffGroups).toHaveLength(2)
  })

  it('a stranger adding the bot to their group: the bot leaves it, nobody is asked', async () => {
    const g = w.tg.forum({ title: 'Somewhere else' })
    const stranger = await newClient(w, { first_name: 'Oscar' })
    const mark = w.tg.mark()
    await push(w.tg.setBotMember(TEST_BOT_ID, g.id, stranger, { rights: ALL }))
    await w.tg.waitFor('leaveChat', { chat_id: g.id }, { since: mark })
    expect(adminTexts(mark).filter((t) => t.includes('Somewhere else'))).toEqual([])
    expect(desk().staffGroups?.some((x) => x.chatId === g.id)).toBeFalsy()
  })

  it('the bot removed from the staff group while a consultation runs: admins told once, selling stops, /health says why', async () => {
    const client = await newClient(w, { first_name: 'Carol' })
    await activeConsultation(w, client)
    const buyer = await newClient(w, { first_name: 'Bella' })
    // Bella has an invoice from before the break.
    let mark = w.tg.mark()
    await push(w.tg.callback(buyer, `tf:buy:quick:${termsHash(w.t.desk.terms.version)}`))
    const invoice = await w.tg.waitFor('sendInvoice', { chat_id: buyer.id }, { since: mark })
    const inv = invoice.payload as { payload: string; prices: { amount: number }[] }

    mark = w.tg.mark()
    const removed = await push(w.tg.setBotMember(TEST_BOT_ID, STAFF_CHAT_ID, admin, 'kicked'))
    await w.tg.waitForSent(ADMIN_ID, /I was removed from the staff group «Staff»/, { since: mark })
    // Telegram delivering it again: still one notice.
    await w.tg.redeliver(TEST_BOT_ID, removed)
    await inboxDrained(w.deps.db)
    await w.deps.jobs.boss.getQueues() // a round trip, so the notify queue has had its turn
    await eventually(
      async () =>
        w.tg.texts(ADMIN_ID, { since: mark }).filter((t) => t?.includes('removed from')).length === 1,
      'one notice',
    )

    // Paying that invoice now is refused before any Star is taken.
    const q = w.tg.preCheckout(buyer, { invoice_payload: inv.payload, total_amount: inv.prices[0]!.amount })
    await w.tg.push(TEST_BOT_ID, q)
    const answer = await w.tg.waitFor('answerPreCheckoutQuery', {
      pre_checkout_query_id: q.pre_checkout_query!.id,
    })
    expect(answer.payload.ok).toBe(false)
    expect(answer.payload.error_message).toMatch(/not open right now, so nothing was charged/)

    // A new client cannot buy; /health shows the reason (and stays 200: the process itself works).
    mark = w.tg.mark()
    await push(w.tg.command(buyer, '/tariffs'))
    await w.tg.waitForSent(buyer.id, /not taking new orders/, { since: mark })
    const health = await eventually(async () => {
      const r = await fetch(`http://127.0.0.1:${w.t.app.httpPort}/health`)
      const body = (await r.json()) as { notes?: Record<string, string> }
      return body.notes?.[`desk:${w.t.desk.slug}`]
        ? { status: r.status, note: body.notes[`desk:${w.t.desk.slug}`] }
        : undefined
    }, '/health to note the desk')
    expect(health.status).toBe(200)
    expect(health.note).toContain('not selling')
    expect(health.note).toContain('staff group «Staff»: the bot is not in the group')

    // The running consultation goes on: the client's question is taken (not refused as "not taking new orders").
    mark = w.tg.mark()
    await push(w.tg.privateMessage(client, { text: 'Is my consultation still on?' }))
    expect(w.tg.texts(client.id, { since: mark }).some((t) => t?.includes('not taking new orders'))).toBe(
      false,
    )

    // Back, with one right missing: told what is missing.
    mark = w.tg.mark()
    await push(
      w.tg.setBotMember(TEST_BOT_ID, STAFF_CHAT_ID, admin, {
        rights: { can_manage_topics: true, can_pin_messages: true },
      }),
    )
    const broken = await w.tg.waitForSent(ADMIN_ID, /The staff group «Staff» changed/, { since: mark })
    expect(broken.text).toContain('Delete messages')

    // Fixed: told once, selling again, the note gone.
    mark = w.tg.mark()
    await push(w.tg.setBotMember(TEST_BOT_ID, STAFF_CHAT_ID, admin, { rights: ALL }))
    await w.tg.waitForSent(ADMIN_ID, /«Staff» works again/, { since: mark })
    mark = w.tg.mark()
    await push(w.tg.command(buyer, '/tariffs'))
    await w.tg.waitFor('sendMessage', { chat_id: buyer.id }, { since: mark })
    expect(w.tg.texts(buyer.id, { since: mark }).some((t) => t?.includes('not taking new orders'))).toBe(
      false,
    )
    await eventually(async () => {
      const body = (await (await fetch(`http://127.0.0.1:${w.t.app.httpPort}/health`)).json()) as {
        notes?: Record<string, string>
      }
      return body.notes?.[`desk:${w.t.desk.slug}`] === undefined
    }, 'the note to clear')
  })

  it('the start-up check finds a configured group without Topics: admins told, nothing sold', async () => {
    // The settings name a group the bot is in, but Topics are off there (the YAML way of setting up).
    const g = w.tg.supergroup({ title: 'Old group' })
    await changeDesk(w.deps.db, TEST_BOT_ID, { userId: null, source: 'import' }, 'any', (d) => {
      d.staffGroups = [
        ...(d.staffGroups ?? [{ chatId: d.staffChatId!, experts: d.staff.experts }]),
        { chatId: g.id, experts: [] },
      ]
    })
    // A restart: the app looks at every group its settings name, once, at start.
    const mark = w.tg.mark()
    await w.t.app.stop()
    w = await restartWorld(w)
    // Nobody made this change in Telegram: the admins are told in the desk's language (ru).
    const told = await w.tg.waitForSent(ADMIN_ID, /В группе сотрудников «Old group» что-то изменилось/, {
      since: mark,
    })
    expect(told.text).toContain('Включите «Темы»')
    const buyer = await newClient(w, { first_name: 'Dora' })
    await push(w.tg.command(buyer, '/tariffs'))
    await w.tg.waitForSent(buyer.id, /not taking new orders/)
  })
})
