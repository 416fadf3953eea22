import type { ModelPrice } from '../config/drafting'
import type { LlmConfig } from '../config/schema'
import type { PromptMessage } from './drafting.tables'

/**
 * Estimates and prices. The reserved amount is an upper bound: estimated input tokens + max_tokens (the request
 * sets max_tokens to exactly the number priced here, so the output part holds), priced with the configured
 * per-model prices and rounded up. The input part is an estimate without the provider's tokenizer: UTF-8 bytes / 3
 * over-counts English (about 4 characters, 4 bytes a token) and Russian (about 2.5 characters, 5 bytes a token)
 * alike; when the provider reports more, the ledger records the overrun under its policy.
 */
export const BYTES_PER_TOKEN = 3
/** Chat format overhead: role and separators per message, and the reply's priming. */
export const TOKENS_PER_MESSAGE = 4
export const REPLY_PRIMING_TOKENS = 3

export function estimateTextTokens(text: string): number {
  return Math.ceil(Buffer.byteLength(text, 'utf8') / BYTES_PER_TOKEN)
}

export function estimatePromptTokens(messages: readonly PromptMessage[]): number {
  let n = REPLY_PRIMING_TOKENS
  for (const m of messages) n += TOKENS_PER_MESSAGE + estimateTextTokens(m.content)
  return n
}

/** Price per 1M tokens as an integer count of millionths of a minor unit (exact arithmetic below). */
function micro(pricePer1M: number): bigint {
  return BigInt(Math.round(pricePer1M * 1_000_000))
}

/** What `input` + `output` tokens cost in money minor units, rounded up. */
export function priceMinor(model: ModelPrice, input: number, output: number): number {
  const numerator = BigInt(input) * micro(model.inputPer1M) + BigInt(output) * micro(model.outputPer1M)
  const denominator = 1_000_000_000_000n
  return Number((numerator + denominator - 1n) / denominator)
}

/** The amount for the desk budget line, in its unit. */
export function budgetAmount(
  unit: 'money' | 'tokens',
  model: ModelPrice,
  input: number,
  output: number,
): number {
  return unit === 'tokens' ? input + output : priceMinor(model, input, output)
}

/** "1.23 USD" for 123 minor units with 100 to the major unit. */
export function formatMoney(llm: Pick<LlmConfig, 'currency' | 'minorUnitsPerMajor'>, minor: number): string {
  const per = llm.minorUnitsPerMajor
  const decimals = Number.isInteger(Math.log10(per)) ? Math.log10(per) : 2
  return `${(minor / per).toFixed(decimals)} ${llm.currency}`
}

/** An amount in the budget's unit, for texts: money formatted, tokens as a number. */
export function formatBudget(
  llm: Pick<LlmConfig, 'currency' | 'minorUnitsPerMajor'>,
  unit: 'money' | 'tokens',
  amount: number,
): string {
  return unit === 'money' ? formatMoney(llm, amount) : `${amount}`
}
