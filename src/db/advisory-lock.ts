import pg from 'pg'

/**
 * Runs `fn` holding a session-level advisory lock taken on a connection of its own, so that processes starting at
 * once run it one after another. The lock goes with the connection: a process that dies holding it releases it.
 */
export async function withSessionLock<T>(
  connectionString: string,
  key: string,
  fn: () => Promise<T>,
): Promise<T> {
  const client = new pg.Client({ connectionString, application_name: 'consult-desk-setup' })
  client.on('error', () => {})
  await client.connect()
  try {
    await client.query('select pg_advisory_lock(hashtext($1))', [key])
    return await fn()
  } finally {
    await client.query('select pg_advisory_unlock(hashtext($1))', [key]).catch(() => {})
    await client.end().catch(() => {})
  }
}
