import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { handleCommandsJob, queueDeskCommands } from '../../src/bot/commands'
import type { Deps } from '../../src/deps'
import { JobDeferred } from '../../src/jobs/queue'
import { changeDesk } from '../../src/settings/settings'
import {
  ADMIN_ID,
  type DeskWorld,
  EXPERT_ID,
  eventually,
  STAFF_CHAT_ID,
  startDeskWorld,
  TEST_BOT_ID,
} from '../support/fixtures'

/**
 * The command menus (src/bot/commands.ts): clients see the client commands and no staff command; the staff see
 * theirs in the staff group and in their private chat with the bot, per language. A staff change sets them again
 * through a job.
 */

const STAFF_ONLY = ['card', 'note', 'close', 'assign', 'report', 'mine', 'refunds', 'dashboard']

describe('command menus by scope', () => {
  let w: DeskWorld
  beforeAll(async () => {
    w = await startDeskWorld()
  })
  afterAll(() => w?.stop())

  it('a client (every private chat) sees the client commands and no staff command, in both languages', () => {
    for (const lang of [undefined, 'ru', 'en']) {
      const menu = w.tg.menu(TEST_BOT_ID, { type: 'all_private_chats' }, lang)
      expect(menu).toEqual(expect.arrayContaining(['start', 'tariffs', 'status', 'paysupport']))
      for (const c of STAFF_ONLY) expect(menu).not.toContain(c)
    }
    // Nothing is set for groups at large, nor by default, where a client could see a staff command.
    expect(w.tg.menu(TEST_BOT_ID, { type: 'default' })).toEqual([])
    expect(w.tg.menu(TEST_BOT_ID, { type: 'all_group_chats' })).toEqual([])
  })

  it('the staff group gets the staff commands of groups (topic commands, /report), described per language', () => {
    const scope = { type: 'chat', chat_id: STAFF_CHAT_ID }
    for (const lang of ['ru', 'en']) {
      const menu = w.tg.menu(TEST_BOT_ID, scope, lang)
      expect(menu).toEqual(
        expect.arrayContaining([
          'card',
          'note',
          'close',
          'assign',
          'report',
          'draft',
          'grant',
          'stuck',
          'drafts',
        ]),
      )
      expect(menu).not.toContain('tariffs')
      expect(menu).not.toContain('mine')
    }
    const ru = w.tg.callsTo('setMyCommands').find((c) => {
      const p = c.payload as { scope?: { chat_id?: number }; language_code?: string }
      return p.scope?.chat_id === STAFF_CHAT_ID && p.language_code === 'ru'
    })
    const card = (ru!.payload as { commands: { command: string; description: string }[] }).commands.find(
      (c) => c.command === 'card',
    )
    expect(card?.description).toBe('Показать карточку консультации')
  })

  it('after a staff change (a job), an expert and an admin see the staff commands in private; a client does not', async () => {
    const since = w.tg.mark()
    // The staff users wrote to the bot (their private chats exist); a change of the staff sets the menus again.
    await changeDesk(w.deps.db, TEST_BOT_ID, { userId: ADMIN_ID, source: 'telegram' }, 'any', (d) => {
      d.expertSettings.names[String(EXPERT_ID)] = 'Ed'
      d.staff.experts = [...d.staff.experts, 900777]
    })
    await eventually(
      async () =>
        w.tg.callsTo('setMyCommands', { scope: { type: 'chat', chat_id: EXPERT_ID } }, { since }).length > 0,
      'the menus set again for the expert',
    )
    for (const id of [EXPERT_ID, ADMIN_ID]) {
      await eventually(
        async () =>
          ['ru', 'en'].every((l) =>
            w.tg.menu(TEST_BOT_ID, { type: 'chat', chat_id: id }, l).includes('mine'),
          ),
        `the menus of ${id}`,
      )
      const menu = w.tg.menu(TEST_BOT_ID, { type: 'chat', chat_id: id }, 'en')
      expect(menu).toEqual(expect.arrayContaining(['mine', 'dashboard', 'away', 'start', 'tariffs']))
      expect(menu).not.toContain('card')
    }
    // The admins' tools are in the admin's private menu, not in the expert's.
    const adminMenu = w.tg.menu(TEST_BOT_ID, { type: 'chat', chat_id: ADMIN_ID }, 'en')
    const expertMenu = w.tg.menu(TEST_BOT_ID, { type: 'chat', chat_id: EXPERT_ID }, 'en')
    for (const c of ['grant', 'reopen', 'bans', 'ban', 'tz', 'write', 'stuck', 'stars', 'refunds', 'setup']) {
      expect(adminMenu).toContain(c)
      expect(expertMenu).not.toContain(c)
    }
    // 900777 never wrote to the bot: Telegram has no chat to scope, the others are set all the same.
    expect(w.tg.menu(TEST_BOT_ID, { type: 'chat', chat_id: 900777 }, 'en')).toEqual([])
    const client = w.tg.user({ language_code: 'en' })
    expect(w.tg.menu(TEST_BOT_ID, { type: 'chat', chat_id: client.id }, 'en')).toEqual([])
  })

  it('a desk that stops speaking English keeps no English menu: an English client sees the default, in Russian', async () => {
    const clients = { type: 'all_private_chats' }
    expect(w.tg.menu(TEST_BOT_ID, clients, 'en')).toContain('tariffs')
    // The run the staff change above queued has gone through every scope (what it sets before the change is its own).
    await eventually(async () => {
      const { rows } = await sql<{ n: number }>`
        select count(*)::int as n from pgboss.job where name = 'bot.commands' and state < 'completed'`.execute(
        w.deps.db,
      )
      return rows[0]!.n === 0
    }, 'no menu run going')
    const since = w.tg.mark()
    await changeDesk(w.deps.db, TEST_BOT_ID, { userId: ADMIN_ID, source: 'telegram' }, 'any', (d) => {
      d.rules = { ...d.rules, languages: ['ru'] }
    })
    // Every scope's English menu deleted (the job goes through the scopes one after another).
    const staffGroup = { type: 'chat', chat_id: STAFF_CHAT_ID }
    await eventually(
      async () =>
        [clients, staffGroup].every(
          (scope) => w.tg.callsTo('deleteMyCommands', { scope, language_code: 'en' }, { since }).length > 0,
        ),
      'the English menus deleted',
    )
    expect(w.tg.menu(TEST_BOT_ID, clients, 'en')).toEqual([])
    expect(w.tg.menu(TEST_BOT_ID, staffGroup, 'en')).toEqual([])
    // Set again after the change: no English menu anywhere, the default one in the desk's language.
    expect(w.tg.callsTo('setMyCommands', { language_code: 'en' }, { since })).toEqual([])
    const byDefault = w.tg
      .callsTo('setMyCommands', (p) => p.scope?.type === 'all_private_chats' && !p.language_code, { since })
      .at(-1)
    const tariffs = (
      byDefault!.payload as { commands: { command: string; description: string }[] }
    ).commands.find((c) => c.command === 'tariffs')
    expect(tariffs?.description).toMatch(/[а-яё]/i)
  })

  it('a run whose menus change while it goes stops there (the change queued its own); a worker behind the change waits', async () => {
    const desk = w.deps.desk(TEST_BOT_ID)
    const languages = [...desk.rules.languages]
    const calls: string[] = []
    const api = new Proxy(
      {},
      {
        get: (_t, method: string) => async () => {
          calls.push(method)
          if (calls.length !== 3) return true
          // Mid-run the owner changes the languages; this process's desk takes the change right after the commit.
          await changeDesk(w.deps.db, TEST_BOT_ID, { userId: ADMIN_ID, source: 'telegram' }, 'any', (d) => {
            d.rules = { ...d.rules, languages: languages.length === 1 ? ['ru', 'en'] : ['ru'] }
          })
          await eventually(async () => desk.rules.languages.length !== languages.length, 'the change applied')
          return true
        },
      },
    )
    const deps = { ...w.deps, api: () => api } as unknown as Deps
    await handleCommandsJob(deps, { botId: TEST_BOT_ID })
    expect(calls).toHaveLength(3)

    const ahead = { botId: TEST_BOT_ID, version: (desk.settingsVersion ?? 0) + 1 }
    await expect(handleCommandsJob(deps, ahead)).rejects.toBeInstanceOf(JobDeferred)
    expect(calls).toHaveLength(3)

    // Every bot process sees the change and queues the run: one job for the version all the same.
    await queueDeskCommands(w.deps, desk)
    await queueDeskCommands(w.deps, desk)
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from pgboss.job
      where name = 'bot.commands' and (data->>'version')::int = ${desk.settingsVersion!}`.execute(w.deps.db)
    expect(rows[0]!.n).toBe(1)
  })
})
