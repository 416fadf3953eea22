import { z } from 'zod'
import { OFFERED_ZONES } from '../time/client-time'
import { LANGUAGES, type Language, language, timeZone } from './primitives'

/**
 * The desk's rules (issue 27): product decisions that used to be constants in the code, now desk settings with the
 * old values as defaults. They live in the settings row like every desk field (src/settings), are edited in
 * /settings → Desk rules, and are read where they are used (`desk.rules.*`), so a change holds in every process at
 * once. The bounds are the product's; where the code has a minimum of its own (retention that must outlive a
 * redelivery or a retry), the bound is that minimum, and the comment says why.
 */

const unique = <T>(list: T[]) => new Set(list).size === list.length

const retentionObject = z.strictObject({
  /**
   * Claims of handled update ids (processed_update). At least 24 h: Telegram redelivers an update for up to 24 hours,
   * and a claim pruned sooner lets a redelivery be handled twice. At most 144 h (6 days): after a week without
   * updates Telegram picks the next update id at random, and an older claim could swallow a new update.
   */
  processedUpdateHours: z.number().int().min(24).max(144).default(48),
  /** Handled updates of the durable intake (inbox_update, state done): also a claim, so the same bounds. */
  inboxUpdateHours: z.number().int().min(24).max(144).default(48),
  /**
   * Send idempotency keys (outbound_message). At least 30 days: longer than any retry of a job, including a dead
   * letter replayed by a person (the dead-letter queue keeps jobs 30 days).
   */
  outboundMessageDays: z.number().int().min(30).max(365).default(30),
  /** A conversation (e.g. /paysupport) untouched this long is forgotten; the client starts over. */
  conversationStateDays: z.number().int().min(1).max(365).default(30),
  /** When a chat was last told a refusal (refusal_told). At least an hour: the quiet period it serves is minutes. */
  refusalToldHours: z.number().int().min(1).max(720).default(24),
  /**
   * Which events the admins were told of privately (private_alert). At least 8 days: longer than pg-boss keeps a
   * failed job (7 days), so a dead letter is never announced twice.
   */
  privateAlertDays: z.number().int().min(8).max(365).default(30),
})
export const retentionSchema = retentionObject.prefault({})
export type RetentionConfig = z.infer<typeof retentionSchema>

const rulesObject = z.strictObject({
  /** What a /paysupport client is promised: an answer within this many business hours of the desk's schedule. */
  disputeAnswerHours: z.number().int().min(1).max(72).default(8),
  /** Days after the first rating in which a client may still change it (src/consultations/ratings.ts). */
  ratingEditDays: z.number().int().min(1).max(90).default(7),
  /** A rating of this many stars or fewer tells the admins and the owner; 0 = never. */
  lowRating: z.number().int().min(0).max(4).default(2),
  /** Hours after which an unpaid order's invoice is no longer honoured (pre-checkout refuses; the sweeper cancels). */
  unpaidOrderHours: z
    .number()
    .int()
    .min(1)
    .max(24 * 7)
    .default(24),
  /**
   * Readiness (src/jobs/health.ts): the outbox counts as stalled when jobs have been due this long and no live
   * worker took one for as long. At least 30 s: a worker's heartbeat is 15 s (src/jobs/liveness.ts).
   */
  stallSeconds: z.number().int().min(30).max(3600).default(120),
  /** Readiness: dead letters newer than this many minutes are shown as new. */
  deadLetterMinutes: z.number().int().min(1).max(1440).default(15),
  /**
   * The time zones a client may pick (/timezone), and the desk's zone is picked from in /settings: one button each
   * (a keyboard of at most 24). IANA zones, checked with luxon.
   */
  zones: z
    .array(timeZone)
    .min(1)
    .max(24)
    .refine(unique, { message: 'a zone is listed twice' })
    .default([...OFFERED_ZONES]),
  /**
   * The languages the desk speaks to clients (those the bot has texts for: en, ru). A client whose Telegram speaks
   * another one is answered in the desk's default language, which must be one of these.
   */
  languages: z
    .array(language)
    .min(1)
    .refine(unique, { message: 'a language is listed twice' })
    .default([...LANGUAGES]),
  /** How long the tables that only grow keep their rows (src/jobs/retention.ts). */
  retention: retentionSchema,
})
export const rulesSchema = rulesObject.prefault({})
export type RulesConfig = z.infer<typeof rulesSchema>

/** Each rule's own schema (/settings checks an answer with its field's schema before the whole desk's). */
export const RULE_FIELD_SCHEMAS = { ...rulesObject.shape, ...retentionObject.shape }
export type RuleField = Exclude<keyof typeof RULE_FIELD_SCHEMAS, 'retention'>
/** The rules that sit in rules.retention. */
export const RETENTION_FIELDS = Object.keys(retentionObject.shape) as (keyof RetentionConfig)[]

/** The rules a desk has when it sets none (today's values): also what rows of a bot no longer configured get. */
export const RULE_DEFAULTS: RulesConfig = rulesSchema.parse({})

/**
 * The language the desk speaks to someone whose Telegram says `code` ("en-US", "ru", "uk"): theirs when the desk
 * offers it (rules.languages), else the desk's default language.
 */
export function deskLanguage(
  desk: { defaultLanguage: Language; rules: { languages: readonly Language[] } },
  code: string | null | undefined,
): Language {
  const base = code?.toLowerCase().split(/[-_]/)[0] ?? ''
  return (desk.rules.languages as readonly string[]).includes(base)
    ? (base as Language)
    : desk.defaultLanguage
}
