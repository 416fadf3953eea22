/**
 * CSV as RFC 4180 has it (comma, CRLF, fields quoted when they hold a comma, quote or line break, quotes doubled),
 * with a UTF-8 byte order mark so spreadsheet programs read Cyrillic names right. Text that a spreadsheet would
 * take for a formula (=, +, -, @ at the start: a client's name is theirs to choose) gets a leading apostrophe;
 * numbers are written as numbers.
 */

export type Cell = string | number | boolean | null | undefined

export interface Column<T> {
  header: string
  value: (row: T) => Cell
}

function field(v: Cell): string {
  if (v === null || v === undefined) return ''
  if (typeof v === 'number' || typeof v === 'boolean') return String(v)
  const s = /^[=+\-@\t\r]/.test(v) ? `'${v}` : v
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s
}

export function toCsv<T>(columns: readonly Column<T>[], rows: readonly T[]): string {
  const lines = [columns.map((c) => field(c.header)).join(',')]
  for (const r of rows) lines.push(columns.map((c) => field(c.value(r))).join(','))
  return `\uFEFF${lines.join('\r\n')}\r\n`
}
