import OpenAI, { APIConnectionError, APIError, APIUserAbortError } from 'openai'
import type { ModelPrice } from '../config/drafting'
import type { PromptMessage } from '../drafting/drafting.tables'
import { cut } from '../text'

/**
 * The provider: any OpenAI-compatible chat-completions endpoint through the openai SDK, one attempt per call.
 *
 * - The key comes from LLM_API_KEY only (config.secrets.llmApiKey) and is passed to the SDK explicitly, so the
 *   SDK's own OPENAI_API_KEY fallback never applies; it is never logged, stored or put in a prompt, and error texts
 *   are scrubbed of it before they are stored or shown.
 * - maxRetries: 0. Every attempt that may be billed must go through the ledger, and the SDK's retries (on 408,
 *   409, 429, 5xx and connection errors) would be attempts the ledger never saw. A retry is a new draft request.
 * - The SDK's `timeout` only covers waiting for the response headers; an overall deadline (AbortSignal) also covers
 *   a body that stalls. Either way the request was sent: the outcome is unknown, not free.
 * - The answer is streamed (`stream: true`, usage asked for in the last chunk): `onText` sees the text so far after
 *   every chunk, and `stop` (a staff member's Stop) aborts the call, closing the connection, with outcome `stopped`:
 *   the text so far and the chunks received (OpenAI-compatible streams carry about one token a chunk; a stopped
 *   stream never gets its usage chunk, so that count is what was generated until the stop).
 */

export interface CompletionRequest {
  model: ModelPrice
  messages: PromptMessage[]
  /** Exactly the output tokens the reservation priced. */
  maxOutputTokens: number
  /** Our request id, sent as Idempotency-Key and X-Client-Request-Id headers. */
  requestId: string
  /** Called with the whole text so far after each chunk of the stream (must not block: it is not awaited). */
  onText?: (text: string) => void
  /** Aborted when a staff member presses Stop: the call is cancelled and the outcome is `stopped`. */
  stop?: AbortSignal
}

export interface Usage {
  input: number
  output: number
}

export type CompletionOutcome =
  | {
      kind: 'ok'
      text: string
      finishReason: string | null
      /** null when the provider did not report usage. */
      usage: Usage | null
      /** The content chunks received (what a Stop that wins after the finish charges, as for `stopped`). */
      chunks: number
      providerRequestId: string | null
    }
  /** Stop was pressed during the stream: the text so far and the content chunks received until then. */
  | { kind: 'stopped'; text: string; chunks: number; providerRequestId: string | null }
  /** Nothing was sent (no key, connection refused, DNS) or the provider answered with an error it does not bill. */
  | { kind: 'unbilled'; reason: string; status?: number; providerRequestId: string | null }
  /** Sent, and no usable answer (timeout, connection lost, gateway error, unreadable body): it may be billed. */
  | { kind: 'unknown'; reason: string; status?: number; providerRequestId: string | null }

export interface LlmClient {
  /** false when LLM_API_KEY is not set: drafting refuses as "provider unavailable" before anything is reserved. */
  readonly configured: boolean
  complete(req: CompletionRequest): Promise<CompletionOutcome>
}

export interface LlmClientOptions {
  baseUrl: string
  apiKey: string | undefined
  timeoutMs: number
}

/**
 * HTTP statuses that mean the request was refused without generating: bad request, auth, not found, conflict,
 * too large, unprocessable, rate limited, and 500/503 (OpenAI-compatible providers do not bill failed requests).
 * 502/504 and the 52x family come from gateways whose upstream may have run the request: unknown.
 */
const UNBILLED_STATUS = new Set([400, 401, 402, 403, 404, 409, 413, 415, 422, 429, 500, 503])

/** Connection failures that happen before any byte of the request left (no route, refused, DNS, TLS). */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
  'CERT_HAS_EXPIRED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
])

export function createLlmClient(opts: LlmClientOptions): LlmClient {
  const apiKey = opts.apiKey
  if (!apiKey) {
    return {
      configured: false,
      async complete() {
        return { kind: 'unbilled', reason: 'LLM_API_KEY is not set', providerRequestId: null }
      },
    }
  }
  const client = new OpenAI({
    apiKey,
    baseURL: opts.baseUrl,
    maxRetries: 0,
    timeout: opts.timeoutMs,
    logLevel: 'off',
  })
  const scrub = scrubber(apiKey)

  return {
    configured: true,
    async complete(req) {
      const deadline = AbortSignal.timeout(opts.timeoutMs)
      const signal = req.stop ? AbortSignal.any([deadline, req.stop]) : deadline
      const body: OpenAI.Chat.ChatCompletionCreateParamsStreaming = {
        model: req.model.id,
        messages: req.messages,
        stream: true,
        stream_options: { include_usage: true },
        ...(req.model.maxTokensParam === 'max_completion_tokens'
          ? { max_completion_tokens: req.maxOutputTokens }
          : { max_tokens: req.maxOutputTokens }),
      }
      let text = ''
      let chunks = 0
      let providerRequestId: string | null = null
      try {
        const { data, request_id } = await client.chat.completions
          .create(body, {
            signal,
            maxRetries: 0,
            // Our attempt id: providers that honour an idempotency key will not run it twice, and the client
            // request id lets their support find the call during a reconciliation.
            headers: { 'Idempotency-Key': req.requestId, 'X-Client-Request-Id': req.requestId },
          })
          .withResponse()
        providerRequestId = request_id ?? null
        let finishReason: string | null = null
        let usage: Usage | null = null
        for await (const chunk of data) {
          providerRequestId ??= chunk.id ?? null
          const choice = chunk.choices?.[0]
          const delta = choice?.delta?.content
          if (typeof delta === 'string' && delta.length > 0) {
            text += delta
            chunks++
            req.onText?.(text)
          }
          if (choice?.finish_reason) finishReason = choice.finish_reason
          const u = chunk.usage
          if (u && Number.isSafeInteger(u.prompt_tokens) && Number.isSafeInteger(u.completion_tokens))
            usage = { input: Math.max(0, u.prompt_tokens), output: Math.max(0, u.completion_tokens) }
        }
        // The SDK ends the iteration quietly when its signal aborts: which one did, if any, decides.
        if (deadline.aborted) return { kind: 'unknown', reason: 'timed out after sending', providerRequestId }
        if (req.stop?.aborted) return { kind: 'stopped', text, chunks, providerRequestId }
        // A stream that ended without its finish chunk was cut short: it ran, and it may be billed.
        if (finishReason === null)
          return { kind: 'unknown', reason: 'the stream ended without finishing', providerRequestId }
        return { kind: 'ok', text, finishReason, usage, chunks, providerRequestId }
      } catch (err) {
        // Stop pressed (and not the deadline): the stream so far is what was generated and may be billed.
        if (req.stop?.aborted && !deadline.aborted)
          return { kind: 'stopped', text, chunks, providerRequestId }
        const outcome = classify(err, deadline.aborted, scrub)
        return outcome.providerRequestId || !providerRequestId ? outcome : { ...outcome, providerRequestId }
      }
    },
  }
}

function classify(err: unknown, deadlinePassed: boolean, scrub: (s: string) => string): CompletionOutcome {
  const providerRequestId = err instanceof APIError ? (err.requestID ?? null) : null
  if (err instanceof APIUserAbortError || deadlinePassed)
    return { kind: 'unknown', reason: 'timed out after sending', providerRequestId }
  if (err instanceof APIConnectionError) {
    // APIConnectionTimeoutError is a subclass: a timeout is never "not sent".
    const code = causeCode(err)
    if (code && NOT_SENT_CODES.has(code) && err.constructor === APIConnectionError)
      return { kind: 'unbilled', reason: `connection failed before sending (${code})`, providerRequestId }
    return {
      kind: 'unknown',
      reason: scrub(`connection lost after sending${code ? ` (${code})` : ''}: ${err.message}`),
      providerRequestId,
    }
  }
  if (err instanceof APIError && typeof err.status === 'number') {
    const reason = scrub(`provider error ${err.status}: ${short(err.message.replace(/^\d{3}\s+/, ''))}`)
    return UNBILLED_STATUS.has(err.status)
      ? { kind: 'unbilled', reason, status: err.status, providerRequestId }
      : { kind: 'unknown', reason, status: err.status, providerRequestId }
  }
  // A 200 whose body could not be read or parsed: the provider ran it.
  const message = err instanceof Error ? err.message : String(err)
  return { kind: 'unknown', reason: scrub(`unreadable response: ${short(message)}`), providerRequestId }
}

function causeCode(err: unknown): string | undefined {
  let e: unknown = err
  for (let i = 0; i < 6 && e && typeof e === 'object'; i++) {
    const code = (e as { code?: unknown }).code
    if (typeof code === 'string') return code
    e = (e as { cause?: unknown }).cause
  }
  return undefined
}

function short(s: string): string {
  const one = s.replace(/\s+/g, ' ').trim()
  return cut(one, 200, { ellipsis: '…' })
}

/** Removes the key (and anything shaped like a provider key) from a text that may be stored or shown. */
export function scrubber(apiKey: string): (s: string) => string {
  return (s) =>
    s
      .split(apiKey)
      .join('[redacted]')
      .replace(/\b(sk|key|api)[-_][A-Za-z0-9_\-*]{6,}/gi, '[redacted]')
}
