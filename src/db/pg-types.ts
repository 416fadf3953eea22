import pg from 'pg'

/**
 * int8 (bigint) arrives as a string by default. Telegram ids exceed 2^31 but stay below 2^53 (user ids have at most
 * 52 significant bits, supergroup ids are -100xxxxxxxxxx), and ledger amounts are counts or minor units, so we parse
 * int8 to number and refuse, loudly, any value that would lose precision instead of rounding it silently.
 */
function parseInt8(value: string): number {
  const n = Number(value)
  if (!Number.isSafeInteger(n)) throw new RangeError(`int8 value ${value} is outside the safe integer range`)
  return n
}

// @types/pg declares arrayParser as a function; at run time (pg-types 2) it is an object with create().
const arrayParser = pg.types.arrayParser as unknown as {
  create(source: string, transform: (entry: string) => unknown): { parse(): unknown[] }
}

let installed = false
export function installPgTypeParsers(): void {
  if (installed) return
  installed = true
  pg.types.setTypeParser(pg.types.builtins.INT8, parseInt8)
  // numeric stays a string: it is only used for report ratios, where the caller decides the precision.
  pg.types.setTypeParser(1016 as never /* int8[] */, (v: string) => arrayParser.create(v, parseInt8).parse())
}
