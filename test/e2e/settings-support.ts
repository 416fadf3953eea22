import type { User } from 'grammy/types'
import { sql } from 'kysely'
import { readDesk } from '../../src/settings/settings'
import { TEST_BOT_ID, type World } from '../support/fixtures'

/**
 * Helpers of the /settings tests (test/e2e/settings-*.test.ts, plan-delete-race.test.ts): buttons pressed and texts
 * sent in an admin's private chat, the desk's settings row and its settings.changed audit. `world` is read at each
 * call (the tests start their world in beforeAll).
 */
export function settingsKit(world: () => World) {
  const settings = async () => (await readDesk(world().deps.db, TEST_BOT_ID))!
  return {
    settings,
    version: async () => (await settings()).version,
    doc: async () => (await settings()).doc,
    /** How many settings.changed rows the desk's audit holds. */
    audits: async () =>
      Number(
        (
          await sql<{ n: number }>`select count(*)::int as n from audit_log
            where bot_id = ${TEST_BOT_ID} and action = 'settings.changed'`.execute(world().deps.db)
        ).rows[0]!.n,
      ),
    /** Presses a button; the pop-up's text ('' when none). */
    async press(user: User, data: string) {
      const w = world()
      const since = w.tg.mark()
      const u = w.tg.callback(user, data)
      await w.tg.push(TEST_BOT_ID, u)
      const a = await w.tg.waitFor(
        'answerCallbackQuery',
        { callback_query_id: u.callback_query!.id },
        { since },
      )
      return (a.payload as { text?: string }).text ?? ''
    },
    /** Sends a text and waits for the bot's next message to that chat matching `reply`; its text. */
    async send(user: User, text: string, reply: RegExp) {
      const w = world()
      const since = w.tg.mark()
      await w.tg.push(TEST_BOT_ID, w.tg.privateText(user, text))
      return (await w.tg.waitForSent(user.id, reply, { since })).text ?? ''
    },
  }
}

/**
 * A tariff's policies and top-ups as stored once the tests of /settings and of the dashboard's settings pages
 * entered "extend 2" (if late), "stop" (on a refund) and "2 questions 100, 1 hour 60" (top-ups).
 */
export const EDITED_POLICIES = {
  breachPolicy: { kind: 'extend_window', hours: 2 },
  refundPolicy: 'stop',
  topUps: [
    { kind: 'questions', questions: 2, priceStars: 100 },
    { kind: 'hours', hours: 1, priceStars: 60 },
  ],
}
