import type { User } from 'grammy/types'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { changeDesk } from '../../src/settings/settings'
import { startBotApi } from '../support/bot-api'
import {
  ADMIN_ID,
  type DeskWorld,
  EXPERT_ID,
  eventually,
  inboxDrained,
  startDeskWorld,
  TEST_BOT_ID,
} from '../support/fixtures'

/**
 * Staff joined by link (issue 24, src/setup/invites.ts) and the staff list (src/setup/staff-admin.ts), black-box
 * through the stand-in on real PostgreSQL: an invite makes its opener staff with the role and their Telegram name;
 * an expired or used-up link is refused and changes nothing; two people opening the last use at once: one joins;
 * owner-only actions refused to admins and experts, also when the button is pressed anyway.
 */
describe('staff invites and the staff list', () => {
  let w: DeskWorld
  let admin: User
  let owner: User

  beforeAll(async () => {
    const tg = await startBotApi({ defaultWaitTimeoutMs: 15_000 })
    w = await startDeskWorld({ tg })
    admin = w.admin
    owner = w.tg.user({ first_name: 'Olga', language_code: 'en' })
    // The desk's owner (claimed in another test): one of the admins.
    await changeDesk(w.deps.db, TEST_BOT_ID, { userId: null, source: 'import' }, 'any', (d) => {
      d.staff.admins.push(owner.id)
      d.staff.owner = owner.id
    })
    await eventually(async () => w.deps.desk(TEST_BOT_ID).staff.owner === owner.id, 'the owner')
  })
  afterAll(() => w?.stop())

  const desk = () => w.deps.desk(TEST_BOT_ID)
  const push = async (u: Parameters<DeskWorld['tg']['push']>[1]) => {
    await w.tg.push(TEST_BOT_ID, u)
    await inboxDrained(w.deps.db)
  }
  /** Sends /invite and returns the code in the link the bot answered with. */
  const invite = async (by: User, args: string): Promise<string> => {
    const mark = w.tg.mark()
    await push(w.tg.command(by, '/invite', args))
    const m = await w.tg.waitForSent(by.id, /start=inv_/, { since: mark })
    return /start=(inv_[A-Za-z0-9_-]+)/.exec(m.text!)![1]!
  }
  const opens = async (u: User, code: string): Promise<string> => {
    const mark = w.tg.mark()
    await push(w.tg.command(u, '/start', code))
    return (await w.tg.waitFor('sendMessage', { chat_id: u.id }, { since: mark })).payload.text as string
  }

  it('an expert invite: the opener is an expert, named by their Telegram name; the inviter is told; a second use refused', async () => {
    const code = await invite(owner, 'expert')
    const eva = w.tg.user({ first_name: 'Eva', last_name: 'Lind', language_code: 'ru' })
    expect(await opens(eva, code)).toMatch(/теперь вы эксперт/)
    await eventually(async () => desk().staff.experts.includes(eva.id), 'Eva on the staff')
    expect(desk().expertSettings.names[String(eva.id)]).toBe('Eva Lind')
    await w.tg.waitForSent(owner.id, /Eva Lind joined the desk as an expert/)
    // The same person again: told they are in, no use spent twice.
    expect(await opens(eva, code)).toMatch(/уже в команде/)
    const other = w.tg.user({ first_name: 'Otto' })
    expect(await opens(other, code)).toMatch(/has been used up/)
    expect(desk().staff.experts).not.toContain(other.id)
  })

  it('an expired invite is refused and changes nothing', async () => {
    const code = await invite(owner, 'admin 2')
    await w.deps.db
      .updateTable('staff_invite')
      .set({ expires_at: sql<Date>`now() - interval '1 second'` })
      .where('code', '=', code)
      .execute()
    const late = w.tg.user({ first_name: 'Leo' })
    expect(await opens(late, code)).toMatch(/has expired/)
    const row = await w.deps.db
      .selectFrom('staff_invite')
      .select('uses_left')
      .where('code', '=', code)
      .executeTakeFirstOrThrow()
    expect(row.uses_left).toBe(2)
    expect(desk().staff.admins).not.toContain(late.id)
  })

  it('two people opening the last use at once: exactly one joins, the other is told (20 rounds)', async () => {
    for (let round = 0; round < 20; round++) {
      const code = await invite(owner, 'expert 1')
      const a = w.tg.user({ first_name: `A${round}` })
      const b = w.tg.user({ first_name: `B${round}` })
      const [ta, tb] = await Promise.all([opens(a, code), opens(b, code)])
      const joined = [ta, tb].filter((t) => /you are an expert now/.test(t))
      const refused = [ta, tb].filter((t) => /has been used up/.test(t))
      expect({ round, joined: joined.length, refused: refused.length }).toEqual({
        round,
        joined: 1,
        refused: 1,
      })
      await eventually(
        async () => [a.id, b.id].filter((id) => desk().staff.experts.includes(id)).length === 1,
        'one of them on the staff',
      )
      const uses = await w.deps.db
        .selectFrom('staff_invite_use')
        .select('user_id')
        .where('code', '=', code)
        .execute()
      expect(uses).toHaveLength(1)
    }
  })

  it('owner-only actions: an expert cannot invite, an admin cannot invite admins nor change the staff', async () => {
    const expert = w.expert
    let mark = w.tg.mark()
    await push(w.tg.command(expert, '/invite', 'expert'))
    // Ed reads Russian.
    await w.tg.waitForSent(expert.id, /Это может только владелец или администратор/, { since: mark })
    mark = w.tg.mark()
    await push(w.tg.command(admin, '/invite', 'admin'))
    await w.tg.waitForSent(admin.id, /Only the owner can invite admins/, { since: mark })
    // An admin may invite experts.
    expect(await invite(admin, 'expert')).toMatch(/^inv_/)

    // /staff for an admin: the list, no buttons.
    mark = w.tg.mark()
    await push(w.tg.command(admin, '/staff'))
    const list = await w.tg.waitForSent(admin.id, /The desk's staff/, { since: mark })
    expect(list.text).toContain('Only the owner changes the staff')
    expect(list.reply_markup?.inline_keyboard ?? []).toEqual([])
    // The owner's button pressed by the admin anyway: refused, nothing changed.
    mark = w.tg.mark()
    await push(w.tg.callback(admin, `st:rm:${EXPERT_ID}`))
    const r = await w.tg.waitFor('answerCallbackQuery', {}, { since: mark })
    expect(r.payload.text).toMatch(/Only the owner changes the staff/)
    expect(desk().staff.experts).toContain(EXPERT_ID)
  })

  it("the owner's /staff: change a role and remove with buttons; the owner cannot be removed", async () => {
    // Ed is listed in the YAML file by id only; he has written to the bot, so his Telegram name is known.
    await push(w.tg.command(w.expert, '/start'))
    await w.tg.waitFor('sendMessage', { chat_id: EXPERT_ID })
    let mark = w.tg.mark()
    await push(w.tg.command(owner, '/staff'))
    const list = await w.tg.waitForSent(owner.id, /The desk's staff/, { since: mark })
    const datas = (list.reply_markup?.inline_keyboard ?? []).flat().map((b: any) => b.callback_data)
    expect(datas).toContain(`st:admin:${EXPERT_ID}`)
    expect(datas).toContain(`st:rm:${EXPERT_ID}`)
    expect(datas.some((d: string) => d.endsWith(`:${owner.id}`))).toBe(false)

    mark = w.tg.mark()
    await push(w.tg.callback(owner, `st:admin:${EXPERT_ID}`, list))
    const made = await w.tg.waitFor('answerCallbackQuery', { text: /is an admin now/ }, { since: mark })
    // Ed is named by his Telegram name (he wrote to the bot), not by a number.
    expect(made.payload.text).toBe('Ed is an admin now.')
    await eventually(async () => desk().staff.admins.includes(EXPERT_ID), 'Ed an admin')
    expect(desk().staff.experts).not.toContain(EXPERT_ID)

    mark = w.tg.mark()
    await push(w.tg.callback(owner, `st:rm:${owner.id}`, list))
    await w.tg.waitFor('answerCallbackQuery', { text: /owner cannot be removed/ }, { since: mark })
    expect(desk().staff.owner).toBe(owner.id)

    mark = w.tg.mark()
    await push(w.tg.callback(owner, `st:rm:${EXPERT_ID}`, list))
    await eventually(async () => !desk().staff.admins.includes(EXPERT_ID), 'Ed removed')
    expect(desk().staff.experts).not.toContain(EXPERT_ID)
    expect(desk().staff.admins).toContain(ADMIN_ID)
  })
})
