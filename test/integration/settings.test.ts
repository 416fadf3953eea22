import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type DeskRuntime, loadConfig } from '../../src/config/load'
import { createDb, type DbHandle } from '../../src/db/pool'
import { quietLogger } from '../../src/log'
import { DeskSettingsCache, docOf } from '../../src/settings/cache'
import {
  changeDesk,
  readDesk,
  SettingsConflict,
  SettingsInvalid,
  seedDesk,
  termsText,
} from '../../src/settings/settings'
import { deskSchedule } from '../../src/time/schedule'
import { TEST_CONFIG, TEST_TOKEN } from '../support/app'
import { createTestDatabase, type TestDatabase } from '../support/db'

/**
 * Settings in PostgreSQL (src/settings): a change is validated by the YAML's schema (a refusal names the field and
 * changes nothing), checked against the version it was made from (of two changes from one version exactly one
 * wins), audited, versions the terms, and reaches another process's desk object in place.
 */

const actor = { userId: 900001, source: 'telegram' as const }
let t: TestDatabase
let botId: number
let desk: DeskRuntime

function freshDesk(): DeskRuntime {
  return loadConfig({ CONFIG_FILE: TEST_CONFIG, BOT_TOKEN: TEST_TOKEN }).desks[0]!
}

beforeAll(async () => {
  t = await createTestDatabase()
  desk = freshDesk()
  botId = desk.botId
  const s = await seedDesk(t.db, botId, docOf(desk))
  expect(s).toMatchObject({ seeded: true, version: 1 })
})
afterAll(async () => {
  await t?.drop()
})

async function row() {
  return t.db.selectFrom('desk_settings').selectAll().where('bot_id', '=', botId).executeTakeFirstOrThrow()
}
async function audits(action = 'settings.changed') {
  return t.db
    .selectFrom('audit_log')
    .selectAll()
    .where('action', '=', action)
    .where('bot_id', '=', botId)
    .orderBy('id')
    .execute()
}

async function refusal(p: Promise<unknown>): Promise<SettingsInvalid> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  )
  expect(e).toBeInstanceOf(SettingsInvalid)
  return e as SettingsInvalid
}

describe('changeDesk', () => {
  it('seeds once: a second seed keeps the row (PostgreSQL wins)', async () => {
    const other = docOf(freshDesk())
    other.tariffs[0]!.priceStars = 1
    const s = await seedDesk(t.db, botId, other)
    expect(s.seeded).toBe(false)
    expect(s.doc.tariffs[0]!.priceStars).toBe(100)
  })

  it('refuses bad input naming the field, and changes nothing', async () => {
    const before = await row()
    const auditsBefore = (await audits()).length
    const bad = await refusal(
      changeDesk(t.db, botId, actor, before.version, (d) => {
        d.tariffs[1]!.priceStars = -5
      }),
    )
    expect(bad.issues).toEqual([
      { path: 'tariffs[1].priceStars', message: expect.stringMatching(/>0|positive/i) },
    ])

    const unknown = await refusal(
      changeDesk(t.db, botId, actor, 'any', (d) => {
        ;(d.tariffs[0] as Record<string, unknown>).price = 5
      }),
    )
    expect(unknown.issues).toEqual([{ path: 'tariffs[0].price', message: 'unknown key' }])

    const zone = await refusal(
      changeDesk(t.db, botId, actor, 'any', (d) => {
        d.schedule.timezone = 'Mars/Olympus'
      }),
    )
    expect(zone.issues[0]!.path).toBe('schedule.timezone')

    const slug = await refusal(changeDesk(t.db, botId, actor, 'any', (d) => ({ ...d, slug: 'other' })))
    expect(slug.issues).toEqual([{ path: 'slug', message: expect.stringContaining('cannot change') }])

    const dup = await refusal(
      changeDesk(t.db, botId, actor, 'any', (d) => {
        d.tariffs[1]!.code = d.tariffs[0]!.code
      }),
    )
    expect(dup.issues.map((i) => i.path)).toEqual(['tariffs[1].code'])

    expect(await row()).toEqual(before)
    expect(await audits()).toHaveLength(auditsBefore)
  })

  it('writes version + 1 with an audit row of who, the source and the fields before and after', async () => {
    const before = await row()
    const r = await changeDesk(t.db, botId, actor, before.version, (d) => {
      d.tariffs[0]!.priceStars = 120
    })
    expect(r.version).toBe(before.version + 1)
    expect(r.doc.tariffs[0]!.priceStars).toBe(120)
    const after = await row()
    expect(after).toMatchObject({ version: r.version, updated_by: actor.userId, source: 'telegram' })
    expect((await readDesk(t.db, botId))!.doc.tariffs[0]!.priceStars).toBe(120)
    const a = (await audits()).at(-1)!
    expect(a).toMatchObject({
      actor_id: actor.userId,
      subject_type: 'desk_settings',
      subject_id: String(botId),
    })
    const details = a.details as unknown as Record<string, any>
    expect(details).toMatchObject({ source: 'telegram', from: before.version, to: r.version })
    expect(Object.keys(details.before)).toEqual(['tariffs'])
    expect(details.before.tariffs[0].priceStars).toBe(100)
    expect(details.after.tariffs[0].priceStars).toBe(120)
  })

  it('a change that changes nothing writes nothing', async () => {
    const before = await row()
    const n = (await audits()).length
    const r = await changeDesk(t.db, botId, actor, before.version, () => {})
    expect(r.version).toBe(before.version)
    expect(await row()).toEqual(before)
    expect(await audits()).toHaveLength(n)
  })

  it('of two changes made from the same version exactly one wins, the other is told the current version (20 rounds)', async () => {
    for (let round = 0; round < 20; round++) {
      const { version } = await row()
      const results = await Promise.allSettled(
        [201, 202].map((price) =>
          changeDesk(t.db, botId, actor, version, (d) => {
            d.tariffs[0]!.priceStars = price + 10 * round
          }),
        ),
      )
      const won = results.filter((r) => r.status === 'fulfilled')
      const lost = results.filter((r) => r.status === 'rejected')
      expect(won).toHaveLength(1)
      expect(lost).toHaveLength(1)
      const err = (lost[0] as PromiseRejectedResult).reason
      expect(err).toBeInstanceOf(SettingsConflict)
      expect((err as SettingsConflict).current).toBe(version + 1)
      const winner = (won[0] as PromiseFulfilledResult<{ version: number; doc: any }>).value
      expect(winner.version).toBe(version + 1)
      const now = await row()
      expect(now.version).toBe(version + 1)
      expect((now.doc as any).tariffs[0].priceStars).toBe(winner.doc.tariffs[0].priceStars)
    }
  })

  it("'any' changes at once are all applied, none lost (the row lock serializes them)", async () => {
    const { version } = await row()
    const start = (await readDesk(t.db, botId))!.doc.holdMinutes
    await Promise.all(
      Array.from({ length: 20 }, () =>
        changeDesk(t.db, botId, actor, 'any', (d) => {
          d.holdMinutes += 1
        }),
      ),
    )
    const now = (await readDesk(t.db, botId))!
    expect(now.version).toBe(version + 20)
    expect(now.doc.holdMinutes).toBe(start + 20)
  })

  it('a new terms text is a new terms version; the old text stays readable under the old version', async () => {
    const old = (await readDesk(t.db, botId))!.doc.terms
    const r = await changeDesk(t.db, botId, actor, 'any', (d) => {
      d.terms.text = { ru: 'Новые условия.', en: 'New terms.' }
    })
    expect(r.doc.terms.version).not.toBe(old.version)
    expect(await termsText(t.db, botId, old.version)).toEqual(old.text)
    expect(await termsText(t.db, botId, r.doc.terms.version)).toEqual({
      ru: 'Новые условия.',
      en: 'New terms.',
    })
    // An old version given again with another text is refused.
    const reuse = await refusal(
      changeDesk(t.db, botId, actor, 'any', (d) => {
        d.terms = { version: old.version, text: { ru: 'Третьи.', en: 'Third.' } }
      }),
    )
    expect(reuse.issues).toEqual([
      { path: 'terms.version', message: expect.stringContaining('already used') },
    ])
    // ...and going back to an old version with its own text is allowed.
    const back = await changeDesk(t.db, botId, actor, 'any', (d) => {
      d.terms = structuredClone(old)
    })
    expect(back.doc.terms).toEqual(old)
  })
})

describe('the settings cache across processes', () => {
  let other: DbHandle
  let mine: DeskSettingsCache
  let theirs: DeskSettingsCache
  let myDesk: DeskRuntime
  let theirDesk: DeskRuntime

  beforeAll(async () => {
    other = createDb(t.url, 3)
    myDesk = freshDesk()
    theirDesk = freshDesk()
    // Long polls: what arrives is the notification's doing (or the catch-up after a reconnection).
    mine = await DeskSettingsCache.start(t.db, t.url, [myDesk], quietLogger(), { pollMs: 3_600_000 })
    theirs = await DeskSettingsCache.start(other.db, t.url, [theirDesk], quietLogger(), { pollMs: 3_600_000 })
    await listening(1)
  })
  afterAll(async () => {
    await mine?.stop()
    await theirs?.stop()
    await other?.close()
  })

  async function listening(atLeast: number) {
    await until(async () => {
      const r = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
        where application_name = 'consult-desk-settings' and datname = current_database() and query ilike 'listen%'`.execute(
        t.db,
      )
      return r.rows[0]!.n >= atLeast * 2
    }, 'the listeners')
  }

  it('at start both took the row, not their own file', async () => {
    const current = (await readDesk(t.db, botId))!
    expect(myDesk.settingsVersion).toBe(current.version)
    expect(theirDesk.tariffs[0]!.priceStars).toBe(current.doc.tariffs[0]!.priceStars)
  })

  it('a change in one process is applied in place in the other, derived caches included', async () => {
    const held = theirDesk
    const tariffs = theirDesk.tariffs
    const compiled = deskSchedule(theirDesk)
    const r = await changeDesk(t.db, botId, actor, 'any', (d) => {
      d.tariffs[0]!.priceStars = 777
      d.schedule.weekly = { mon: ['10:00-18:00'] }
    })
    // This process sees it right after the commit.
    expect(myDesk.settingsVersion).toBe(r.version)
    expect(myDesk.tariffs[0]!.priceStars).toBe(777)
    await until(async () => theirDesk.settingsVersion === r.version, 'the other process')
    expect(held).toBe(theirDesk)
    expect(theirDesk.tariffs[0]!.priceStars).toBe(777)
    expect(tariffs[0]!.priceStars).not.toBe(777) // the old array was replaced, not edited under a reader
    expect(deskSchedule(theirDesk)).not.toBe(compiled)
    expect(theirDesk.token).toBe(TEST_TOKEN)
  })

  it('after its connection is cut the other process catches up with what it missed', async () => {
    await sql`select pg_terminate_backend(pid) from pg_stat_activity
      where application_name = 'consult-desk-settings' and datname = current_database()`.execute(t.db)
    const r = await changeDesk(t.db, botId, actor, 'any', (d) => {
      d.tariffs[0]!.priceStars = 778
    })
    await until(async () => theirDesk.settingsVersion === r.version, 'the catch-up')
    expect(theirDesk.tariffs[0]!.priceStars).toBe(778)
  })
})

async function until(check: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}
