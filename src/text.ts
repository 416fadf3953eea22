/**
 * Cutting text without breaking it: the one place the desk shortens user, staff or model text.
 *
 * A cut by UTF-16 units (`s.slice(0, n)`) can leave half of a surrogate pair (an emoji, most non-BMP characters);
 * PostgreSQL's jsonb refuses such a string (22P02), a text column stores U+FFFD, and Telegram shows garbage. A cut by
 * code points keeps the string well formed but can still split what a reader sees as one character: a ZWJ family
 * (👨‍👩‍👧), a flag (two regional indicators), a letter and its combining accent, a keycap. So the cut here is by
 * graphemes (Intl.Segmenter), and the limit is counted in UTF-16 units, which is how Telegram counts a text's length
 * ("1-4096 characters after entities parsing"; entity offsets are UTF-16 units too) and is never less than the
 * number of code points, so a text within it is within either reading. The result is always well formed: a lone
 * surrogate already in the input (model output can carry one) becomes U+FFFD.
 */

/** Telegram's limits (Bot API reference), in what it counts: UTF-16 units. */
export const MESSAGE_TEXT_MAX = 4096
export const CAPTION_MAX = 1024
export const TOPIC_NAME_MAX = 128
export const INVOICE_TITLE_MAX = 32
export const INVOICE_DESCRIPTION_MAX = 255
export const CALLBACK_ANSWER_MAX = 200
export const PLACEHOLDER_MAX = 64

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' })
// With the u flag a pair is one code point, so \p{Cs} matches only a surrogate without its other half.
const LONE_SURROGATE = /\p{Cs}/u
const LONE_SURROGATES = /\p{Cs}/gu

export type CutOptions = {
  /** Appended (or, with keep: 'end', prepended) when something was cut; counted within `max`. Default: none. */
  ellipsis?: string
  /** Which part to keep: the start (default) or the end. */
  keep?: 'start' | 'end'
  /** What `max` counts: UTF-16 units (default; Telegram's count and JavaScript's .length) or UTF-8 bytes. */
  unit?: 'utf16' | 'utf8'
}

const utf8Length = (s: string): number => Buffer.byteLength(s, 'utf8')

/** The string with every lone surrogate replaced by U+FFFD (what PostgreSQL and Telegram accept). */
export function wellFormed(text: string): string {
  return LONE_SURROGATE.test(text) ? text.replace(LONE_SURROGATES, '\uFFFD') : text
}

/** The length Telegram counts for a text (UTF-16 units). */
export function textLength(text: string): number {
  return text.length
}

/**
 * At most `max` units of `text` (see CutOptions), cut between graphemes. Text that fits comes back unchanged (well
 * formed). When something is cut the ellipsis is added and counted; if not even one whole grapheme fits beside it,
 * the first grapheme is cut between code points instead (never between the halves of a surrogate pair), so a
 * non-empty text gives a non-empty result whenever `max` leaves room for one code point.
 */
export function cut(text: string, max: number, options: CutOptions = {}): string {
  const s = wellFormed(text)
  const size = options.unit === 'utf8' ? utf8Length : textLength
  if (size(s) <= max) return s
  const ellipsis = options.ellipsis ?? ''
  const room = max - size(ellipsis)
  if (room <= 0) return cut(ellipsis, Math.max(0, max), { unit: options.unit })
  const parts = Array.from(graphemes.segment(s), (g) => g.segment)
  if (options.keep === 'end') parts.reverse()
  const kept: string[] = []
  let used = 0
  for (const g of parts) {
    const n = size(g)
    if (used + n > room) {
      if (kept.length === 0) kept.push(fitCodePoints(g, room, size, options.keep === 'end').join(''))
      break
    }
    kept.push(g)
    used += n
  }
  if (options.keep === 'end') return ellipsis + kept.reverse().join('')
  return kept.join('') + ellipsis
}

/** The code points of one grapheme that fit in `room` (from its start, or from its end). */
function fitCodePoints(g: string, room: number, size: (s: string) => number, fromEnd: boolean): string[] {
  const points = Array.from(g)
  if (fromEnd) points.reverse()
  const out: string[] = []
  let used = 0
  for (const p of points) {
    if (used + size(p) > room) break
    out.push(p)
    used += size(p)
  }
  return fromEnd ? out.reverse() : out
}
