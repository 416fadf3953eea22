import { existsSync } from 'node:fs'
import { readdir } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { type Kysely, type Migration, type MigrationProvider, Migrator } from 'kysely'

const HERE = path.dirname(fileURLToPath(import.meta.url))

/**
 * Source layout (tsx, vitest): src/db/ -> ../../migrations, the .ts files. Built layout (`npm run build`, one bundle
 * in dist/): dist/migrations, the same files compiled to .js.
 */
export const MIGRATIONS_DIR = existsSync(path.join(HERE, 'migrations'))
  ? path.join(HERE, 'migrations')
  : path.resolve(HERE, '../../migrations')

/** A migration's name is its file name without the extension, so the .ts and the built .js files share history. */
const MIGRATION_FILE = /^(\d{4}-\d{2}-\d{2}.*)\.(ts|js)$/

/**
 * Kysely's FileMigrationProvider builds import paths that vitest cannot load (.ts through node:path joins), so this
 * small provider imports each file by URL; it works under tsx, vitest and plain node alike.
 */
export class DirectoryMigrationProvider implements MigrationProvider {
  constructor(private readonly dir = MIGRATIONS_DIR) {}
  async getMigrations(): Promise<Record<string, Migration>> {
    const files = (await readdir(this.dir)).filter((f) => MIGRATION_FILE.test(f)).sort()
    const out: Record<string, Migration> = {}
    for (const f of files)
      out[f.match(MIGRATION_FILE)![1]!] = await import(pathToFileURL(path.join(this.dir, f)).href)
    return out
  }
}

/** Applies pending migrations; Kysely's migrator holds its own lock, so concurrent starts apply each once. */
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  const migrator = new Migrator({ db, provider: new DirectoryMigrationProvider() })
  const { error, results } = await migrator.migrateToLatest()
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')
    throw new Error(`migration ${failed?.migrationName ?? '?'} failed: ${(error as Error).message ?? error}`)
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
}
