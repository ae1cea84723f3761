import { defineConfig } from 'vitest/config';

// Tests that time themselves (a ratio of two timings, a deadline, CPU read from /proc) run after the others, one file
// at a time. The others run one file at a time too (vitest's default on 2 cores): three at a time took 6 minutes
// instead of 10-13, but one run in three then failed a campaign-budget test after a rollback: a race to find before
// the shared project runs three at a time.
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
