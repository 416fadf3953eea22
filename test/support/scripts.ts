import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

/**
 * The node arguments of one of package.json's app scripts (`npm run build --silent && node <args>`), so tests and
 * benchmarks start the app exactly as `npm start` / `npm run bot` do, flags (heap limit, source maps) included.
 */
export function scriptNodeArgs(script: 'start' | 'bot' | 'worker'): string[] {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>
  }
  const line = pkg.scripts[script] ?? ''
  const run = line.split('&&').pop()!.trim().split(/\s+/)
  if (run[0] !== 'node')
    throw new Error(`package.json scripts.${script} does not end in a node command: ${line}`)
  return run.slice(1)
}
