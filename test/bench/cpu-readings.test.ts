// The bench's CPU readings (bench/support.mjs), on real processes: what a process tree took between two readings, a
// process started meanwhile counted whole, one that ended meanwhile left out (never a negative figure).
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs module of the bench, without types
import { cpuBetween, treeCpu } from '../../bench/support.mjs';

type Reading = { processes: Map<number, { postgres: boolean; cpu: number }>; webThread: number };
const read = treeCpu as (pid: number) => Promise<Reading>;
const between = cpuBetween as (a: Reading, b: Reading) => { node: number; postgres: number; webThread: number };

/**
 * A node process that burns `ms` of CPU time (not of the clock: on a busy machine a loop of 400 ms may get less than
 * 250 ms of a CPU), says so, then idles until killed or told to exit.
 */
function burner(ms: number): ChildProcess {
  const code = `const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; }; const end = cpu() + ${ms}; while (cpu() < end); process.send('done'); process.on('message', () => process.exit(0)); setInterval(() => {}, 1000)`;
  return spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'ignore', 'ignore', 'ipc'] });
}

describe('bench CPU readings', () => {
  it('counts what a child took, and its main thread as the web thread', async () => {
    const parent = burner(0);
    await once(parent, 'message');
    const before = await read(parent.pid!);
    expect(before.processes.has(parent.pid!)).toBe(true);
    const busy = burner(400);
    // A child of the test, not of `parent`: outside the tree, so it must not be counted.
    await once(busy, 'message');
    const after = await read(parent.pid!);
    const taken = between(before, after);
    expect(taken.node).toBeLessThan(0.2);
    const own = await read(busy.pid!);
    expect([...own.processes.values()][0]!.cpu).toBeGreaterThan(0.25);
    expect(own.webThread).toBeGreaterThan(0.25);
    busy.kill();
    parent.kill();
  });

  it('leaves out a process that ended between the readings instead of subtracting it', async () => {
    // The tree's root is this test process: its children are the burners.
    const first = burner(300);
    await once(first, 'message');
    const before = await read(process.pid);
    expect(before.processes.get(first.pid!)?.cpu ?? 0).toBeGreaterThan(0.2);
    first.send('exit');
    await once(first, 'exit');
    const second = burner(300);
    await once(second, 'message');
    const after = await read(process.pid);
    const taken = between(before, after);
    // The ended child's 0.3 s is not taken away; the new child's whole 0.3 s counts.
    expect(taken.node).toBeGreaterThan(0.2);
    expect(taken.postgres).toBe(0);
    second.kill();
  });
});
