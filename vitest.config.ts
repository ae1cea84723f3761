import { defineConfig } from 'vitest/config';

// Tests that time themselves (a ratio of two timings, a deadline, CPU read from /proc) run after the others, one file
// at a time; the rest share the machine three files at a time: most of their time is spent waiting on PostgreSQL,
// child processes and timers, not on CPU (one file at a time took 10-13 minutes on 2 cores, three about 6).
const TIMED = [
  'test/bench/**/*.test.ts',
  'test/staff/sessions.test.ts',
  'test/staff/sign-in-throttle.test.ts',
  'test/loyalty/sweep-punctuality.test.ts',
  'test/loyalty/points-jobs.test.ts',
  'test/process/embedded-supervision.test.ts',
  'test/scale/engine-changes.test.ts',
  'test/rate-limits/rate-limits.test.ts',
  'test/audit/audit-log.test.ts',
  'test/insights/insights.test.ts',
];

export default defineConfig({
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    projects: [
      { extends: true, test: { name: 'shared', include: ['test/**/*.test.ts'], exclude: TIMED } },
      { extends: true, test: { name: 'timed', include: TIMED } },
    ],
  },
});
