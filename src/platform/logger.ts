// The one root pino logger. Secrets and Authorization headers are redacted by path and never serialized.
import { pino, type Logger } from 'pino';

export type { Logger };

export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'authorization',
  '*.authorization',
  'secret',
  '*.secret',
  'key',
  '*.key',
  'apiKey',
  '*.apiKey',
  'password',
  '*.password',
  'secretKey',
  '*.secretKey',
];

/**
 * Logs go to stdout asynchronously (lines written while a write is in flight go out together in the next one), so a
 * request's log line does not block the event loop on the pipe; pino flushes what is left when the process exits.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: undefined,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    },
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
}
