#!/usr/bin/env node
// `npm test`: the two vitest projects (vitest.config.ts) side by side, as two vitest runs.
//
// The shared project is CPU-bound (three files at a time on two cores); the timed project (tests that time
// themselves: deadlines, a ratio of two timings, CPU read from /proc) runs one file at a time and mostly waits on
// timers. Run one after the other they took about 4 and 2 minutes; side by side, the shared run is started at the
// lowest CPU priority (nice 19: its files, the services and browsers they start and, on the embedded default, its
// PostgreSQL inherit it), so a timed file that needs the CPU gets it at once and keeps its timing. (The scheduler
// weighs each thread, and the shared run has many: at nice 10 a timed file's 400 ms busy loop got 0.24 s of CPU.)
//
// The shared run's report streams as it goes; the timed run's is printed whole when both have ended. The exit code is
// the first failure's. TEST_SEQUENTIAL=1 runs the timed project after the shared one instead (no priorities).
// Arguments are passed to both runs (e.g. `npm test -- --reporter=dot`).
import { spawn } from 'node:child_process';
import os from 'node:os';

const args = process.argv.slice(2);
// A filter may match files of one project only: the other run then finds none, which is no failure.
const vitest = ['node_modules/vitest/vitest.mjs', 'run', '--passWithNoTests'];
const SHARED_NICE = 19;

function run(project, { nice = 0, capture = false } = {}) {
  const child = spawn(process.execPath, [...vitest, '--project', project, ...args], {
    stdio: ['ignore', capture ? 'pipe' : 'inherit', capture ? 'pipe' : 'inherit'],
  });
  if (nice) os.setPriority(child.pid, nice);
  let output = '';
  if (capture) {
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
  }
  const ended = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0))));
  return { child, ended, output: () => output };
}

const stopAll = (children) => {
  for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => {
    for (const c of children) c.kill(signal);
  });
};

let code;
if (process.env.TEST_SEQUENTIAL === '1') {
  const shared = run('shared');
  stopAll([shared.child]);
  code = await shared.ended;
  const timed = run('timed');
  stopAll([timed.child]);
  code = code || (await timed.ended);
} else {
  const started = Date.now();
  // Started first: its global setup and its first file's service begin while the shared run still loads.
  const timed = run('timed', { capture: true });
  const shared = run('shared', { nice: SHARED_NICE });
  stopAll([timed.child, shared.child]);
  const [sharedCode, timedCode] = await Promise.all([shared.ended, timed.ended]);
  process.stdout.write(`\n==== the timed project (ran beside the shared one) ====\n${timed.output()}`);
  process.stdout.write(`\nnpm test: both projects in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
  code = sharedCode || timedCode;
}
process.exit(code);
