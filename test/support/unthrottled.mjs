// Loaded with `node --import` into app processes started by tests (test/support/processes.ts): the shared Telegram
// budget (src/telegram/budget.ts) off, unless the test set TELEGRAM_BUDGET itself. The Bot API stand-in has no rate
// limits unless asked, and the production budget of 20 messages a minute for the staff group would make a stream
// of a hundred copies take five minutes; the tests that use this are about crashes and outages, not rate limits.
// Nothing else of the app changes.
process.env.TELEGRAM_BUDGET ??= 'off'
