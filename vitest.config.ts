import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    // Integration files each get their own database cloned from a migrated template, so files run in parallel.
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 120_000,
    server: { deps: { inline: ['kysely'] } },
  },
})
