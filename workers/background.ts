// Background worker process: heartbeat for the web's /ready and its own /health on WORKER_HEALTH_PORT.
import { createServer } from 'node:http';
import { loadConfigOrExit } from '../src/config.js';
import { runBackgroundWorker } from '../src/jobs/background-worker.js';
import { survivesLostConnections } from '../src/jobs/unhandled-rejections.js';
import { createLogger } from '../src/platform/logger.js';

/** Like the web process: an attempt in flight may finish, but the stop never outlasts this (it is retried later). */
const STOP_LIMIT_MS = 5_000;

const config = loadConfigOrExit();
const log = createLogger(config.logLevel).child({ process: 'worker' });
const started = runBackgroundWorker(config, log, createServer);
let stopping = false;

// A signal to the whole process group and the web's own SIGTERM both arrive: the second must not cut the stop short.
const stop = (signal: string) => {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, 'worker stopping');
  setTimeout(() => process.exit(1), STOP_LIMIT_MS).unref();
  started.then((worker) => worker.stop()).then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.on('SIGINT', () => stop('SIGINT'));
process.on('SIGTERM', () => stop('SIGTERM'));
// Forked by the web primary (an IPC channel): a primary gone, even by kill -9, must not leave its worker running on.
if (process.send) process.on('disconnect', () => stop('parent gone'));

survivesLostConnections(log);

started.catch((error: unknown) => {
  log.fatal({ err: error }, 'worker failed to start');
  process.exit(1);
});
