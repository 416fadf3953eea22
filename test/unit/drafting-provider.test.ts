import { createServer } from 'node:net'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { ModelPrice } from '../../src/config/drafting'
import { createLlmClient, type LlmClient } from '../../src/llm/provider'
import { type FakeOpenAI, startFakeOpenAI } from '../support/fake-openai'

/** The provider client against the fake OpenAI-compatible server over HTTP: one attempt, outcomes classified. */

const KEY = 'sk-unit-PROVIDERKEY-0123456789'
const model: ModelPrice = { id: 'm1', inputPer1M: 100, outputPer1M: 400, maxTokensParam: 'max_tokens' }
const req = (over: Partial<Parameters<LlmClient['complete']>[0]> = {}) => ({
  model,
  messages: [
    { role: 'system' as const, content: 'rules' },
    { role: 'user' as const, content: 'question' },
  ],
  maxOutputTokens: 123,
  requestId: 'draft:1:2:3',
  ...over,
})

async function closedPort(): Promise<number> {
  const s = createServer()
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()))
  const port = (s.address() as { port: number }).port
  await new Promise<void>((r) => s.close(() => r()))
  return port
}

describe('drafting provider (openai SDK, retries off)', () => {
  let ai: FakeOpenAI
  let llm: LlmClient
  beforeAll(async () => {
    ai = await startFakeOpenAI()
    llm = createLlmClient({ baseUrl: ai.baseUrl, apiKey: KEY, timeoutMs: 400 })
    // One call first, with a long deadline: the SDK's first streamed call loads its code, which on a loaded
    // machine alone can take longer than the short deadline the tests below use for hanging providers.
    await createLlmClient({ baseUrl: ai.baseUrl, apiKey: KEY, timeoutMs: 30_000 }).complete(req())
  })
  afterAll(() => ai?.close())
  beforeEach(() => ai.reset())

  it('success: text, reported usage, the provider request id; the key in Authorization; max_tokens as given', async () => {
    ai.script({ kind: 'ok', usage: { prompt: 11, completion: 7 }, content: 'hello', requestId: 'req_abc' })
    const r = await llm.complete(req())
    expect(r).toEqual({
      kind: 'ok',
      text: 'hello',
      finishReason: 'stop',
      usage: { input: 11, output: 7 },
      chunks: 1,
      providerRequestId: 'req_abc',
    })
    const [q] = ai.requests
    expect(q!.headers.authorization).toBe(`Bearer ${KEY}`)
    expect(q!.headers['idempotency-key']).toBe('draft:1:2:3')
    expect(q!.body).toMatchObject({ model: 'm1', max_tokens: 123 })
    expect(q!.body.max_completion_tokens).toBeUndefined()
  })

  it('streamed: the text so far after every chunk; the last chunk’s usage', async () => {
    ai.script({ kind: 'ok', chunks: ['a', 'b', 'c'], usage: { prompt: 5, completion: 3 } })
    const seen: string[] = []
    const r = await llm.complete(req({ onText: (t) => seen.push(t) }))
    expect(seen).toEqual(['a', 'ab', 'abc'])
    expect(r).toMatchObject({ kind: 'ok', text: 'abc', usage: { input: 5, output: 3 } })
    expect(ai.requests[0]!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } })
  })

  it('Stop mid-stream: stopped with the text and the chunks so far; the connection is closed', async () => {
    ai.script({ kind: 'ok', chunks: ['one ', 'two '], hangAfterChunks: true })
    const stop = new AbortController()
    const slow = createLlmClient({ baseUrl: ai.baseUrl, apiKey: KEY, timeoutMs: 30_000 })
    const r = await slow.complete(
      req({
        stop: stop.signal,
        onText: (t) => {
          if (t === 'one two ') stop.abort()
        },
      }),
    )
    expect(r).toMatchObject({ kind: 'stopped', text: 'one two ', chunks: 2 })
    await ai.waitForClosed(0)
  })

  it('a stream that stalls after some chunks is unknown (it ran, it may be billed)', async () => {
    ai.script({ kind: 'ok', chunks: ['x'], hangAfterChunks: true })
    const r = await llm.complete(req())
    expect(r).toMatchObject({ kind: 'unknown' })
  })

  it('max_completion_tokens for models configured so; usage not reported -> null', async () => {
    ai.script({ kind: 'ok', usage: null })
    const r = await llm.complete(req({ model: { ...model, maxTokensParam: 'max_completion_tokens' } }))
    expect(r).toMatchObject({ kind: 'ok', usage: null })
    expect(ai.requests[0]!.body).toMatchObject({ max_completion_tokens: 123 })
    expect(ai.requests[0]!.body.max_tokens).toBeUndefined()
  })

  it.each([400, 401, 429, 500, 503])('HTTP %i: known unbilled, one attempt', async (status) => {
    ai.script({ kind: 'error', status })
    const r = await llm.complete(req())
    expect(r).toMatchObject({ kind: 'unbilled', status })
    expect(ai.requests).toHaveLength(1)
  })

  it.each([502, 504])('HTTP %i from a gateway: unknown (the upstream may have run it)', async (status) => {
    ai.script({ kind: 'error', status })
    expect(await llm.complete(req())).toMatchObject({ kind: 'unknown', status })
    expect(ai.requests).toHaveLength(1)
  })

  it.each(['hang', 'drop', 'stall-body', 'garbage'] as const)(
    '%s after sending: unknown, one attempt',
    async (kind) => {
      // The fake never finishes on its own: the client's deadline is what ends the call.
      ai.script({ kind })
      const r = await llm.complete(req())
      expect(r.kind).toBe('unknown')
      expect(ai.requests).toHaveLength(1)
    },
  )

  it('connection refused: nothing was sent, unbilled', async () => {
    const c = createLlmClient({
      baseUrl: `http://127.0.0.1:${await closedPort()}/v1`,
      apiKey: KEY,
      timeoutMs: 400,
    })
    expect(await c.complete(req())).toMatchObject({
      kind: 'unbilled',
      reason: expect.stringMatching(/ECONNREFUSED/),
    })
  })

  it('no key: not configured, nothing sent', async () => {
    const c = createLlmClient({ baseUrl: ai.baseUrl, apiKey: undefined, timeoutMs: 400 })
    expect(c.configured).toBe(false)
    expect(await c.complete(req())).toMatchObject({ kind: 'unbilled' })
    expect(ai.requests).toHaveLength(0)
  })

  it('an error message echoing the key is scrubbed', async () => {
    ai.script({
      kind: 'error',
      status: 401,
      message: `Incorrect API key provided: ${KEY}. Also sk-abcdef123456.`,
    })
    const r = await llm.complete(req())
    expect(r.kind).toBe('unbilled')
    expect(JSON.stringify(r)).not.toContain(KEY)
    expect(JSON.stringify(r)).not.toContain('sk-abcdef123456')
  })
})
