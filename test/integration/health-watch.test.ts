import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDb, type DbHandle } from '../../src/db/pool'
import { quietLogger } from '../../src/log'
import { Readiness } from '../../src/readiness'
import { HealthWatch } from '../../src/server/health'
import { createTestDatabase, type TestDatabase } from '../support/db'
import { eventually } from '../support/fixtures'
import { TcpProxy } from '../support/tcp-proxy'

/**
 * The health watch (src/server/health.ts) against a real PostgreSQL behind a TCP proxy: a database that stops
 * answering is "no answer within 1 s" as soon as its one measurement has waited that long, and a connection lost
 * for good (never answered, never closed) is given up, so the watch sees the database again when new connections
 * work. The frozen database as the built app meets it: test/e2e/faults-frozen.test.ts.
 */

let t: TestDatabase
let proxy: TcpProxy
let handle: DbHandle
let watch: HealthWatch
const readiness = new Readiness()

beforeAll(async () => {
  t = await createTestDatabase()
  const u = new URL(t.url)
  proxy = await TcpProxy.start([{ host: u.hostname, port: Number(u.port || 5432) }])
  handle = createDb(TcpProxy.via(t.url, proxy.port), 4)
  watch = new HealthWatch(handle.db, readiness, quietLogger(), {
    measureMs: 200,
    answerWithinMs: 1000,
    giveUpAfterMs: 3000,
  })
  await watch.start()
})
afterAll(async () => {
  watch?.stop()
  // The lost connection's query fails once the proxy closes it; then the pool can end.
  await proxy?.close()
  await handle?.close()
  await t?.drop()
})

describe('HealthWatch', () => {
  it('frozen: no answer within 1 s; a connection lost for good is given up and the database seen again', async () => {
    expect(watch.current().database).toBe(true)
    proxy.freeze()
    await eventually(async () => watch.current().database === 'no answer within 1 s' || undefined, 'down')
    expect(readiness.snapshot().database).toBe('no answer within 1 s')
    // Still down while the first measurement waits (no second query on a server that does not answer).
    expect(watch.databaseUp).toBe(false)
    proxy.loseFrozen()
    await eventually(async () => watch.current().database === true || undefined, 'up again', 20_000)
    expect(readiness.snapshot().database).toBe(true)
  })
})
