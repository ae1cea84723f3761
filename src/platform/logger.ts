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

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: undefined,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    },
    destination,
  );
}
