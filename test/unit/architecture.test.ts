import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

/**
 * The dependency rules `npm run lint` runs (.dependency-cruiser.cjs), applied to a small tree laid out like src/:
 * each wrong arrow below must be refused by the rule named for it, and the allowed ones must pass. The real tree
 * is checked by `npm run lint` itself.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const run = promisify(execFile)

/** file -> the files it imports (paths under the fixture's src/). */
const TREE: Record<string, string[]> = {
  // allowed: a feature on a lower feature and on the ground; the db floor on a feature's table types
  'consultations/ok.ts': ['orders/orders.repository.ts', 'db/database.ts'],
  'db/database.ts': ['orders/orders.tables.ts'],
  'orders/orders.tables.ts': [],
  'orders/orders.repository.ts': ['db/database.ts'],
  'orders/orders.service.ts': ['orders/orders.repository.ts'],
  'bot/features/good.ts': ['orders/orders.service.ts'],
  // wrong: a circle
  'routing/a.ts': ['routing/b.ts'],
  'routing/b.ts': ['routing/a.ts'],
  // wrong: a handler reaching past the service
  'bot/features/bad.ts': ['orders/orders.repository.ts'],
  // wrong: a lower feature importing a higher one
  'orders/up.ts': ['payments/pay.ts'],
  'payments/pay.ts': [],
  // wrong: the ground importing a feature
  'jobs/queues.ts': ['routing/a.ts'],
  // wrong: a feature importing the bot and the wiring
  'lifecycle/edge.ts': ['bot/bot.ts', 'workers.ts'],
  'bot/bot.ts': [],
  'workers.ts': [],
  // wrong: a folder on no floor (it would escape the order)
  'nowhere/store.ts': ['db/database.ts'],
  // wrong: a table file (db floor) importing its feature's repository
  'drafting/drafting.tables.ts': ['drafting/drafting.repository.ts'],
  'drafting/drafting.repository.ts': [],
}

interface Violation {
  from: string
  to: string
  rule: { name: string }
}

let dir: string
let violations: Violation[]

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'cd-architecture-'))
  await writeFile(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'ESNext' } }))
  for (const [file, imports] of Object.entries(TREE)) {
    const abs = path.join(dir, 'src', file)
    await mkdir(path.dirname(abs), { recursive: true })
    const lines = imports.map((to, i) => {
      let spec = path.relative(path.dirname(abs), path.join(dir, 'src', to)).replace(/\.ts$/, '')
      if (!spec.startsWith('.')) spec = `./${spec}`
      return `import * as m${i} from '${spec}'\nexport const u${i} = m${i}`
    })
    await writeFile(abs, `${lines.join('\n')}\nexport const here = '${file}'\n`)
  }
  const depcruise = path.join(ROOT, 'node_modules/.bin/depcruise')
  const config = path.join(ROOT, '.dependency-cruiser.cjs')
  const r = await run(depcruise, ['src', '--config', config, '-T', 'json'], {
    cwd: dir,
    maxBuffer: 64 * 1024 * 1024,
  }).catch((e: { stdout: string }) => e)
  violations = JSON.parse(r.stdout).summary.violations
}, 60_000)
afterAll(() => rm(dir, { recursive: true, force: true }))

const refused = (from: string, to: string) =>
  violations.filter((v) => v.from === `src/${from}` && v.to === `src/${to}`).map((v) => v.rule.name)

describe('dependency rules (npm run lint)', () => {
  it('a new import circle fails: no-circular', () => {
    expect(refused('routing/a.ts', 'routing/b.ts')).toContain('no-circular')
  })

  it('a handler importing a repository fails: no-handler-to-repository', () => {
    expect(refused('bot/features/bad.ts', 'orders/orders.repository.ts')).toContain(
      'no-handler-to-repository',
    )
  })

  it('a feature importing one above it in the order fails: feature-<floor>-imports-above', () => {
    expect(refused('orders/up.ts', 'payments/pay.ts')).toEqual(['feature-orders-imports-above'])
  })

  it('the ground importing a feature fails: no-ground-to-feature', () => {
    expect(refused('jobs/queues.ts', 'routing/a.ts')).toEqual(
      expect.arrayContaining(['no-ground-to-feature', 'ground-jobs-imports-above']),
    )
    expect(refused('drafting/drafting.tables.ts', 'drafting/drafting.repository.ts')).toContain(
      'no-ground-to-feature',
    )
  })

  it('a feature importing the bot or the wiring fails: no-feature-to-edge', () => {
    expect(refused('lifecycle/edge.ts', 'bot/bot.ts')).toContain('no-feature-to-edge')
    expect(refused('lifecycle/edge.ts', 'workers.ts')).toContain('no-feature-to-edge')
  })

  it('a folder that is on no floor fails: every-module-on-a-floor', () => {
    expect(refused('nowhere/store.ts', 'db/database.ts')).toContain('every-module-on-a-floor')
  })

  it('arrows that point down pass: services, handlers on services, the db floor on table types', () => {
    for (const [from, tos] of Object.entries(TREE))
      if (
        [
          'consultations/ok.ts',
          'db/database.ts',
          'orders/orders.service.ts',
          'bot/features/good.ts',
        ].includes(from)
      )
        for (const to of tos) expect(refused(from, to), `${from} -> ${to}`).toEqual([])
  })
})
