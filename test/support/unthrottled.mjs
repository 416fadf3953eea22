// Loaded with `node --import` into app processes started by tests (test/support/processes.ts): swaps
// @grammyjs/transformer-throttler for a pass-through. The Bot API stand-in has no rate limits, and the production
// throttler's 20 messages a minute for the staff group would make a stream of a hundred copies take five minutes;
// the tests that use this are about crashes and outages, not rate limits. Nothing else of the app changes.
import { register } from 'node:module'

const stub = new URL('./throttler-stub.mjs', import.meta.url).href
register(
  `data:text/javascript,${encodeURIComponent(`
    export async function resolve(specifier, context, next) {
      if (specifier === '@grammyjs/transformer-throttler') return { url: ${JSON.stringify(stub)}, shortCircuit: true }
      return next(specifier, context)
    }`)}`,
)
