import { describe, expect, it } from 'vitest'
import { EMPTY_DESK_SET_UP, runDemo } from './demo-support'

/**
 * `npm run demo:plan` (src/demo/plan-demo.ts) as a smoke test, the way demo.test.ts runs `npm run demo`: it must start
 * from an empty desk set up from Telegram, end by itself with exit code 0 and print what each party saw.
 */
describe('npm run demo:plan', () => {
  it('sets an empty desk up from Telegram, creates the plans in /settings, plays a support plan offline and exits 0', {
    timeout: 320_000,
  }, async () => {
    const r = await runDemo('src/demo/plan-demo.ts')
    expect(r.err).toBe('')
    expect(r.code).toBe(0)
    for (const line of [
      // The set-up from Telegram, as in `npm run demo` (src/demo/empty-desk.ts).
      ...EMPTY_DESK_SET_UP,
      // The plans, created in /settings step by step, the carry-over set on the first.
      /Ada ▸ bot +\[ ➕ New plan \]\n +bot ▸ Ada \(private\) +New plan\. Send a short code/,
      /Ada ▸ bot +4\n +bot ▸ Ada \(private\) +Created\. Clients see it in \/plan now, at 500 ⭐ per 30 days\./,
      /Ada ▸ bot +2\n +bot ▸ Ada \(private\) +Saved\. Carry-over is now: 2/,
      // The plan's story, as before.
      /• Support, basic — 500 ⭐ per 30 days\n +• Support, pro — 900 ⭐ per 30 days/,
      /bot ▸ Telegram +createInvoiceLink “Support, basic” 500 ⭐, subscription_period 2592000/,
      /bot ▸ Anna +✅ Your plan “Support, basic” is active: 3 questions/,
      /bot ▸ staff group +🗂 new topic #\d+ “🟢 Anna · Support, basic · #1 · 👤 Ed”/,
      /bot ▸ Anna +✅ Question #1 accepted/,
      /Ed ▸ topic #\d+ +HMAC-SHA256 over the raw body/,
      /bot ▸ Anna +🔄 “Support, basic” renewed: period 2, .*5 questions \(2 carried over\)/,
      /bot ▸ Telegram +createInvoiceLink “Support, pro” 900 ⭐, subscription_period 2592000/,
      /bot ▸ Anna +🔁 Change of plan paid: “Support, pro”, 900 ⭐ every 30 days/,
      /bot ▸ Telegram +editUserStarSubscription\(is_canceled: true\)[\s\S]*editUserStarSubscription\(is_canceled: true\)/,
      /Questions: 0 used, 0 awaiting an answer, 5 of 5 left\.\n +Next renewal: .*\n +From .*: “Support, pro”, 900 ⭐ per 30 days, already paid/,
      /bot ▸ Anna +Renewal is cancelled/,
      /demo finished in [\d.]+ s/,
    ])
      expect(r.out).toMatch(line)
    // Nothing was offered before the desk was set up: the client's first look comes after the plans were created.
    expect(r.out.indexOf('Created. Clients see it in /plan')).toBeLessThan(r.out.indexOf('Anna ▸ bot'))
  })
})
