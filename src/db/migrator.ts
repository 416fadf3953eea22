import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { type Kysely, type Migration, type MigrationProvider, Migrator, sql } from 'kysely'

const HERE = path.dirname(fileURLToPath(import.meta.url))

/**
 * Source layout (tsx, vitest): src/db/ -> ../../migrations, the .ts files. Built layout (`npm run build`, one bundle
 * in dist/): dist/migrations, the same files compiled to .js.
 */
export const MIGRATIONS_DIR = existsSync(path.join(HERE, 'migrations'))
  ? path.join(HERE, 'migrations')
  : path.resolve(HERE, '../../migrations')

/**
 * Where the database functions' .sql files are. Source layout: next to the code that calls each one
 * (src/<feature>/sql/<function>.sql, found under src/). Built layout: `npm run build` copies them all into dist/sql.
 */
export const SQL_ROOT = existsSync(path.join(HERE, 'sql')) ? path.join(HERE, 'sql') : path.resolve(HERE, '..')

/** A migration's name is its file name without the extension, so the .ts and the built .js files share history. */
const MIGRATION_FILE = /^(\d{4}-\d{2}-\d{2}.*)\.(ts|js)$/

/**
 * The lock every migration run holds: Kysely's own (its PostgresAdapter takes this session advisory lock around
 * its migrations, kysely 0.28). Taken here around both steps, versioned and repeatable, so several processes
 * starting together run them one after the other; the lock is re-entrant within a session, so Kysely's own
 * acquisition inside ours simply nests.
 */
const MIGRATION_LOCK_ID = '3853314791062309107'

/** The table of applied repeatable files: one row per function, the checksum of the text that was applied. */
const REPEATABLE_TABLE = 'repeatable_migration'

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

/** One database function's source: `<name>.sql` creates the function `<name>`. */
export interface RepeatableFile {
  name: string
  file: string
  text: string
  /** The functions it calls, from its `-- requires: a, b` lines: applied before it. */
  requires: string[]
  checksum: string
}

/**
 * The repeatable files under `root`, in the order they are applied: every file after the files it requires, ties by
 * name. A file name used twice, an unknown requirement or a circle of requirements stops the migration.
 */
export async function repeatableFiles(root = SQL_ROOT): Promise<RepeatableFile[]> {
  const paths: string[] = []
  if (path.basename(root) === 'sql') {
    for (const f of await readdir(root)) if (f.endsWith('.sql')) paths.push(path.join(root, f))
  } else {
    for (const d of await readdir(root, { withFileTypes: true })) {
      const dir = path.join(root, d.name, 'sql')
      if (!d.isDirectory() || !existsSync(dir)) continue
      for (const f of await readdir(dir)) if (f.endsWith('.sql')) paths.push(path.join(dir, f))
    }
  }
  const byName = new Map<string, RepeatableFile>()
  for (const file of paths) {
    const name = path.basename(file, '.sql')
    const other = byName.get(name)
    if (other) throw new Error(`two files define the database function ${name}: ${other.file} and ${file}`)
    const text = (await readFile(file, 'utf8')).replace(/\r\n/g, '\n')
    const requires = [...text.matchAll(/^--\s*requires:\s*(.+)$/gm)].flatMap((m) =>
      m[1]!.split(',').map((s) => s.trim()),
    )
    const checksum = createHash('sha256').update(text).digest('hex')
    byName.set(name, { name, file, text, requires: requires.filter(Boolean), checksum })
  }
  const ordered: RepeatableFile[] = []
  const state = new Map<string, 'visiting' | 'done'>()
  const visit = (f: RepeatableFile, from: string[]) => {
    if (state.get(f.name) === 'done') return
    if (state.get(f.name) === 'visiting')
      throw new Error(`database functions require each other in a circle: ${[...from, f.name].join(' -> ')}`)
    state.set(f.name, 'visiting')
    for (const r of f.requires) {
      const dep = byName.get(r)
      if (!dep) throw new Error(`${f.file}: requires ${r}, but no ${r}.sql exists`)
      visit(dep, [...from, f.name])
    }
    state.set(f.name, 'done')
    ordered.push(f)
  }
  for (const name of [...byName.keys()].sort()) visit(byName.get(name)!, [])
  return ordered
}

/**
 * Applies every repeatable file whose text changed since it was last applied (Flyway's repeatable migrations): the
 * file runs as it is (`create or replace function ...`) and its checksum is recorded, all in one transaction on the
 * connection given (the caller holds the migration lock). Returns the names applied.
 *
 * A changed signature: `create or replace` cannot change a function's result columns (PostgreSQL refuses) and
 * creates a second function for other argument types. Drop the old signature in a versioned migration (those run
 * first), then change the file. So a leftover is never silent, after applying, each file's name must name exactly
 * one function; otherwise the migration fails and nothing of this step is kept.
 */
export async function applyRepeatables(db: Kysely<any>, files: RepeatableFile[]): Promise<string[]> {
  return db.transaction().execute(async (trx) => {
    await sql`
      create table if not exists ${sql.table(REPEATABLE_TABLE)} (
        name text primary key,
        checksum text not null,
        applied_at timestamptz not null default now()
      )`.execute(trx)
    const recorded = await sql<{ name: string; checksum: string }>`
      select name, checksum from ${sql.table(REPEATABLE_TABLE)}`.execute(trx)
    const applied = new Map(recorded.rows.map((r) => [r.name, r.checksum]))
    const done: string[] = []
    for (const f of files) {
      if (applied.get(f.name) === f.checksum) continue
      try {
        await sql.raw(f.text).execute(trx)
      } catch (e) {
        throw new Error(`${f.file}: ${(e as Error).message}`)
      }
      await sql`
        insert into ${sql.table(REPEATABLE_TABLE)} (name, checksum) values (${f.name}, ${f.checksum})
        on conflict (name) do update set checksum = excluded.checksum, applied_at = now()`.execute(trx)
      done.push(f.name)
    }
    const counts = await sql<{ name: string; n: number }>`
      select f.name, count(p.oid)::int as n
      from unnest(${files.map((f) => f.name)}::text[]) f(name)
      left join pg_proc p on p.proname = f.name and p.pronamespace = current_schema()::regnamespace
      group by f.name`.execute(trx)
    for (const c of counts.rows) {
      if (c.n === 1) continue
      const file = files.find((f) => f.name === c.name)!.file
      throw new Error(
        c.n === 0
          ? `${file} does not create a function named ${c.name}`
          : `${c.n} functions are named ${c.name}: a changed signature left the old one behind; drop it in a ` +
              'versioned migration (see src/db/migrator.ts)',
      )
    }
    return done
  })
}

/**
 * Applies pending migrations, then the database functions whose .sql changed, under one migration lock (several
 * processes starting together apply each once). Returns what was applied: migration names, then `sql:<function>`.
 */
export async function migrateToLatest(
  db: Kysely<any>,
  opts: { repeatables?: RepeatableFile[] } = {},
): Promise<string[]> {
  const files = opts.repeatables ?? (await repeatableFiles())
  return db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(${sql.raw(MIGRATION_LOCK_ID)})`.execute(conn)
    try {
      const migrator = new Migrator({ db: conn, provider: new DirectoryMigrationProvider() })
      const { error, results } = await migrator.migrateToLatest()
      if (error) {
        const failed = results?.find((r) => r.status === 'Error')
        throw new Error(
          failed
            ? `migration ${failed.migrationName} failed: ${(error as Error).message ?? error}`
            : `cannot migrate: ${(error as Error).message ?? error}`,
          { cause: error },
        )
      }
      const versioned = (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
      const functions = await applyRepeatables(conn, files)
      return [...versioned, ...functions.map((f) => `sql:${f}`)]
    } finally {
      await sql`select pg_advisory_unlock(${sql.raw(MIGRATION_LOCK_ID)})`.execute(conn)
    }
  })
}
