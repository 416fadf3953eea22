import { Writable } from 'node:stream'
import type { User } from 'grammy/types'
import pino from 'pino'
import type { LoadedConfig } from '../../src/config/load'
import type { Draft } from '../../src/drafting/drafting.repository'
import { ADMIN_ID, EXPERT_ID, STAFF_CHAT_ID } from './app'
import type { BotApiStandIn } from './bot-api'
import { type FakeOpenAI, startFakeOpenAI } from './fake-openai'
import {
  appeals,
  clientSends,
  consultationWithTopic,
  type DeskWorld,
  eventually,
  startDeskWorld,
} from './fixtures'

/**
 * The drafting tests' world: the real app (as fixtures.ts starts it) with an `llm` section pointing at the fake
 * OpenAI-compatible server, LLM_API_KEY set, and optionally every log line captured.
 */

/** The test key: distinctive, so a leak anywhere (logs, Telegram calls, prompts) is easy to find. */
export const LLM_KEY = 'sk-test-DRAFTKEY-9f8e7d6c5b4a3210'
export const MODEL = 'test-model'

export interface DraftWorld extends DeskWorld {
  ai: FakeOpenAI
  /** Every log line (JSON) when started with captureLogs. */
  logs: string[]
}

export interface DraftWorldOptions {
  configure?: (c: LoadedConfig) => void
  /** A Bot API stand-in prepared by the test (extra forums, limits). */
  tg?: BotApiStandIn
  captureLogs?: boolean
}

export async function startDraftWorld(opts: DraftWorldOptions = {}): Promise<DraftWorld> {
  const ai = await startFakeOpenAI()
  const logs: string[] = []
  const log = opts.captureLogs
    ? pino(
        { level: 'trace' },
        new Writable({
          write(chunk, _enc, cb) {
            logs.push(String(chunk))
            cb()
          },
        }),
      )
    : undefined
  const w = await startDeskWorld({
    env: { LLM_API_KEY: LLM_KEY },
    ...(opts.tg ? { tg: opts.tg } : {}),
    ...(log ? { log } : {}),
    configure: (config) => {
      config.llm = {
        ...config.llm,
        baseUrl: ai.baseUrl,
        models: [
          // Prices in cents per 1M tokens: $2.50 input, $10.00 output.
          { id: MODEL, inputPer1M: 250, outputPer1M: 1000, maxTokensParam: 'max_tokens' },
          { id: 'other-model', inputPer1M: 15, outputPer1M: 60, maxTokensParam: 'max_completion_tokens' },
        ],
        defaultModel: MODEL,
        maxOutputTokens: 400,
        maxPromptTokens: 3000,
        timeoutMs: 1500,
        drafting: {
          enabled: true,
          instructions: 'Answer like a senior integration engineer. DESK-INSTRUCTIONS-MARK.',
          expertDailyCap: 50,
          monthlyBudget: null,
          concurrency: 10,
        },
      }
      opts.configure?.(config)
    },
  })
  return {
    ...w,
    ai,
    logs,
    async stop() {
      await w.stop()
      await ai.close()
    },
  }
}

/** An active consultation with its topic and an open question from the client. */
export async function consultationWithQuestion(
  w: DraftWorld,
  question = 'How do I verify the webhook signature?',
  opts: { tariff?: string; client?: Partial<User> } = {},
): Promise<{ client: User; consultationId: number; thread: number }> {
  const { client, consultationId, route } = await consultationWithTopic(
    w,
    opts.client ?? {},
    opts.tariff ? { tariff: opts.tariff } : {},
  )
  await clientSends(w, client, question)
  await eventually(
    async () => (await appeals(w, consultationId)).find((a) => a.state === 'open'),
    'an open appeal',
  )
  return { client, consultationId, thread: route.message_thread_id }
}

export function drafts(w: DeskWorld, consultationId: number): Promise<Draft[]> {
  return w.deps.db
    .selectFrom('draft')
    .selectAll()
    .where('consultation_id', '=', consultationId)
    .orderBy('id')
    .execute()
}

/** The draft once it is in one of `states`. */
export function draftIn(
  w: DeskWorld,
  id: number,
  states: Draft['state'][],
  timeoutMs = 15_000,
): Promise<Draft> {
  return eventually(
    async () => {
      const d = await w.deps.db.selectFrom('draft').selectAll().where('id', '=', id).executeTakeFirst()
      return d && states.includes(d.state) ? d : undefined
    },
    `draft ${id} to be ${states.join('|')}`,
    timeoutMs,
  )
}

/** The consultation's drafts account (scope consultation, unit drafts). */
export async function draftsAccount(w: DeskWorld, consultationId: number) {
  return w.deps.db
    .selectFrom('ledger_account')
    .selectAll()
    .where('scope', '=', 'consultation')
    .where('subject', '=', String(consultationId))
    .where('unit', '=', 'drafts')
    .executeTakeFirstOrThrow()
}

/**
 * Widens the period of the consultation's drafts account to cover injected instants (the client's own window,
 * which the admission of questions checks against the database clock, stays as it is).
 */
export async function widenDraftsPeriod(
  w: DeskWorld,
  consultationId: number,
  from: Date,
  to: Date,
): Promise<void> {
  await w.deps.db
    .updateTable('ledger_account')
    .set({ period_start: from, period_end: to })
    .where('scope', '=', 'consultation')
    .where('subject', '=', String(consultationId))
    .where('unit', '=', 'drafts')
    .execute()
}

/** Texts the bot posted into a topic, in order. */
export function topicTexts(w: DeskWorld, thread: number): string[] {
  return w.tg.sentTo(STAFF_CHAT_ID, { threadId: thread }).map((m) => m.text ?? '')
}

export { ADMIN_ID, EXPERT_ID, STAFF_CHAT_ID }
