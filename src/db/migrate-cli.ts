import { loadDotEnv } from '../config/load'
import { ensureDatabase, startEmbeddedPostgres } from './embedded'
import { migrateToLatest } from './migrator'
import { createDb } from './pool'

/** `npm run migrate`: applies pending migrations to DATABASE_URL, or to the embedded database under .data/. */
loadDotEnv()
let url = process.env.DATABASE_URL
const embedded = url ? undefined : await startEmbeddedPostgres({ dataDir: '.data/pg' })
try {
  if (embedded) url = await ensureDatabase(embedded.url, 'consult_desk')
  const h = createDb(url!, 1)
  const applied = await migrateToLatest(h.db)
  await h.close()
  console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date')
} catch (e) {
  console.error(`migration failed: ${(e as Error).message}`)
  process.exitCode = 1
} finally {
  await embedded?.stop()
}
