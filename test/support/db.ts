import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { inject } from 'vitest'
import { createDb, type DbHandle } from '../../src/db/pool'

export interface TestDatabase extends DbHandle {
  url: string
  name: string
  /** Closes the pool and drops the database. */
  drop(): Promise<void>
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url)
  u.pathname = `/${name}`
  return u.toString()
}

/**
 * A fresh, migrated database for one test file (cloned from the run's template: milliseconds, not a migration run).
 * Named after the vitest main process so the global teardown can drop leftovers of a crashed file.
 */
export async function createTestDatabase(poolSize = 10): Promise<TestDatabase> {
  const serverUrl = inject('pgServerUrl')
  const template = inject('pgTemplate')
  const name = `cd_t_${process.ppid}_${randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: serverUrl })
  await admin.connect()
  try {
    await admin.query(`create database ${name} template ${template}`)
  } finally {
    await admin.end()
  }
  const url = withDatabase(serverUrl, name)
  const handle = createDb(url, poolSize)
  return {
    ...handle,
    url,
    name,
    async drop() {
      await handle.close()
      const a = new pg.Client({ connectionString: serverUrl })
      await a.connect()
      try {
        await a.query(`drop database if exists ${name} with (force)`)
      } finally {
        await a.end()
      }
    },
  }
}
