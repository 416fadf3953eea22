import { writeFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { ConfigError, loadDotEnv } from '../config/load'
import { ensureDatabase, startEmbeddedPostgres } from '../db/embedded'
import { migrateToLatest } from '../db/migrator'
import { createDb } from '../db/pool'
import { exportDesks, importDesks } from './transfer'

/**
 * `npm run config:export [-- --out <file>]`: the desks' settings from PostgreSQL as YAML (stdout, or the file).
 * `npm run config:import <file>`: validates the file and writes each desk as a new version (source 'import').
 * Against DATABASE_URL, or the embedded database under .data/pg as `npm start` uses it (migrated first, as at start).
 * A refused file prints one line per problem naming the file and field, and exits 1 with nothing written.
 */
loadDotEnv()
const [command, ...args] = process.argv.slice(2)
if (command !== 'export' && command !== 'import') {
  console.error('usage: npm run config:export [-- --out <file>] | npm run config:import <file>')
  process.exit(1)
}
const file = command === 'import' ? args[0] : undefined
if (command === 'import' && !file) {
  console.error('usage: npm run config:import <file>')
  process.exit(1)
}
let url = process.env.DATABASE_URL
const embedded = url
  ? undefined
  : await startEmbeddedPostgres({ dataDir: process.env.DATA_DIR ?? '.data/pg' })
try {
  if (embedded) url = await ensureDatabase(embedded.url, 'consult_desk')
  const h = createDb(url!, 1)
  try {
    await migrateToLatest(h.db)
    if (command === 'export') {
      const yaml = await exportDesks(h.db)
      const out = args[args.indexOf('--out') + 1]
      if (args.includes('--out') && out) {
        writeFileSync(out, yaml)
        console.error(`written: ${out}`)
      } else process.stdout.write(yaml)
    } else {
      const text = await readFile(file!, 'utf8').catch((e: NodeJS.ErrnoException) => {
        throw new ConfigError(`${file}: cannot be read (${e.code ?? e.message})`)
      })
      for (const d of await importDesks(h.db, file!, text, process.env))
        console.log(`${d.slug} (bot ${d.botId}): ${d.outcome}, settings version ${d.version}`)
    }
  } finally {
    await h.close()
  }
} catch (e) {
  console.error(e instanceof ConfigError ? e.message : `config:${command} failed: ${(e as Error).message}`)
  process.exitCode = 1
} finally {
  await embedded?.stop()
}
