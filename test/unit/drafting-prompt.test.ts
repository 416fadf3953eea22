import { describe, expect, it } from 'vitest'
import type { ModelPrice } from '../../src/config/drafting'
import { estimatePromptTokens, estimateTextTokens, formatMoney, priceMinor } from '../../src/drafting/price'
import { buildPrompt, type ConversationItem } from '../../src/drafting/prompt'

const base = {
  tariffTitle: 'Quick review',
  tariffDescription: 'Three questions in a day.',
  terms: 'Test terms.',
  instructions: 'Be precise.',
  instruction: null,
  appealId: 9,
  maxPromptTokens: 2000,
}
const client = (text: string, appealId: number | null, contentType = 'text'): ConversationItem => ({
  direction: 'in',
  kind: 'copy',
  contentType,
  text,
  appealId,
})
const expert = (text: string): ConversationItem => ({
  direction: 'out',
  kind: 'copy',
  contentType: 'text',
  text,
  appealId: null,
})

describe('drafting prompt', () => {
  it('system rules with scope, terms and instructions; earlier Q&A as roles; the open appeal last; notes and empty media described', () => {
    const p = buildPrompt({
      ...base,
      instruction: 'shorter',
      conversation: [
        client('First question', 8),
        expert('First answer'),
        { direction: 'in', kind: 'note', contentType: 'note', text: 'NOTE-NOT-IN-PROMPT', appealId: null },
        client('Second question', 9),
        client('', 9, 'photo'),
        client('see the log', 9, 'document'),
      ],
    })
    expect(p.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user'])
    expect(p.messages[0]!.content).toContain('Quick review')
    expect(p.messages[0]!.content).toContain('Three questions in a day.')
    expect(p.messages[0]!.content).toContain('Be precise.')
    expect(p.messages[0]!.content).toContain('shorter')
    expect(p.messages[3]!.content).toBe('Second question\n\n[photo]\n\n[document] see the log')
    expect(JSON.stringify(p.messages)).not.toContain('NOTE-NOT-IN-PROMPT')
    expect(p.estimatedTokens).toBe(estimatePromptTokens(p.messages))
    expect(p.omitted).toBe(0)
  })

  it('trims earlier Q&A oldest first to the budget, and shortens an oversized question from its start', () => {
    const history: ConversationItem[] = []
    for (let i = 0; i < 200; i++)
      history.push(client(`old question ${i} ${'x'.repeat(200)}`, i), expert(`old answer ${i}`))
    const p = buildPrompt({ ...base, conversation: [...history, client('THE QUESTION', 9)] })
    expect(p.estimatedTokens).toBeLessThanOrEqual(base.maxPromptTokens)
    expect(p.omitted).toBeGreaterThan(0)
    expect(p.messages.at(-1)!.content).toContain('THE QUESTION')
    expect(JSON.stringify(p.messages)).toContain('old answer 199')
    expect(JSON.stringify(p.messages)).not.toContain('old question 0 ')

    const huge = buildPrompt({ ...base, conversation: [client(`START ${'y'.repeat(20_000)} END`, 9)] })
    expect(huge.appealShortened).toBe(true)
    expect(huge.estimatedTokens).toBeLessThanOrEqual(base.maxPromptTokens)
    expect(huge.messages.at(-1)!.content).toMatch(/^\[…\] y+ END$/)
  })

  it('estimates over-count: UTF-8 bytes / 3 (Cyrillic at 2 bytes a character)', () => {
    expect(estimateTextTokens('abcdef')).toBe(2)
    expect(estimateTextTokens('привет')).toBe(4)
  })
})

describe('drafting prices', () => {
  const m: ModelPrice = { id: 'm', inputPer1M: 250, outputPer1M: 1000, maxTokensParam: 'max_tokens' }
  it('prices per 1M tokens in minor units, rounded up, exactly', () => {
    expect(priceMinor(m, 1_000_000, 0)).toBe(250)
    expect(priceMinor(m, 0, 1_000_000)).toBe(1000)
    expect(priceMinor(m, 1, 0)).toBe(1)
    expect(priceMinor(m, 0, 0)).toBe(0)
    expect(priceMinor(m, 4000, 1000)).toBe(2) // 1.0 + 1.0 cents exactly: no float residue rounds it up to 3
    expect(priceMinor({ ...m, inputPer1M: 0.1, outputPer1M: 0.2 }, 10_000_000, 0)).toBe(1)
    expect(priceMinor({ ...m, inputPer1M: 0.1, outputPer1M: 0.2 }, 10_000_001, 0)).toBe(2)
  })
  it('formats money in the configured currency', () => {
    expect(formatMoney({ currency: 'USD', minorUnitsPerMajor: 100 }, 1234)).toBe('12.34 USD')
    expect(formatMoney({ currency: 'EUR', minorUnitsPerMajor: 1000 }, 5)).toBe('0.005 EUR')
  })
})
