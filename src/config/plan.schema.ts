import { z } from 'zod'
import { localized } from './primitives'

/**
 * A support plan sold as a Stars subscription (issue 12, src/subscriptions): a price per 30 days and allowances per
 * period. Terms are versioned per plan and shown before payment; a new termsVersion is a new contract for new buyers.
 */
export const plan = z.strictObject({
  kind: z.literal('subscription').default('subscription'),
  code: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,31}$/, 'expected a short code of a-z, 0-9, "_" or "-"'),
  title: localized,
  description: localized,
  /** Whole Stars per 30 days (Telegram: at most 10000 for a subscription). */
  priceStars: z.number().int().positive().max(10_000),
  /** Paused (/settings): not offered to new subscribers; current subscriptions renew as bought. */
  paused: z.boolean().optional(),
  /** Questions (appeals) per period. */
  questions: z.number().int().positive(),
  /** AI-draft units per period for the experts who serve the plan (0 = none). */
  drafts: z.number().int().nonnegative().default(0),
  slaBusinessHours: z.number().positive(),
  /** What the plan includes. */
  features: z
    .strictObject({
      attachments: z.boolean().default(true),
      prioritySla: z.boolean().default(false),
      transcriptExport: z.boolean().default(true),
    })
    .prefault({}),
  /** Unused questions at renewal: dropped, or carried into the next period up to N. */
  carryOver: z
    .union([z.literal('none'), z.strictObject({ capped: z.number().int().nonnegative() })])
    .default('none'),
  /** A refunded period payment: revoke now (void the rest, open holds released) or keep what was used (void the unused). */
  refundPolicy: z.enum(['revoke_now', 'keep_used']).default('keep_used'),
  terms: z.strictObject({ version: z.string().min(1), text: localized }),
})
export type PlanConfig = z.infer<typeof plan>
