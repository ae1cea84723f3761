// What every bench shares: a free local port, a bounded run whose clean-ups happen however it ends, the service
// started as its own process, and the reference servers of bench/reference.
import { fork, spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import net from 'node:net';
import path from 'node:path';

/** Forks bench/reference/`script` with `args` and answers its child once it says it is ready (killed at clean-up). */
export function startReference(root, script, args, cleanups) {
  const child = fork(path.join(root, 'bench/reference', script), args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  cleanups.push(async () => child.kill('SIGKILL'));
  return new Promise((resolve, reject) => {
    child.once('message', () => resolve(child));
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * Runs `main` with a hard time limit; `cleanups` (run last-in first-out) stop what it started, on success, failure
 * or time-out. Exits the process with 0 or 1.
 */
export function runBounded(main, timeoutMs, cleanups) {
  const finish = async (code, error) => {
    if (error) console.error(error);
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    process.exit(code);
  };
  const deadline = setTimeout(() => void finish(1, new Error(`bench exceeded ${timeoutMs / 1000} s`)), timeoutMs);
  main().then(
    () => {
      clearTimeout(deadline);
      return finish(0);
    },
    (error) => finish(1, error),
  );
}

/** The environment of a bench's own service: embedded PostgreSQL under `dataDir` (DATABASE_URL dropped), no worker. */
export function serviceEnv({ dataDir, port, healthPort, key, extra = {} }) {
  const env = {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    WORKER_HEALTH_PORT: String(healthPort),
    START_WORKER: 'false',
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
    BOOTSTRAP_API_KEY: key,
    ...extra,
  };
  delete env.DATABASE_URL;
  return env;
}

/** Waits until `url` answers 200, failing early with the process's output should it exit. */
export async function waitFor(url, child, output, timeoutMs = 180_000) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`process exited:\n${output()}`);
    if ((await fetch(url).then((r) => r.status, () => 0)) === 200) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`not ready: ${url}\n${output()}`);
}

/**
 * Starts `script` (a path under `root`) with `env`, waits for `readyUrl`; its stop (SIGINT, awaited) joins `cleanups`.
 * `BENCH_NODE_ARGS` is given to node before the script (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`: a profile of each
 * thread, written at the graceful stop; node refuses --cpu-prof in NODE_OPTIONS); BENCH_SERVICE_OUTPUT names a file that
 * receives what the process prints.
 */
export async function startProcess(root, script, env, readyUrl, cleanups) {
  let output = '';
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, path.join(root, script)], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  // BENCH_SERVICE_OUTPUT=file: what the process printed, kept there too (e.g. with BENCH_NODE_ARGS=--trace-gc).
  if (process.env.BENCH_SERVICE_OUTPUT) {
    // Two sources into one file: neither may end it (the other may still write); it ends when the process has.
    const file = createWriteStream(process.env.BENCH_SERVICE_OUTPUT, { flags: 'a' });
    child.stdout.pipe(file, { end: false });
    child.stderr.pipe(file, { end: false });
    child.once('close', () => file.end());
  }
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGINT');
    await new Promise((r) => child.once('exit', r));
  };
  cleanups.push(stop);
  await waitFor(readyUrl, child, () => output);
  return { child, stop, output: () => output };
}

/** The service (`dist/src/main.js` of `root`) with `env`, once its /ready answers. */
export function startServiceProcess(root, env, cleanups) {
  return startProcess(root, 'dist/src/main.js', env, `http://127.0.0.1:${env.PORT}/ready`, cleanups);
}

const TICKS = 100; // USER_HZ on Linux

async function cpuOf(statPath) {
  const text = await readFile(statPath, 'utf8');
  const close = text.lastIndexOf(')');
  const fields = text.slice(close + 2).split(' ');
  return { comm: text.slice(text.indexOf('(') + 1, close), ppid: Number(fields[1]), cpu: (Number(fields[11]) + Number(fields[12])) / TICKS };
}

/**
 * CPU seconds so far of a process and each of its descendants (from /proc), each marked node or postgres; `webThread`:
 * the root process's main thread alone (the web thread when the service runs one web process).
 */
export async function treeCpu(rootPid) {
  const stats = new Map();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      stats.set(Number(entry), await cpuOf(`/proc/${entry}/stat`));
    } catch {
      // gone meanwhile
    }
  }
  const inTree = new Set([rootPid]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, s] of stats) if (!inTree.has(pid) && inTree.has(s.ppid)) (inTree.add(pid), (grew = true));
  }
  const processes = new Map();
  for (const pid of inTree) {
    const s = stats.get(pid);
    if (s) processes.set(pid, { postgres: s.comm.startsWith('postgres'), cpu: s.cpu });
  }
  const webThread = await cpuOf(`/proc/${rootPid}/task/${rootPid}/stat`).then((s) => s.cpu, () => 0);
  return { processes, webThread };
}

/**
 * CPU seconds taken between two treeCpu readings, node and postgres apart: a process started meanwhile counts whole,
 * one that ended meanwhile (an idle database connection closed) is left out rather than subtracted.
 */
export function cpuBetween(before, after) {
  let node = 0;
  let postgres = 0;
  for (const [pid, now] of after.processes) {
    const taken = now.cpu - (before.processes.get(pid)?.cpu ?? 0);
    if (now.postgres) postgres += taken;
    else node += taken;
  }
  return { node, postgres, webThread: after.webThread - before.webThread };
}
