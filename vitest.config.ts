import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Three test files at a time: they mostly wait on PostgreSQL, child processes and HTTP, so on 2 cores this
    // halves the run (embedded: 528 s with the default of one worker, 252 s with three; external: 301 s).
    maxWorkers: 3,
  },
});
