// Reads and writes asked for by many requests in one turn of the event loop (under load, the requests read from many
// connections at once), sent to PostgreSQL together when the turn ends instead of one round trip each.
import DataLoader from 'dataloader';
import type { Pool } from './database.js';

/** At most this many keys in one batch; more asked in a turn make several. */
const MAX_BATCH = 200;

/**
 * A function of (pool, key) whose calls of one event-loop turn on one pool become one call of `batch` (answers in key
 * order) when the turn ends. Should `batch` fail, each key is tried with `alone`, so that a key PostgreSQL refuses
 * fails only its own caller. Nothing is cached between turns.
 */
export function turnBatched<K, V>(batch: (db: Pool, keys: readonly K[]) => Promise<V[]>, alone: (db: Pool, key: K) => Promise<V>): (db: Pool, key: K) => Promise<V> {
  const loaders = new WeakMap<Pool, DataLoader<K, V>>();
  const asError = (error: unknown) => (error instanceof Error ? error : new Error(String(error)));
  return (db, key) => {
    let loader = loaders.get(db);
    if (!loader) {
      loader = new DataLoader<K, V>((keys) => batch(db, keys).catch(() => Promise.all(keys.map((k) => alone(db, k).catch(asError)))), {
        cache: false,
        maxBatchSize: MAX_BATCH,
        batchScheduleFn: (run) => setImmediate(run),
      });
      loaders.set(db, loader);
    }
    return loader.load(key);
  };
}
