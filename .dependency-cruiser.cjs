/**
 * The house's one-way rules, checked by `npm run lint` (and so by CI). The floors, bottom to top, are listed in
 * scripts/floors.cjs:
 *
 *   ground    log + time, config, db (with every *.tables.ts), clients + audit, jobs, ledger, llm, deps.ts, telegram
 *   features  orders, routing, consultations, lifecycle, drafting, disputes, payments, reports
 *   edge      bot (handlers in bot/features) and server
 *   wiring    app.ts, workers.ts, main.ts, demo/
 *
 * A module may import its own floor and the floors below it, never one above. The layer rules below are generated
 * from that list, so the order written there is the order enforced; README.md's "Architecture" says why each floor
 * sits where it does. A `*.tables.ts` file is the database's schema kept next to its feature for reading: it belongs
 * to the db floor (src/db/database.ts lists them all) and may import only tables files and the floors below.
 */

const { FLOORS, TABLES } = require('./scripts/floors.cjs')

const GROUND = FLOORS.filter((f) => f.kind === 'ground')
const FEATURES = FLOORS.filter((f) => f.kind === 'feature')
const EDGE = FLOORS.filter((f) => f.kind === 'edge')
const WIRING = FLOORS.filter((f) => f.kind === 'wiring')

const any = (paths) => `(${paths.join('|')})`
const isFeature = (f) => FEATURES.includes(f)

/** Floor i imports nothing of floors i+1..n (a tables file counts as the db floor wherever it lives). */
const layerRules = FLOORS.slice(0, -1).map((floor, i) => {
  const above = FLOORS.slice(i + 1).flatMap((f) => f.paths)
  const ground = GROUND.includes(floor)
  return {
    name: `${ground ? 'ground' : isFeature(floor) ? 'feature' : 'edge'}-${floor.name}-imports-above`,
    comment:
      `${floor.name} imports only its own floor and the floors below it ` +
      `(${FLOORS.slice(0, i + 1)
        .map((f) => f.name)
        .join(' < ')}); a lower module that must start work above it writes an outbox job or gets a ` +
      'function at wiring time.',
    severity: 'error',
    from: {
      path: any(floor.paths),
      ...(floor.paths.includes(TABLES) ? {} : { pathNot: TABLES }),
    },
    to: { path: any(above.filter((p) => p !== TABLES)), pathNot: TABLES },
  }
})

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No module reaches itself again through its imports: data flows down.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-ground-to-feature',
      comment:
        'The ground floor (db, config, log, jobs, telegram, time, ledger, llm, clients, audit, deps.ts) imports no ' +
        'feature, edge or wiring module; table types (*.tables.ts) are part of the db floor.',
      severity: 'error',
      from: { path: any(GROUND.flatMap((f) => f.paths)) },
      to: {
        path: any([...FEATURES, ...EDGE, ...WIRING].flatMap((f) => f.paths)),
        pathNot: TABLES,
      },
    },
    {
      name: 'no-feature-to-edge',
      comment:
        'Features never import the bot, the HTTP server or the wiring (app.ts, workers.ts, main.ts, demo/).',
      severity: 'error',
      from: { path: any(FEATURES.flatMap((f) => f.paths)) },
      to: { path: any([...EDGE, ...WIRING].flatMap((f) => f.paths)) },
    },
    {
      name: 'no-handler-to-repository',
      comment:
        'Handlers (src/bot) call services, never repositories: a service holds the rule and returns plain values ' +
        'the handler renders.',
      severity: 'error',
      from: { path: '^src/bot/' },
      to: { path: '[.]repository[.]ts$' },
    },
    {
      name: 'every-module-on-a-floor',
      comment:
        'A module under src/ that matches no floor escapes the layer rules: put its folder on a floor in ' +
        'scripts/floors.cjs (and so in the one documented order).',
      severity: 'error',
      from: { path: '^src/', pathNot: any(FLOORS.flatMap((f) => f.paths)) },
      to: {},
    },
    ...layerRules,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports are arrows too: a type from above ties a module to what is above it.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    reporterOptions: {
      text: { highlightFocused: true },
    },
  },
}
