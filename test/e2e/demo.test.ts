import { describe, expect, it } from 'vitest'
import { EMPTY_DESK_SET_UP, runDemo } from './demo-support'

/**
 * `npm run demo` as a smoke test: it must end by itself with exit code 0 and print what each party saw, step by step.
 * (CI runs it once more on its own, after the tests: .ci/run.)
 */
describe('npm run demo', () => {
  it('sets an empty desk up from Telegram, plays a whole consultation offline and exits 0', {
    timeout: 320_000,
  }, async () => {
    const r = await runDemo('src/demo/demo.ts')
    expect(r.err).toBe('')
    expect(r.code).toBe(0)
    for (const line of [
      // The set-up from Telegram (src/demo/empty-desk.ts), then the tariff in /settings.
      ...EMPTY_DESK_SET_UP,
      /Ada ▸ bot +\[ At payment \]\n +bot ▸ Ada \(private\) +Created\. Clients see it in \/tariffs now, at 300 ⭐\./,
      /Ada ▸ bot +2 questions 100, 1 hour 60\n +bot ▸ Ada \(private\) +Saved\. Top-ups is now: 2 questions 100, 1 hour 60/,
      // The consultation, as before.
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
      /⏱ Time left: 1 h \d+ min\./,
      /bot ▸ Anna +⏳ Your consultation “Review sprint, 2 h” closes soon: 1 h left/,
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
    // Nothing was sold before the desk was set up: the client's first look comes after the tariff was created.
    expect(r.out.indexOf('Created. Clients see it')).toBeLessThan(r.out.indexOf('Anna ▸ bot'))
  })
})
