import { z } from 'zod'

/**
 * The least an update must be before it is stored in the inbox: what the inbox and its keys (keys.ts) read, checked
 * with zod, the rest passed through untouched (grammY's handlers read it later). A body with the right webhook
 * secret but not this shape (malformed JSON, an array, `{}`, a string update_id, a message without a chat) is
 * refused with 400 and stored nowhere: Telegram never sends one, so it is a client with the secret sending junk.
 */
const id = z.number().int().safe()
const chat = z.looseObject({ id, type: z.string() })
const user = z.looseObject({ id })
const message = z.looseObject({ message_id: id, date: id, chat })
/** A callback's message may be "inaccessible" (date 0), still with its chat. */
const callbackQuery = z.looseObject({ id: z.string(), from: user, message: z.optional(message) })
const preCheckoutQuery = z.looseObject({
  id: z.string(),
  from: user,
  currency: z.string(),
  total_amount: id,
  invoice_payload: z.string(),
})

export const updateShape = z
  .looseObject({
    update_id: id.nonnegative(),
    message: z.optional(message),
    edited_message: z.optional(message),
    channel_post: z.optional(message),
    edited_channel_post: z.optional(message),
    callback_query: z.optional(callbackQuery),
    pre_checkout_query: z.optional(preCheckoutQuery),
  })
  .refine((u) => Object.keys(u).length > 1, 'no update type besides update_id')

/** The first problem, as one short phrase for the log (never the body: it may carry a person's text). */
export function updateProblem(body: unknown): string | undefined {
  const r = updateShape.safeParse(body)
  if (r.success) return undefined
  const issue = r.error.issues[0]!
  return `${issue.path.length ? issue.path.join('.') : 'update'}: ${issue.message}`
}
