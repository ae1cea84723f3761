// Real service processes for tests: spawn the built entry points, wait for readiness, stop them with a signal.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { projectRoot } from '../../src/platform/paths.js';

/**
 * A port nothing listens on, for a service to bind. Chosen below the kernel's ephemeral range: a port from that range
 * (what listening on port 0 gives) may be taken meanwhile as the local port of any outgoing connection (a pool's, to
 * PostgreSQL), and the service then fails to bind it (EADDRINUSE, an external-database run of 2026-11-28). Where the
 * range is unknown or leaves no room below it, the kernel's choice.
 */
export async function freePort(): Promise<number> {
  const low = ephemeralRangeStart();
  if (low !== undefined && low > FIXED_PORTS_BELOW + 1_000) {
    for (let attempt = 0; attempt < 50; attempt++) {
      const port = FIXED_PORTS_BELOW + Math.floor(Math.random() * (low - FIXED_PORTS_BELOW));
      if (await bindBriefly(port).then(() => true, () => false)) return port;
    }
  }
  return bindBriefly(0);
}

/** Ports below this are left to the machine's own services (PostgreSQL, Redis, brokers). */
const FIXED_PORTS_BELOW = 10_000;

function ephemeralRangeStart(): number | undefined {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) ? low : undefined;
  } catch {
    return undefined;
  }
}

/** Binds `port` (0: the kernel's choice) on 127.0.0.1 alone, lets it go, and answers the port bound. */
function bindBriefly(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => {
      const { port: bound } = server.address() as net.AddressInfo;
      server.close(() => resolve(bound));
    });
  });
}

/**
 * Whether the socket listening on `port` belongs to `pid` or a process below it (Linux's /proc; elsewhere, true).
 * freePort's port is free only when asked: until the service binds it, another test's service may take it, and its
 * /ready answers 200 for a service that has not started.
 */
export function listensOn(pid: number, port: number): boolean {
  const inodes = new Set<string>();
  try {
    const hexPort = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
    for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
      for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
        const fields = line.trim().split(/\s+/);
        // local address, remote address, state (0A: LISTEN), ..., inode
        if (fields[3] === '0A' && fields[1]?.endsWith(hexPort) && fields[9]) inodes.add(fields[9]);
      }
    }
  } catch {
    return true;
  }
  for (const member of processTree(pid)) {
    let fds: string[] = [];
    try {
      fds = readdirSync(`/proc/${member}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const socket = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${member}/fd/${fd}`));
        if (socket && inodes.has(socket[1]!)) return true;
      } catch {
        // closed meanwhile
      }
    }
  }
  return false;
}

/** Ended, by its own exit or by a signal (a process killed by a signal keeps `exitCode` null: only `signalCode` tells). */
export function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

export interface ServiceProcess {
  child: ChildProcess;
  baseUrl: string;
  output(): string;
  waitForReady(timeoutMs?: number): Promise<void>;
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function baseEnv(extra: Record<string, string | undefined>): NodeJS.ProcessEnv {
  // One web process unless a test asks for a cluster (WEB_PROCESSES defaults to one per core).
  // Ten connections a web process (DB_POOL_SIZE defaults to 20): a scale test runs three of them beside other files,
  // all on one PostgreSQL, whose default max_connections is 100.
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'info', HOST: '127.0.0.1', WEB_PROCESSES: '1', DB_POOL_SIZE: process.env.DB_POOL_SIZE ?? '10' };
  delete env.DATABASE_URL;
  delete env.TEST_DATABASE_URL;
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

/**
 * A web process of the service on `databaseUrl` (free ports of its own, no background worker, warnings logged), with
 * `extra` settings on top: the scale tests' members.
 */
export async function spawnWebProcess(databaseUrl: string, apiKey: string, extra: Record<string, string> = {}): Promise<ServiceProcess> {
  const port = await freePort();
  const env = baseEnv({
    DATABASE_URL: databaseUrl,
    PORT: String(port),
    WORKER_HEALTH_PORT: String(await freePort()),
    BOOTSTRAP_API_KEY: apiKey,
    START_WORKER: 'false',
    LOG_LEVEL: 'warn',
    ...extra,
  });
  return spawnService(env, port);
}

/** `detached`: the service leads its own process group, as under a terminal or a container runtime. */
export function spawnService(env: NodeJS.ProcessEnv, port: number, options: { detached?: boolean } = {}): ServiceProcess {
  const child = spawn(process.execPath, [path.join(projectRoot, 'dist/src/main.js')], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.detached ?? false,
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    child,
    baseUrl,
    output: () => output,
    async waitForReady(timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        if (hasExited(child)) throw new Error(`service exited (${child.exitCode ?? child.signalCode}):\n${output}`);
        const status = await fetch(`${baseUrl}/ready`).then((r) => r.status, () => 0);
        // Ready only when it is this child that answers (see listensOn).
        if (status === 200 && listensOn(child.pid!, port)) return;
        await new Promise((r) => setTimeout(r, 250));
      }
      throw new Error(`service not ready in ${timeoutMs} ms:\n${output}`);
    },
    stop(signal = 'SIGINT', timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        if (hasExited(child)) return resolve({ code: child.exitCode, signal: child.signalCode });
        const timer = setTimeout(() => {
          child.kill('SIGKILL');
          reject(new Error(`service did not stop within ${timeoutMs} ms:\n${output}`));
        }, timeoutMs);
        child.once('exit', (code, sig) => {
          clearTimeout(timer);
          resolve({ code, signal: sig });
        });
        child.kill(signal);
      });
    },
  };
}

/** POST `body` as JSON to the service's API with the API key; the status and the parsed answer. */
export async function postJson(service: ServiceProcess, apiKey: string, path: string, body: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${service.baseUrl}/api/v1${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

/** Signal 0 only asks whether the process lives. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export interface WorkerProcess {
  child: ChildProcess;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** The background worker (dist/workers/background.js) as a real process, once its own /health answers on `healthPort`. */
export async function spawnWorker(env: NodeJS.ProcessEnv, healthPort: number, timeoutMs = 30_000): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [path.join(projectRoot, 'dist/workers/background.js')], { env: { ...env, WORKER_HEALTH_PORT: String(healthPort) }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (hasExited(child)) throw new Error(`worker exited (${child.exitCode ?? child.signalCode}):\n${output}`);
    if ((await fetch(`http://127.0.0.1:${healthPort}/health`).then((r) => r.status, () => 0)) === 200) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`worker not healthy in ${timeoutMs} ms:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child, output: () => output, exited };
}

/** The processes under `root` (web processes, the background worker, theirs), with `root`, in pid order. */
export function processTree(root: number): number[] {
  const below = (pid: number): number[] => {
    let children: number[] = [];
    try {
      children = execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' }).split('\n').map(Number).filter(Boolean);
    } catch {
      // ps exits 1 when a process has no children.
    }
    return children.flatMap((child) => [child, ...below(child)]);
  };
  return [root, ...below(root)].sort((a, b) => a - b);
}
