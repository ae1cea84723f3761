// What a worker process does with a rejection no one awaited. pg-boss's work loop completes or fails a job without
// awaiting it (pg-boss 10.4, manager.js onFetch: `this.complete(…)`), so a connection cut at that moment, or a
// completion sent after the job queue's stop began (refused by its SQL seam), rejects with no one to catch it, and
// Node would end the process. Such a job stays active, expires and runs again: it is logged and the process goes on.
// Anything else still ends it (the primary starts the worker again).
import { isConnectionError } from '../platform/database.js';
import type { Logger } from '../platform/logger.js';
import { JobQueueStoppedError } from './job-queue.js';

export function survivesLostConnections(log: Logger, exit: (code: number) => void = (code) => process.exit(code)): void {
  process.on('unhandledRejection', (reason: unknown) => {
    if (reason instanceof JobQueueStoppedError) {
      log.warn('a job queue call came after its stop with no one awaiting it (a job completion); the job runs again after its expiry');
      return;
    }
    if (isConnectionError(reason)) {
      log.warn({ err: (reason as Error).message }, 'a database call lost its connection with no one awaiting it (a job queue completion); the job runs again after its expiry');
      return;
    }
    log.fatal({ err: reason }, 'unhandled rejection');
    exit(1);
  });
}
