import { once } from 'node:events'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'

/**
 * A fake OpenAI-compatible chat-completions server over real HTTP on 127.0.0.1, for the drafting tests.
 *
 *   const ai = await startFakeOpenAI()
 *   config.llm.baseUrl = ai.baseUrl                       // http://127.0.0.1:<port>/v1
 *   ai.script({ kind: 'ok', usage: { prompt: 900, completion: 120 }, content: 'Use HMAC.' })
 *   ai.script({ kind: 'error', status: 500 })           // a 500 before generation
 *   ai.script({ kind: 'hang' })                         // never answers (past the client's timeout)
 *   ai.script({ kind: 'drop' })                         // reads the request, then drops the connection
 *   await ai.waitForRequests(1); ai.requests[0].body.messages; ai.requests[0].headers.authorization
 *
 * Scripted behaviours are used one per request, in order; after them `defaultBehaviour` applies (ok, with usage
 * computed from the request). Every request is recorded with its headers and parsed body.
 *
 * A request with `stream: true` is answered as OpenAI streams (server-sent events: one `chat.completion.chunk` per
 * piece of the content, then the finish reason, then the usage chunk when `stream_options.include_usage`, then
 * `data: [DONE]`). `chunks` splits the content (default: by words), `chunkDelayMs` paces them, and
 *   ai.script({ kind: 'ok', chunks: ['a', 'b', 'c'], hangAfterChunks: true })
 * sends the chunks and then neither finishes nor closes: the request's `closed` turns true when the client drops
 * the connection (a Stop), which `waitForClosed(i)` waits for; with `holdFinish: true` instead it waits after the
 * chunks until the test calls `finish(i)` (a finish timed against a Stop), then finishes as usual.
 */

export interface FakeUsage {
  prompt: number
  completion: number
}

export type Behaviour =
  | {
      kind: 'ok'
      /** Reported usage; null = none reported; default: computed from the request (about 4 characters a token). */
      usage?: FakeUsage | null
      content?: string
      finishReason?: string
      requestId?: string
      /** Answer after this many milliseconds (a slow generation). */
      delayMs?: number
      /** Streamed requests: the content's pieces, one chunk each (default: words with their spaces). */
      chunks?: string[]
      /** Streamed requests: the pause before each chunk. */
      chunkDelayMs?: number
      /** Streamed requests: after the chunks, stall (no finish, no usage) until the client closes. */
      hangAfterChunks?: boolean
      /** Streamed requests: after the chunks, wait for `finish(i)` (or the client closing), then finish as usual. */
      holdFinish?: boolean
    }
  | { kind: 'error'; status: number; message?: string; requestId?: string; delayMs?: number }
  /** Never answers: the client times out (the request was received: it may have been billed). */
  | { kind: 'hang' }
  /** Reads the request, then destroys the socket without answering. */
  | { kind: 'drop' }
  /** Answers with headers, then stalls the body forever. */
  | { kind: 'stall-body' }
  /** A 200 with a body that is not JSON. */
  | { kind: 'garbage' }

export interface RecordedRequest {
  method: string
  path: string
  headers: IncomingMessage['headers']
  /** The parsed JSON body. */
  body: any
  /** The raw body text. */
  raw: string
  at: number
  behaviour: Behaviour['kind']
  /** The client closed the connection before the answer was complete (an abort). */
  closed: boolean
  /** Content chunks written to a streamed answer. */
  chunksSent: number
}

export interface FakeOpenAI {
  /** Base URL for the SDK (ends with /v1). */
  readonly baseUrl: string
  readonly requests: RecordedRequest[]
  defaultBehaviour: Behaviour
  script(...b: Behaviour[]): void
  /** Resolves once at least `n` requests arrived (bounded). */
  waitForRequests(n: number, timeoutMs?: number): Promise<RecordedRequest[]>
  /** Resolves once the client closed request `i`'s connection before its answer was complete (bounded). */
  waitForClosed(i: number, timeoutMs?: number): Promise<RecordedRequest>
  /** Lets request `i` (scripted with holdFinish) send its finish, usage and [DONE] now. */
  finish(i: number): void
  reset(): void
  close(): Promise<void>
}

let responseCounter = 0

export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  const requests: RecordedRequest[] = []
  const queue: Behaviour[] = []
  const sockets = new Set<Socket>()
  const waiters = new Set<() => void>()
  const state = { defaultBehaviour: { kind: 'ok' } as Behaviour }
  /** Requests held before their finish (holdFinish), by the request's index: the function that lets each go. */
  const held = new Map<number, () => void>()
  const released = new Set<number>()

  const server: Server = createServer((req, res) => {
    void handle(req, res)
  })
  server.on('connection', (s) => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
  })

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = []
    for await (const c of req) chunks.push(c as Buffer)
    const raw = Buffer.concat(chunks).toString('utf8')
    let body: any = null
    try {
      body = raw ? JSON.parse(raw) : null
    } catch {
      body = null
    }
    const path = req.url ?? ''
    if (req.method !== 'POST' || !path.endsWith('/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ error: { message: 'not found', type: 'invalid_request_error' } }))
      return
    }
    const b = queue.shift() ?? state.defaultBehaviour
    const rec: RecordedRequest = {
      method: req.method,
      path,
      headers: req.headers,
      body,
      raw,
      at: Date.now(),
      behaviour: b.kind,
      closed: false,
      chunksSent: 0,
    }
    requests.push(rec)
    res.on('close', () => {
      if (!res.writableFinished) rec.closed = true
      for (const w of waiters) w()
    })
    for (const w of waiters) w()
    if ((b.kind === 'ok' || b.kind === 'error') && b.delayMs)
      await new Promise((r) => setTimeout(r, b.delayMs))

    switch (b.kind) {
      case 'hang':
        return
      case 'drop':
        req.socket.destroy()
        return
      case 'stall-body':
        res.writeHead(200, {
          'content-type': 'application/json',
          'x-request-id': `req_stall_${++responseCounter}`,
        })
        res.write('{"id":"chatcmpl-stall",')
        return
      case 'garbage':
        if (body?.stream) {
          res.writeHead(200, {
            'content-type': 'text/event-stream',
            'x-request-id': `req_bad_${++responseCounter}`,
          })
          res.end('data: {"choices": [ not json\n\n')
          return
        }
        res.writeHead(200, {
          'content-type': 'application/json',
          'x-request-id': `req_bad_${++responseCounter}`,
        })
        res.end('{"choices": [ not json')
        return
      case 'error': {
        res.writeHead(b.status, {
          'content-type': 'application/json',
          'x-request-id': b.requestId ?? `req_err_${++responseCounter}`,
          // The SDK's retries are off anyway; this says the same for any client that would look.
          'x-should-retry': 'false',
        })
        res.end(
          JSON.stringify({
            error: { message: b.message ?? `status ${b.status}`, type: 'server_error', code: null },
          }),
        )
        return
      }
      case 'ok': {
        const content =
          b.content ?? 'Draft answer: sign the raw body with HMAC-SHA256 and compare in constant time.'
        const usage =
          b.usage === null
            ? undefined
            : (b.usage ?? {
                prompt: Math.ceil(
                  (body?.messages ?? []).reduce(
                    (n: number, m: { content?: string }) => n + (m.content?.length ?? 0),
                    0,
                  ) / 4,
                ),
                completion: Math.ceil(content.length / 4),
              })
        const id = ++responseCounter
        if (body?.stream) {
          await stream(res, rec, b, id, body, content, usage)
          return
        }
        res.writeHead(200, {
          'content-type': 'application/json',
          'x-request-id': b.requestId ?? `req_ok_${id}`,
        })
        res.end(
          JSON.stringify({
            id: `chatcmpl-${id}`,
            object: 'chat.completion',
            created: Math.floor(Date.now() / 1000),
            model: body?.model ?? 'unknown',
            choices: [
              {
                index: 0,
                message: { role: 'assistant', content, refusal: null },
                finish_reason: b.finishReason ?? 'stop',
                logprobs: null,
              },
            ],
            ...(usage
              ? {
                  usage: {
                    prompt_tokens: usage.prompt,
                    completion_tokens: usage.completion,
                    total_tokens: usage.prompt + usage.completion,
                  },
                }
              : {}),
          }),
        )
        return
      }
    }
  }

  async function stream(
    res: ServerResponse,
    rec: RecordedRequest,
    b: Extract<Behaviour, { kind: 'ok' }>,
    id: number,
    body: any,
    content: string,
    usage: FakeUsage | undefined,
  ): Promise<void> {
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      'x-request-id': b.requestId ?? `req_ok_${id}`,
    })
    const base = {
      id: `chatcmpl-${id}`,
      object: 'chat.completion.chunk',
      created: 0,
      model: body?.model ?? 'x',
    }
    const send = (chunk: unknown) => res.write(`data: ${JSON.stringify(chunk)}\n\n`)
    const pieces = b.chunks ?? content.match(/\S+\s*/g) ?? [content]
    send({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] })
    for (const piece of pieces) {
      if (b.chunkDelayMs) await new Promise((r) => setTimeout(r, b.chunkDelayMs))
      if (rec.closed) return
      send({ ...base, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] })
      rec.chunksSent++
    }
    if (b.hangAfterChunks) return
    if (b.holdFinish) {
      const i = requests.indexOf(rec)
      if (!released.has(i))
        await new Promise<void>((resolve) => {
          held.set(i, resolve)
          res.on('close', () => resolve())
        })
      held.delete(i)
      if (rec.closed) return
    }
    send({ ...base, choices: [{ index: 0, delta: {}, finish_reason: b.finishReason ?? 'stop' }] })
    if (usage && body?.stream_options?.include_usage)
      send({
        ...base,
        choices: [],
        usage: {
          prompt_tokens: usage.prompt,
          completion_tokens: usage.completion,
          total_tokens: usage.prompt + usage.completion,
        },
      })
    res.end('data: [DONE]\n\n')
  }

  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const addr = server.address()
  if (!addr || typeof addr === 'string') throw new Error('fake OpenAI: no port')
  const baseUrl = `http://127.0.0.1:${addr.port}/v1`

  return {
    baseUrl,
    requests,
    get defaultBehaviour() {
      return state.defaultBehaviour
    },
    set defaultBehaviour(b: Behaviour) {
      state.defaultBehaviour = b
    },
    script(...b) {
      queue.push(...b)
    },
    waitForRequests(n, timeoutMs = 15_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (requests.length >= n) {
            cleanup()
            resolve(requests.slice(0, n))
          }
        }
        const timer = setTimeout(() => {
          cleanup()
          reject(new Error(`fake OpenAI: ${requests.length} of ${n} requests after ${timeoutMs} ms`))
        }, timeoutMs)
        const cleanup = () => {
          clearTimeout(timer)
          waiters.delete(check)
        }
        waiters.add(check)
        check()
      })
    },
    waitForClosed(i, timeoutMs = 15_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (requests[i]?.closed) {
            cleanup()
            resolve(requests[i]!)
          }
        }
        const timer = setTimeout(() => {
          cleanup()
          reject(new Error(`fake OpenAI: request ${i} still open after ${timeoutMs} ms`))
        }, timeoutMs)
        const cleanup = () => {
          clearTimeout(timer)
          waiters.delete(check)
        }
        waiters.add(check)
        check()
      })
    },
    finish(i) {
      released.add(i)
      held.get(i)?.()
    },
    reset() {
      requests.length = 0
      held.clear()
      released.clear()
      queue.length = 0
      state.defaultBehaviour = { kind: 'ok' }
    },
    async close() {
      for (const s of sockets) s.destroy()
      await new Promise<void>((r) => server.close(() => r()))
    },
  }
}
