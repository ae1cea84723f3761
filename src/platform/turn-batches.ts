// Reads and writes asked for by many requests in one turn of the event loop (under load, the requests read from many
// connections at once), sent to PostgreSQL together when the turn ends instead of one round trip each.
import DataLoader from 'dataloader';

/** At most this many keys in one batch; more asked in a turn make several. */
const MAX_BATCH = 200;

/**
 * A function whose calls of one event-loop turn become one call of `batch` (answers in key order) when the turn ends.
 * Should `batch` fail, each key is tried with `alone`, so that a key PostgreSQL refuses fails only its own caller.
 * Nothing is cached between turns. Make one per service (its pool), at composition.
 */
export function turnBatched<K, V>(batch: (keys: readonly K[]) => Promise<V[]>, alone: (key: K) => Promise<V>): (key: K) => Promise<V> {
  const asError = (error: unknown) => (error instanceof Error ? error : new Error(String(error)));
  const loader = new DataLoader<K, V>((keys) => batch(keys).catch(() => Promise.all(keys.map((k) => alone(k).catch(asError)))), {
    cache: false,
    maxBatchSize: MAX_BATCH,
    batchScheduleFn: (run) => setImmediate(run),
  });
  return (key) => loader.load(key);
}
