import { createServer as createHttpServer } from 'node:http'
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BotApiStandIn, startBotApi } from '../support/bot-api'

/**
 * The stand-in posts webhook updates with its own small HTTP/1.1 client: every way a server may frame its answer,
 * kept-open connections, a connection the server closed while idle, and failures.
 */

let tg: BotApiStandIn
beforeAll(async () => {
  tg = await startBotApi()
})
afterAll(() => tg?.close())

/** A raw TCP server answering each request (read up to its body) with `reply(requestText, socket)`. */
async function rawServer(
  reply: (request: string, socket: Socket) => void,
): Promise<{ url: string; server: Server }> {
  const server = createServer((socket) => {
    let buf = ''
    socket.on('data', (c) => {
      buf += c.toString('latin1')
      for (;;) {
        const end = buf.indexOf('\r\n\r\n')
        if (end < 0) return
        const length = Number(/content-length: (\d+)/i.exec(buf.slice(0, end))?.[1] ?? 0)
        if (buf.length < end + 4 + length) return
        const request = buf.slice(0, end + 4 + length)
        buf = buf.slice(end + 4 + length)
        reply(request, socket)
      }
    })
    socket.on('error', () => {})
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, server }
}

describe('webhook posts', () => {
  it('sends the update with the secret header and reads a Content-Length, chunked or close-delimited answer', async () => {
    const seen: string[] = []
    const replies = [
      'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{"ok":true}',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{"a"\r\n3;ext=1\r\n:1}\r\n0\r\nX-Trailer: y\r\n\r\n',
      'HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n',
      'HTTP/1.0 200 OK\r\n\r\nuntil the close',
    ]
    let n = 0
    const { url, server } = await rawServer((request, socket) => {
      seen.push(request)
      const r = replies[n++]!
      // Split the answer in two writes: the client must put it together.
      socket.write(r.slice(0, 20))
      setImmediate(() => {
        socket.write(r.slice(20))
        if (r.startsWith('HTTP/1.0')) socket.end()
      })
    })
    try {
      expect(await tg.postUpdate(url, { update_id: 1 }, { secret: 's3cret' })).toEqual({
        status: 200,
        body: '{"ok":true}',
      })
      expect(await tg.postUpdate(url, { update_id: 2 })).toEqual({ status: 200, body: '{"a":1}' })
      expect(await tg.postUpdate(url, 'garbage')).toEqual({ status: 401, body: '' })
      expect(await tg.postUpdate(url, { update_id: 3 })).toEqual({ status: 200, body: 'until the close' })
      expect(seen[0]).toMatch(/^POST \/hook HTTP\/1\.1\r\n/)
      expect(seen[0]).toMatch(/\r\nX-Telegram-Bot-Api-Secret-Token: s3cret\r\n/)
      expect(seen[0]!.endsWith('\r\n\r\n{"update_id":1}')).toBe(true)
      expect(seen[1]).not.toMatch(/Secret-Token/)
      expect(seen[2]!.endsWith('\r\n\r\ngarbage')).toBe(true)
    } finally {
      server.close()
    }
  })

  it('keeps a connection open between updates and reconnects when the server closed it while idle', async () => {
    const sockets = new Set<Socket>()
    const { url, server } = await rawServer((_request, socket) => {
      sockets.add(socket)
      socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}')
    })
    try {
      for (let i = 0; i < 3; i++) expect((await tg.postUpdate(url, { update_id: i })).status).toBe(200)
      expect(sockets.size).toBe(1)
      // The server ends the idle connection; the next update goes out on a new one.
      for (const s of sockets) s.destroy()
      await new Promise((r) => setTimeout(r, 20))
      expect((await tg.postUpdate(url, { update_id: 9 })).status).toBe(200)
      expect(sockets.size).toBe(2)
    } finally {
      server.close()
      for (const s of sockets) s.destroy()
    }
  })

  it('a server that closes without answering, refuses the connection, or never answers gives status 0', async () => {
    const { url, server } = await rawServer((_request, socket) => socket.destroy())
    try {
      expect(await tg.postUpdate(url, { update_id: 1 })).toMatchObject({ status: 0 })
    } finally {
      server.close()
    }
    const closed = await rawServer(() => {})
    await new Promise<void>((r) => closed.server.close(() => r()))
    expect(await tg.postUpdate(closed.url, { update_id: 1 })).toMatchObject({ status: 0 })
    const silent = await rawServer(() => {})
    try {
      expect(await tg.postUpdate(silent.url, { update_id: 1 }, { timeoutMs: 100 })).toEqual({
        status: 0,
        body: 'The operation was aborted due to timeout',
      })
    } finally {
      silent.server.close()
    }
  })

  it('many updates at once, against node:http, each get their own answer', async () => {
    const server = createHttpServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c) => chunks.push(c))
      req.on('end', () => {
        const u = JSON.parse(Buffer.concat(chunks).toString())
        // As grammY's webhook reply writes it: no Content-Length, so chunked.
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ echo: u.update_id }))
      })
    })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/x`
    try {
      const results = await Promise.all(
        Array.from({ length: 100 }, (_, i) => tg.postUpdate(url, { update_id: i })),
      )
      expect(results.map((r) => [r.status, JSON.parse(r.body).echo])).toEqual(
        Array.from({ length: 100 }, (_, i) => [200, i]),
      )
    } finally {
      server.closeAllConnections()
      server.close()
    }
  })
})
