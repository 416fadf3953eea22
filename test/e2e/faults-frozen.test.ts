import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventually } from '../support/fixtures'
import { type AppProcess, configFile, killHard, spawnApp, stopGracefully } from '../support/processes'
import { type FaultWorld, useFaultWorld } from '../support/resilience'
import { TcpProxy } from '../support/tcp-proxy'

/**
 * PostgreSQL that stops answering without refusing (a SIGSTOPped postmaster: connections stay open, nothing comes
 * back), and a database that is down when a process starts, from outside: the built app as its own process, the
 * database behind a TCP proxy that can freeze (hold every byte) or cut (refuse).
 */

let w: FaultWorld
useFaultWorld((x) => {
  w = x
})

/** A GET that gives up after 10 s (a probe that hangs is the defect): the status and body, or 0. */
async function get(p: AppProcess, path: string, headers: Record<string, string> = {}) {
  try {
    const r = await fetch(`http://127.0.0.1:${p.port}${path}`, {
      headers,
      signal: AbortSignal.timeout(10_000),
    })
    const text = await r.text()
    return {
      status: r.status,
      text,
      body: r.headers.get('content-type')?.includes('json') ? JSON.parse(text) : null,
    }
  } catch {
    return { status: 0, text: '', body: null }
  }
}

function proxied(proxy: TcpProxy): string {
  return TcpProxy.via(w.db.url, proxy.port)
}

async function proxyToDb(): Promise<TcpProxy> {
  const u = new URL(w.db.url)
  return TcpProxy.start([{ host: u.hostname, port: Number(u.port || 5432) }])
}

describe('a frozen database', () => {
  let proxy: TcpProxy
  let p: AppProcess
  beforeAll(async () => {
    proxy = await proxyToDb()
    p = spawnApp({
      name: 'all',
      role: 'all',
      databaseUrl: proxied(proxy),
      apiRoot: w.tg.root,
      configFile: configFile(),
    })
    await p.started
  }, 60_000)
  afterAll(async () => {
    proxy?.thaw()
    if (p) await killHard(p)
    await proxy?.close()
  })

  it('/health answers 503 with the reason within its 2 s, for 48 probes at once; /metrics answers too; back to 200 after', async () => {
    try {
      expect((await get(p, '/health')).status).toBe(200)
      proxy.freeze()
      const first = await eventually(async () => {
        const h = await get(p, '/health')
        expect(h.status, 'a probe answers while the database is frozen').not.toBe(0)
        return h.status === 503 ? h : undefined
      }, 'not ready')
      expect(first.body).toMatchObject({ ok: false, down: { database: 'no answer within 2 s' } })
      // 48 load balancers at once: every one answered from the watcher's state, none waits on the database.
      const many = await Promise.all(Array.from({ length: 48 }, () => get(p, '/health')))
      expect(many.map((h) => h.status)).toEqual(many.map(() => 503))
      const m = await get(p, '/metrics')
      expect(m.status).toBe(200)
      expect(m.text).toMatch(/^desk_database_up 0$/m)
      expect(m.text).toMatch(/^desk_updates_total|^# HELP desk_updates_total/m)
      // The watch logs it once (at its next tick), the reason included.
      const logged = await eventually(async () => p.logs(/^database unreachable$/)[0], 'the watch says so')
      expect(logged).toMatchObject({ reason: 'no answer within 2 s' })
      proxy.thaw()
      await eventually(
        async () => (await get(p, '/health')).status === 200 || undefined,
        'ready again',
        30_000,
      )
      expect((await get(p, '/metrics')).text).toMatch(/^desk_database_up 1$/m)
      expect(p.logs(/^database unreachable$/)).toHaveLength(1)
      expect(await stopGracefully(p)).toBe(0)
    } catch (e) {
      console.error(p.output().slice(-3000))
      throw e
    }
  }, 120_000)
})

describe('a process started while the database is down', () => {
  let proxy: TcpProxy
  const procs: AppProcess[] = []
  beforeAll(async () => {
    proxy = await proxyToDb()
  })
  afterAll(async () => {
    await Promise.all(procs.map((p) => killHard(p)))
    await proxy?.close()
  })

  const waits = (p: AppProcess) => p.logs(/^database not reachable at start; waiting$/)

  it('waits and retries with backoff (one line per attempt, no stack), then starts when it comes back', async () => {
    proxy.cut()
    const p = spawnApp({
      name: 'worker-wait',
      role: 'worker',
      databaseUrl: proxied(proxy),
      apiRoot: w.tg.root,
      configFile: configFile(),
    })
    procs.push(p)
    try {
      await eventually(async () => waits(p).length >= 2 || undefined, 'two attempts', 30_000)
      const lines = waits(p)
      expect(lines[0]).toMatchObject({ attempt: 1, retry_in_s: 1 })
      expect(lines[1]).toMatchObject({ attempt: 2, retry_in_s: 2 })
      expect(p.output()).not.toMatch(/start failed|\n\s+at .*:\d+:\d+/)
      proxy.restore()
      await p.started
      expect(await stopGracefully(p)).toBe(0)
    } catch (e) {
      console.error(p.output().slice(-3000))
      throw e
    }
  }, 90_000)

  it('SIGTERM while it waits stops it cleanly (exit 0)', async () => {
    proxy.cut()
    const p = spawnApp({
      name: 'all-wait',
      role: 'all',
      databaseUrl: proxied(proxy),
      apiRoot: w.tg.root,
      configFile: configFile(),
    })
    procs.push(p)
    try {
      await eventually(async () => waits(p).length >= 1 || undefined, 'an attempt', 30_000)
      expect(await stopGracefully(p)).toBe(0)
      expect(p.logs(/^stopped$/)).toHaveLength(1)
      expect(p.output()).not.toMatch(/start failed/)
    } catch (e) {
      console.error(p.output().slice(-3000))
      throw e
    } finally {
      proxy.restore()
    }
  }, 60_000)

  it('Telegram unreachable at start (getMe) is waited for the same way; SIGTERM stops it with 0', async () => {
    // A port nobody listens on: every getMe is refused.
    const closed = await TcpProxy.start([])
    const apiRoot = `http://127.0.0.1:${closed.port}`
    await closed.close()
    const p = spawnApp({
      name: 'bot-wait',
      role: 'bot',
      databaseUrl: w.db.url,
      apiRoot,
      configFile: configFile(),
    })
    procs.push(p)
    try {
      const tries = () => p.logs(/^Telegram not reachable at start; waiting$/)
      await eventually(async () => tries().length >= 2 || undefined, 'two getMe attempts', 30_000)
      expect(tries()[0]).toMatchObject({ attempt: 1, retry_in_s: 1 })
      expect(await stopGracefully(p)).toBe(0)
      expect(p.output()).not.toMatch(/start failed|\n\s+at .*:\d+:\d+/)
    } catch (e) {
      console.error(p.output().slice(-3000))
      throw e
    }
  }, 60_000)
})
