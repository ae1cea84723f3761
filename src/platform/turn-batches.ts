// Reads and writes asked for by many requests in one turn of the event loop (under load, the requests read from many
// connections at once), sent to PostgreSQL together when the turn ends instead of one round trip each; with a limit
// of batches in flight, the calls made while the limit is reached wait and go together in the next batch (group
// commit), so that the batches grow with the load instead of their number.
import DataLoader from 'dataloader';

/** At most this many keys in one batch; more asked in a turn make several. */
const MAX_BATCH = 200;

export interface TurnBatchOptions {
  /**
   * Batches sent at once; a batch ready while this many are out waits for one of them to end, gathering the calls made
   * meanwhile. Unlimited when absent: every turn's batch is sent when the turn ends.
   */
  inFlight?: number;
  /**
   * With `inFlight`, the longest a ready batch waits for one to end (ms; default 10): a batch that hangs (a lock held
   * elsewhere, a connection lost) holds the others back no longer than this, and then they go as they would without
   * the limit.
   */
  maxWaitMs?: number;
}

/**
 * A function whose calls of one event-loop turn become one call of `batch` (answers in key order) when the turn ends.
 * Should `batch` fail, each key is tried with `alone`, so that a key PostgreSQL refuses fails only its own caller.
 * Nothing is cached between turns. Make one per service (its pool), at composition.
 */
export function turnBatched<K, V>(batch: (keys: readonly K[]) => Promise<V[]>, alone: (key: K) => Promise<V>, options: TurnBatchOptions = {}): (key: K) => Promise<V> {
  const asError = (error: unknown) => (error instanceof Error ? error : new Error(String(error)));
  const limit = options.inFlight ?? Infinity;
  const maxWaitMs = options.maxWaitMs ?? 10;
  let sent = 0;
  // Batches ready to go (DataLoader's dispatch of each), oldest first: while one waits here, calls join it.
  const ready: Array<() => void> = [];
  const next = () => {
    while (sent < limit && ready.length > 0) ready.shift()!();
  };
  const enqueue = (run: () => void) => {
    let timer: NodeJS.Timeout | undefined;
    let gone = false;
    const go = () => {
      if (gone) return;
      gone = true;
      clearTimeout(timer);
      run();
    };
    ready.push(go);
    next();
    if (!gone) {
      timer = setTimeout(() => {
        ready.splice(ready.indexOf(go), 1);
        go();
      }, maxWaitMs);
    }
  };
  const send = async (keys: readonly K[]): Promise<Array<V | Error>> => {
    sent += 1;
    try {
      return await batch(keys).catch(() => Promise.all(keys.map((k) => alone(k).catch(asError))));
    } finally {
      sent -= 1;
      next();
    }
  };
  const loader = new DataLoader<K, V>(send, {
    cache: false,
    maxBatchSize: MAX_BATCH,
    batchScheduleFn: (run) => setImmediate(() => enqueue(run)),
  });
  return (key) => loader.load(key);
}
