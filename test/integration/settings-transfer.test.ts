import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { ConfigError, loadConfig } from '../../src/config/load'
import { docOf } from '../../src/settings/cache'
import { changeDesk, readDesk, seedDesk } from '../../src/settings/settings'
import { exportDesks, importDesks } from '../../src/settings/transfer'
import { TEST_BOT_ID, TEST_CONFIG, TEST_TOKEN } from '../support/app'
import { createTestDatabase, type TestDatabase } from '../support/db'

/**
 * YAML as the export/import format of the desks' settings (src/settings/transfer.ts, npm run config:export /
 * config:import): the export is what PostgreSQL holds and reads back as a config file; an import writes each desk
 * as a new version (source 'import', audited) or refuses the whole file, naming the field, with nothing written.
 */

let t: TestDatabase
const dir = mkdtempSync(path.join(os.tmpdir(), 'cd-transfer-'))
const env = { BOT_TOKEN: TEST_TOKEN }

beforeAll(async () => {
  t = await createTestDatabase()
  const desk = loadConfig({ CONFIG_FILE: TEST_CONFIG, ...env }).desks[0]!
  await seedDesk(t.db, desk.botId, docOf(desk))
  await changeDesk(t.db, TEST_BOT_ID, { userId: 900001, source: 'telegram' }, 'any', (d) => {
    d.tariffs[0]!.priceStars = 321
  })
})
afterAll(async () => {
  await t?.drop()
  rmSync(dir, { recursive: true, force: true })
})

async function row() {
  return t.db
    .selectFrom('desk_settings')
    .selectAll()
    .where('bot_id', '=', TEST_BOT_ID)
    .executeTakeFirstOrThrow()
}

describe('config:export and config:import', () => {
  it('the export is what PostgreSQL holds, and a valid config file', async () => {
    const yaml = await exportDesks(t.db)
    const current = (await readDesk(t.db, TEST_BOT_ID))!
    expect(parse(yaml)).toEqual({ desks: [current.doc] })
    const file = path.join(dir, 'export.yaml')
    writeFileSync(file, yaml)
    const loaded = loadConfig({ CONFIG_FILE: file, ...env })
    expect(loaded.desks[0]!.tariffs[0]!.priceStars).toBe(321)
  })

  it('an import writes a new version with source import and an audit row; the same file again changes nothing', async () => {
    const before = await row()
    const text = (await exportDesks(t.db)).replace('priceStars: 321', 'priceStars: 333')
    const r = await importDesks(t.db, 'desks.yaml', text, env)
    expect(r).toEqual([{ botId: TEST_BOT_ID, slug: 'test', version: before.version + 1, outcome: 'changed' }])
    expect(await row()).toMatchObject({ version: before.version + 1, source: 'import', updated_by: null })
    expect((await readDesk(t.db, TEST_BOT_ID))!.doc.tariffs[0]!.priceStars).toBe(333)
    const a = await t.db
      .selectFrom('audit_log')
      .selectAll()
      .where('action', '=', 'settings.changed')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow()
    expect(a.details).toMatchObject({ source: 'import', from: before.version, to: before.version + 1 })
    // Without the token the desk is found by its slug.
    const again = await importDesks(t.db, 'desks.yaml', text, {})
    expect(again).toEqual([
      { botId: TEST_BOT_ID, slug: 'test', version: before.version + 1, outcome: 'unchanged' },
    ])
  })

  it('a bad file is refused naming the file and field; nothing is written', async () => {
    const before = await row()
    const good = await exportDesks(t.db)
    const refused = async (text: string, e: Record<string, string> = env) => {
      const err = await importDesks(t.db, 'bad.yaml', text, e).then(
        () => undefined,
        (x: unknown) => x,
      )
      expect(err).toBeInstanceOf(ConfigError)
      return (err as Error).message
    }
    expect(await refused(good.replace('priceStars: 333', 'priceStars: -1'))).toMatch(
      /^bad\.yaml: desks\[0\]\.tariffs\[0\]\.priceStars: /,
    )
    expect(await refused(good.replace('slug: test', 'slug: renamed'))).toBe(
      'bad.yaml: desks[0].slug: cannot change while the desk runs (it is "test")',
    )
    expect(await refused(good.replace('slug: test', 'slug: nobody'), {})).toBe(
      'bad.yaml: desks[0]: no stored desk "nobody"; set BOT_TOKEN to its bot\'s token',
    )
    expect(await refused('desks: [')).toMatch(/^bad\.yaml: line \d+ not valid YAML/)
    expect(await row()).toEqual(before)
  })

  it('npm run config:import and config:export run against DATABASE_URL', async () => {
    const run = promisify(execFile)
    const cli = (...args: string[]) =>
      run('npx', ['tsx', 'src/settings/cli.ts', ...args], {
        env: { ...process.env, DATABASE_URL: t.url, BOT_TOKEN: TEST_TOKEN },
      })
    const file = path.join(dir, 'cli.yaml')
    await cli('export', '--out', file)
    writeFileSync(file, readFileSync(file, 'utf8').replace('priceStars: 333', 'priceStars: 344'))
    const out = await cli('import', file)
    expect(out.stdout).toMatch(/^test \(bot 7000001\): changed, settings version \d+\n$/)
    expect((await readDesk(t.db, TEST_BOT_ID))!.doc.tariffs[0]!.priceStars).toBe(344)
    writeFileSync(file, readFileSync(file, 'utf8').replace('priceStars: 344', 'priceStars: nope'))
    const bad = await cli('import', file).then(
      () => undefined,
      (e: { code: number; stderr: string }) => e,
    )
    expect(bad?.code).toBe(1)
    expect(bad?.stderr.trim()).toMatch(/desks\[0\]\.tariffs\[0\]\.priceStars: Invalid input: expected number/)
  }, 60_000)
})
