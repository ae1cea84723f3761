// LISTEN on a dedicated connection for a few channels, reconnecting on loss: how one process hears of changes made by
// another (or by the CLI) on the same database. `onConnected` runs after every (re)connect, when notifications sent
// while the connection was down may have been missed.
import pg from 'pg';
import type { Logger } from './logger.js';

export interface Listener {
  /** True while LISTEN is in force. */
  readonly listening: boolean;
  stop(): Promise<void>;
}

export function listenForNotifications(
  connectionString: string,
  log: Logger,
  channels: Record<string, (payload: string) => void>,
  onConnected: () => void = () => undefined,
): Listener {
  let client: pg.Client | undefined;
  let stopped = false;
  let listening = false;
  let timer: NodeJS.Timeout | undefined;
  const names = Object.keys(channels);
  const retry = () => {
    if (!stopped) timer = setTimeout(() => void connect(), 1_000);
  };
  const connect = async () => {
    const c = new pg.Client({ connectionString, application_name: 'promotions-service-listener' });
    c.on('error', (error) => {
      listening = false;
      onConnected();
      log.warn({ err: error.message, channels: names }, 'listener lost its connection; reconnecting');
      void c.end().catch(() => undefined);
      retry();
    });
    c.on('notification', (message) => channels[message.channel]?.(message.payload ?? ''));
    try {
      await c.connect();
      for (const name of names) await c.query(`LISTEN ${pg.escapeIdentifier(name)}`);
      client = c;
      onConnected();
      listening = !stopped;
      if (stopped) await c.end();
    } catch (error) {
      log.warn({ err: (error as Error).message, channels: names }, 'listener could not connect; retrying');
      await c.end().catch(() => undefined);
      retry();
    }
  };
  void connect();
  return {
    get listening() {
      return listening;
    },
    async stop() {
      stopped = true;
      listening = false;
      if (timer) clearTimeout(timer);
      await client?.end().catch(() => undefined);
    },
  };
}
