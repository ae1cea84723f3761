// Background worker process: heartbeat for the web's /ready and its own /health on WORKER_HEALTH_PORT.
import { createServer } from 'node:http';
import { loadConfigOrExit } from '../src/config.js';
import { runBackgroundWorker } from '../src/jobs/background-worker.js';
import { createLogger } from '../src/platform/logger.js';

const config = loadConfigOrExit();
const log = createLogger(config.logLevel).child({ process: 'worker' });

runBackgroundWorker(config, log, createServer)
  .then((worker) => {
    const stop = (signal: string) => {
      log.info({ signal }, 'worker stopping');
      worker.stop().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  })
  .catch((error: unknown) => {
    log.fatal({ err: error }, 'worker failed to start');
    process.exit(1);
  });
