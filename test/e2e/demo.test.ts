import { spawn } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

/**
 * `npm run demo` as a smoke test: it must end by itself with exit code 0 and print what each party saw, step by step.
 * (CI runs it once more on its own, after the tests: .ci/run.)
 */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

function runDemo(): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    // Not inherited: LOG_LEVEL (the demo's output is the point) and the IPC channel of vitest's forked worker (a child
    // that inherits NODE_CHANNEL_FD opens that channel and never exits by itself).
    const {
      LOG_LEVEL: _level,
      NODE_CHANNEL_FD: _fd,
      NODE_CHANNEL_SERIALIZATION_MODE: _mode,
      ...env
    } = process.env
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/demo/demo.ts'], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => {
      out += d
    })
    child.stderr.on('data', (d) => {
      err += d
    })
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, out, err }))
  })
}

describe('npm run demo', () => {
  it('plays a whole consultation offline and exits 0', { timeout: 120_000 }, async () => {
    const r = await runDemo()
    expect(r.err).toBe('')
    expect(r.code).toBe(0)
    for (const line of [
      /Anna ▸ bot +\/start/,
      /bot ▸ Anna +🧾 invoice “Review sprint, 2 h”: 300 ⭐/,
      /bot ▸ staff group +🗂 new topic #\d+ “🟢 Anna · Review sprint, 2 h · #1 · 👤 Ed”/,
      /bot ▸ Ed \(private\) +🧑‍💼 Consultation #1 \(Review sprint, 2 h\) is yours, Ed/,
      /bot ▸ Ed \(private\) +❓ Question #1 · consultation #1\n +Anna · Review sprint, 2 h\n +«\[photo\] Our webhook handler times out.*»\n +\[ Open the topic \]/,
      /bot ▸ topic #\d+ +\[photo\] Our webhook handler times out/,
      /bot ▸ Anna +✅ Question #1 accepted/,
      /Ed ▸ topic #\d+ +Start with the pool/,
      /bot ▸ Anna +✅ Question #2 accepted/,
      /bot ▸ topic #\d+ +⏰ Question #2 is due at/,
      /⏱ Time left: 1 h 1\d min\./,
      /bot ▸ Anna +⏳ Your consultation “Review sprint, 2 h” closes soon: 30 min left/,
      /bot ▸ Anna +✅ Payment received: 100 ⭐\. 2 more questions were added; questions left: 3\./,
      /bot ▸ Anna +🔚 Your consultation “Review sprint, 2 h” ended at/,
      /bot ▸ Anna +Thank you! You rated the consultation 5 of 5/,
      /bot ▸ topic #\d+ +🗂 topic closed/,
      /bot ▸ Anna +The consultation window closed at/,
      /bot ▸ Anna +📎 consultation-1\.txt/,
      /│ — Question #2 · accepted/,
      /Ada ▸ staff General +\/report/,
      /💰 Revenue: paid 400 ⭐ \(2 payments\), refunded 0 ⭐ \(0\), net 400 ⭐/,
      /⭐ Ratings of consultations .*\n\s*• Ed: 5\.00 over 1 rating/,
      /demo finished in [\d.]+ s/,
    ])
      expect(r.out).toMatch(line)
  })
})
