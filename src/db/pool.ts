import { Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import type { Database } from './database'
import { installPgTypeParsers } from './pg-types'

export interface DbHandle {
  db: Kysely<Database>
  pool: pg.Pool
  close(): Promise<void>
}

export function createDb(connectionString: string, max = 10): DbHandle {
  installPgTypeParsers()
  // A connection attempt to an unreachable server fails after 10 s instead of hanging (pg's default waits forever),
  // and TCP keepalive notices a connection that died without a word.
  const pool = new pg.Pool({
    connectionString,
    max,
    application_name: 'consult-desk',
    connectionTimeoutMillis: 10_000,
    keepAlive: true,
  })
  // An idle client's error (server restart) must not crash the process; the next checkout reconnects.
  pool.on('error', () => {})
  // Nor may a checked-out client's: pg-pool removes its error listener while a client is out, and a connection that
  // dies between two statements of a transaction (the server restarted, the network cut) emits 'error' with no
  // listener, which ends the process. The transaction's next statement fails instead, and the client is discarded.
  pool.on('connect', (client) => client.on('error', () => {}))
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
  let closed = false
  return {
    db,
    pool,
    async close() {
      if (closed) return
      closed = true
      await db.destroy()
    },
  }
}
