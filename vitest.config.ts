import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'internal-contracts/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Removes local test users (orchssh*) a crashed or killed run left, before and after a run.
    globalSetup: ['test/support/global-setup.ts'],
  },
});
