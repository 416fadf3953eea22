import { describe, expect, it } from 'vitest'
import { cut, TOPIC_NAME_MAX, textLength, wellFormed } from '../../src/text'

/** A string with a lone surrogate (half of a pair) anywhere: what jsonb refuses. */
const broken = (s: string) => /\p{Cs}/u.test(s)
const graphemes = (s: string) =>
  Array.from(new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(s), (g) => g.segment)

const SAMPLES: Record<string, string> = {
  'surrogate pair': '😀',
  'ZWJ family': '👨‍👩‍👧‍👦',
  flag: '🇩🇪',
  'combining mark': 'e\u0301',
  keycap: '1\uFE0F\u20E3',
  'skin tone': '👍🏽',
  'rainbow flag (ZWJ + VS16)': '🏳️‍🌈',
}

describe('cut', () => {
  it('returns text that fits unchanged', () => {
    expect(cut('hello 😀', 8)).toBe('hello 😀')
    expect(cut('', 5)).toBe('')
  })

  for (const [name, g] of Object.entries(SAMPLES)) {
    it(`never splits a ${name}, at every boundary, keeping the start or the end, with or without an ellipsis`, () => {
      for (let before = 0; before <= 3; before++) {
        const text = `${'a'.repeat(before)}${g}${g}b`
        for (let max = 0; max <= textLength(text) + 1; max++) {
          for (const ellipsis of ['', '…']) {
            for (const keep of ['start', 'end'] as const) {
              const out = cut(text, max, { ellipsis, keep })
              expect(broken(out), `${name} max=${max}`).toBe(false)
              expect(textLength(out)).toBeLessThanOrEqual(Math.max(max, 0))
              if (textLength(text) <= max) {
                expect(out).toBe(text)
                continue
              }
              const body =
                keep === 'start' ? out.slice(0, out.length - ellipsis.length) : out.slice(ellipsis.length)
              // What is kept is whole graphemes of the text (unless not even one fits: then whole code points).
              const parts = graphemes(text)
              const whole = keep === 'start' ? parts.join('').startsWith(body) : parts.join('').endsWith(body)
              expect(whole).toBe(true)
              const kept = graphemes(body)
              const own =
                keep === 'start' ? parts.slice(0, kept.length) : parts.slice(parts.length - kept.length)
              if (kept.length > 0 && kept.join('') !== own.join('')) {
                // only the single-grapheme fallback may differ
                expect(kept.length).toBe(1)
              }
            }
          }
        }
      }
    })
  }

  it('cuts a ZWJ sequence whole: never half a family', () => {
    const family = SAMPLES['ZWJ family']!
    const text = `${'a'.repeat(10)}${family}`
    for (let max = 10; max < textLength(text); max++) expect(cut(text, max)).toBe('a'.repeat(10))
  })

  it('a single grapheme longer than the room is cut between code points, never between the halves of a pair', () => {
    const family = SAMPLES['ZWJ family']! // 11 UTF-16 units
    expect(cut(family, 2)).toBe('👨')
    expect(cut(family, 3)).toBe('👨\u200D')
    expect(cut(family, 1)).toBe('')
    expect(cut('😀', 1)).toBe('')
  })

  it('the ellipsis is counted within the limit', () => {
    expect(cut('abcdef', 4, { ellipsis: '…' })).toBe('abc…')
    expect(cut('ab😀def', 4, { ellipsis: '…' })).toBe('ab…')
    expect(cut('abc😀', 4, { ellipsis: '…' })).toBe('abc…')
    expect(cut('abcdef', 1, { ellipsis: '…' })).toBe('…')
  })

  it('keeps the end within UTF-8 bytes', () => {
    const text = `${'a'.repeat(5)}😀😀`
    expect(cut(text, 8, { keep: 'end', unit: 'utf8' })).toBe('😀😀')
    expect(cut(text, 7, { keep: 'end', unit: 'utf8' })).toBe('😀')
    expect(cut(text, 9, { keep: 'end', unit: 'utf8', ellipsis: '…' })).toBe('…😀')
  })

  it('a 5,000-character draft with an emoji at the cut stays well formed (the jsonb failure)', () => {
    const raw = `${'x'.repeat(3498)}😀${'y'.repeat(1500)}`
    const out = cut(raw, 3500, { ellipsis: '…' })
    expect(broken(out)).toBe(false)
    expect(out).toBe(`${'x'.repeat(3498)}…`)
    expect(JSON.parse(JSON.stringify(out))).toBe(out)
    // what the old cut gave
    expect(broken(raw.slice(0, 3499))).toBe(true)
  })

  it('a topic name of flags stays within 128 UTF-16 units and whole flags', () => {
    const out = cut('🇩🇪'.repeat(100), TOPIC_NAME_MAX, { ellipsis: '…' })
    expect(textLength(out)).toBeLessThanOrEqual(128)
    expect(out).toBe(`${'🇩🇪'.repeat(31)}…`)
  })

  it('repairs a lone surrogate already in the input', () => {
    expect(wellFormed('a\uD83Db')).toBe('a\uFFFDb')
    expect(cut('a\uDE00b', 10)).toBe('a\uFFFDb')
    expect(wellFormed('😀')).toBe('😀')
  })
})
