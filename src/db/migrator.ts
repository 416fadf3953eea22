import { readdir } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { type Kysely, type Migration, type MigrationProvider, Migrator } from 'kysely'

export const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../migrations')

/**
 * Kysely's FileMigrationProvider builds import paths that vitest cannot load (.ts through node:path joins), so this
 * small provider imports each file by URL; it works under tsx, vitest and plain node alike.
 */
export class DirectoryMigrationProvider implements MigrationProvider {
  constructor(private readonly dir = MIGRATIONS_DIR) {}
  async getMigrations(): Promise<Record<string, Migration>> {
    const files = (await readdir(this.dir)).filter((f) => /^\d{4}-\d{2}-\d{2}.*\.ts$/.test(f)).sort()
    const out: Record<string, Migration> = {}
    for (const f of files)
      out[f.replace(/\.ts$/, '')] = await import(pathToFileURL(path.join(this.dir, f)).href)
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
