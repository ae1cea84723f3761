// The worker's guard for rejections no one awaited, in a real child process: a lost connection (what pg-boss's
// un-awaited job completion meets when its connection is cut) and a call refused after the job queue's stop began are
// logged and the process runs on; anything else ends it.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const guard = path.resolve('dist/src/jobs/unhandled-rejections.js');

function run(rejection: string): Promise<{ code: number | null; output: string; alive: boolean }> {
  const script = `
    import { survivesLostConnections } from ${JSON.stringify(guard)};
    import { JobQueueStoppedError } from ${JSON.stringify(path.resolve('dist/src/jobs/job-queue.js'))};
    import { createLogger } from ${JSON.stringify(path.resolve('dist/src/platform/logger.js'))};
    survivesLostConnections(createLogger('info'));
    Promise.reject(${rejection});
    setTimeout(() => { console.log('still running'); process.exit(0); }, 300);
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, output, alive: output.includes('still running') })));
}

describe('a rejection no one awaited, in a worker process', () => {
  it('runs on after a lost connection (a terminated backend, a dropped socket)', async () => {
    const terminated = await run(`Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' })`);
    expect(terminated, terminated.output).toMatchObject({ code: 0, alive: true });
    expect(terminated.output).toContain('lost its connection with no one awaiting it');
    const dropped = await run(`new Error('Connection terminated unexpectedly')`);
    expect(dropped, dropped.output).toMatchObject({ code: 0, alive: true });
  });

  it('runs on after a job queue call refused because its stop began (a completion pg-boss did not await)', async () => {
    const refused = await run(`new JobQueueStoppedError()`);
    expect(refused, refused.output).toMatchObject({ code: 0, alive: true });
    expect(refused.output).toContain('came after its stop');
  });

  it('ends on anything else', async () => {
    const bug = await run(`new TypeError('x is not a function')`);
    expect(bug.alive, bug.output).toBe(false);
    expect(bug.code).toBe(1);
    expect(bug.output).toContain('unhandled rejection');
  });
});
