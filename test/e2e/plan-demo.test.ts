import { spawn } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

/**
 * `npm run demo:plan` (src/demo/plan-demo.ts) as a smoke test, the way demo.test.ts runs `npm run demo`: it must end
 * by itself with exit code 0 and print what each party saw.
 */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

function runDemo(
  script = 'src/demo/plan-demo.ts',
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    // Not inherited: LOG_LEVEL (the demo's output is the point) and the IPC channel of vitest's forked worker (a child
    // that inherits NODE_CHANNEL_FD opens that channel and never exits by itself).
    const {
      LOG_LEVEL: _level,
      NODE_CHANNEL_FD: _fd,
      NODE_CHANNEL_SERIALIZATION_MODE: _mode,
      ...env
    } = process.env
    const child = spawn(process.execPath, ['--import', 'tsx', script], {
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

describe('npm run demo:plan', () => {
  it('plays a support plan offline (subscribe, ask, renewal, change of plan, cancel) and exits 0', {
    timeout: 120_000,
  }, async () => {
    const r = await runDemo()
    expect(r.err).toBe('')
    expect(r.code).toBe(0)
    for (const line of [
      /bot ▸ Telegram +createInvoiceLink “Support, basic” 500 ⭐, subscription_period 2592000/,
      /bot ▸ Anna +✅ Your plan “Support, basic” is active: 3 questions/,
      /bot ▸ staff group +🗂 new topic “🟢 Anna · Support, basic · #1 · 👤 Ed”/,
      /bot ▸ Anna +✅ Question #1 accepted/,
      /bot ▸ Anna +🔄 “Support, basic” renewed: period 2, .*5 questions \(2 carried over\)/,
      /bot ▸ Telegram +createInvoiceLink “Support, pro” 900 ⭐, subscription_period 2592000/,
      /bot ▸ Anna +🔁 Change of plan paid: “Support, pro”, 900 ⭐ every 30 days/,
      /bot ▸ Telegram +editUserStarSubscription\(is_canceled: true\)[\s\S]*editUserStarSubscription\(is_canceled: true\)/,
      /Questions: 0 used, 0 awaiting an answer, 5 of 5 left\.\nNext renewal: .*\nFrom .*: “Support, pro”, 900 ⭐ per 30 days, already paid/,
      /bot ▸ Anna +Renewal is cancelled/,
      /demo finished in [\d.]+ s/,
    ])
      expect(r.out).toMatch(line)
  })
})
