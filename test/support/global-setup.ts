import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import PgBoss from 'pg-boss'
import type { TestProject } from 'vitest/node'
import { type EmbeddedServer, startEmbeddedPostgres } from '../../src/db/embedded'
import { migrateToLatest } from '../../src/db/migrator'
import { createDb } from '../../src/db/pool'
import { BOSS_SCHEMA } from '../../src/jobs/jobs'

declare module 'vitest' {
  export interface ProvidedContext {
    /** Connection URL of the server (maintenance database). */
    pgServerUrl: string
    /** A migrated database (app tables + pg-boss schema) each test file clones. */
    pgTemplate: string
  }
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url)
  u.pathname = `/${name}`
  return u.toString()
}

let server: EmbeddedServer | undefined
let serverUrl = ''
let template = ''

export async function setup(project: TestProject) {
  // Tests that run the app as its own process (test/support/processes.ts, main-process.test.ts) use the built
  // bundle: built once here, so no file deletes dist/ while another file's processes run from it.
  execFileSync('npm', ['run', 'build', '--silent'], { stdio: 'inherit' })
  if (process.env.DATABASE_URL) {
    serverUrl = process.env.DATABASE_URL
  } else {
    server = await startEmbeddedPostgres()
    serverUrl = server.url
  }
  template = `cd_tpl_${process.pid}_${randomBytes(3).toString('hex')}`
  const admin = new pg.Client({ connectionString: serverUrl })
  await admin.connect()
  await admin.query(`create database ${template}`)
  await admin.end()

  const tplUrl = withDatabase(serverUrl, template)
  const h = createDb(tplUrl, 2)
  await migrateToLatest(h.db)
  await h.close()
  const boss = new PgBoss({
    connectionString: tplUrl,
    schema: BOSS_SCHEMA,
    supervise: false,
    schedule: false,
  })
  await boss.start()
  await boss.stop({ graceful: false, wait: true })

  project.provide('pgServerUrl', serverUrl)
  project.provide('pgTemplate', template)
}

export async function teardown() {
  if (!serverUrl) return
  try {
    const admin = new pg.Client({ connectionString: serverUrl })
    await admin.connect()
    // Files that crashed may have left their clones behind: drop every database of this run.
    const r = await admin.query<{ datname: string }>(
      `select datname from pg_database where datname like $1 or datname = $2`,
      [`cd_t_${process.pid}_%`, template],
    )
    for (const { datname } of r.rows) await admin.query(`drop database if exists ${datname} with (force)`)
    await admin.end()
  } finally {
    await server?.stop()
  }
}
