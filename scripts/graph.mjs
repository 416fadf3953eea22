// `npm run graph`: draws the house's import graph, folder by folder and floor by floor, from dependency-cruiser's
// own reading of src/ (the same cruise `npm run lint` checks), into README.md between the graph markers.
// `npm run graph -- --check` (part of `npm run lint`) fails when README.md does not show the current graph.
import { execFileSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { FLOORS, floorOf } = require('./floors.cjs')

const START = '<!-- graph:start (npm run graph) -->'
const END = '<!-- graph:end -->'

const cruise = JSON.parse(
  execFileSync('node_modules/.bin/depcruise', ['src', '--config', '.dependency-cruiser.cjs', '-T', 'json'], {
    maxBuffer: 256 * 1024 * 1024,
    encoding: 'utf8',
  }),
)

/** A module's room: its top folder under src/ (or the file itself at the top); table files live in the db room. */
function roomOf(path) {
  if (floorOf(path)?.name === 'db') return 'src/db'
  const m = /^src\/([^/]+)/.exec(path)
  return m ? `src/${m[1]}` : undefined
}

const rooms = new Map()
for (const m of cruise.modules) {
  const from = roomOf(m.source)
  if (!from) continue
  if (!rooms.has(from)) rooms.set(from, new Set())
  for (const d of m.dependencies) {
    const to = roomOf(d.resolved)
    if (to && to !== from) rooms.get(from).add(to)
  }
}

/** The room's floor index; a room on no floor (lint refuses it: every-module-on-a-floor) sorts last. */
const rank = (room) => {
  const i = FLOORS.indexOf(floorOf(room.endsWith('.ts') ? room : `${room}/`))
  return i < 0 ? FLOORS.length : i
}
const byFloor = (a, b) => rank(a) - rank(b) || a.localeCompare(b)
const width = Math.max(...[...rooms.keys()].map((r) => r.length))
const lines = []
let kind
for (const room of [...rooms.keys()].sort(byFloor)) {
  const k = FLOORS[rank(room)]?.kind ?? 'on no floor'
  if (k !== kind) {
    if (kind) lines.push('')
    lines.push(`${k}:`)
    kind = k
  }
  const to = [...rooms.get(room)].sort(byFloor).map((r) => r.replace(/^src\//, ''))
  lines.push(
    `  ${room.replace(/^src\//, '').padEnd(width - 2)}  -> ${to.length ? to.join(', ') : '(nothing in src)'}`,
  )
}
const block = `${START}\n\`\`\`text\n${lines.join('\n')}\n\`\`\`\n${END}`

const readme = readFileSync('README.md', 'utf8')
const a = readme.indexOf(START)
const b = readme.indexOf(END)
if (a < 0 || b < 0) throw new Error(`README.md has no ${START} ... ${END} block`)
const next = readme.slice(0, a) + block + readme.slice(b + END.length)
if (process.argv.includes('--check')) {
  if (next !== readme) {
    console.error(
      'README.md does not show the current import graph: run `npm run graph` and commit README.md',
    )
    process.exit(1)
  }
} else if (next !== readme) writeFileSync('README.md', next)
