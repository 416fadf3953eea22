/**
 * The house's floors, bottom to top, as path patterns (regular expressions on paths relative to the repository).
 * A module imports its own floor and the floors below it, never one above: .dependency-cruiser.cjs turns this list
 * into rules (checked by `npm run lint`), and scripts/graph.mjs draws README.md's graph from it. README.md's
 * "Architecture" says why each floor sits where it does.
 */

/** A table file is the database's schema kept next to its feature for reading: it belongs to the db floor. */
const TABLES = '^src/[^/]+/[^/]+[.]tables[.]ts$'

const floor = (kind, name, paths) => ({ kind, name, paths })

const FLOORS = [
  floor('ground', 'log+time', [
    '^src/log[.]ts$',
    '^src/readiness[.]ts$',
    '^src/metrics[.]ts$',
    '^src/text[.]ts$',
    '^src/time/',
  ]),
  floor('ground', 'config', ['^src/config/']),
  floor('ground', 'db', ['^src/db/', TABLES]),
  floor('ground', 'clients+audit', ['^src/clients/', '^src/audit/']),
  floor('ground', 'settings', ['^src/settings/']),
  floor('ground', 'jobs', ['^src/jobs/']),
  floor('ground', 'ledger', ['^src/ledger/']),
  floor('ground', 'llm', ['^src/llm/']),
  floor('ground', 'deps', ['^src/deps[.]ts$']),
  floor('ground', 'telegram', ['^src/telegram/']),
  ...[
    'orders',
    'routing',
    'experts',
    'consultations',
    'lifecycle',
    'drafting',
    'disputes',
    'payments',
    'subscriptions',
    'reports',
    'setup',
    'dashboard',
    'privacy',
  ].map((f) => floor('feature', f, [`^src/${f}/`])),
  floor('edge', 'bot+server', ['^src/bot/', '^src/server/', '^src/intake/']),
  floor('wiring', 'wiring', ['^src/app[.]ts$', '^src/workers[.]ts$', '^src/main[.]ts$', '^src/demo/']),
]

/** The floor of a module path (tables files first: they are the db floor wherever they live), or undefined. */
function floorOf(path) {
  if (new RegExp(TABLES).test(path)) return FLOORS.find((f) => f.name === 'db')
  return FLOORS.find((f) => f.paths.some((p) => new RegExp(p).test(path)))
}

module.exports = { FLOORS, TABLES, floorOf }
