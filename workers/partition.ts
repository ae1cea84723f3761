// worker_threads entry of one engine partition: its own small pool, its runtime, and the message loop.
import { parentPort, workerData } from 'node:worker_threads';
import type { PartitionReply, PartitionRequest, PartitionSettings } from '../src/engine/messages.js';
import { PartitionRuntime } from '../src/engine/partition/partition-runtime.js';
import { ProblemError } from '../src/contract/problems.js';
import { createPool, sqlState } from '../src/platform/database.js';
import { createLogger } from '../src/platform/logger.js';

const settings = workerData as PartitionSettings;
const log = createLogger(settings.logLevel).child({ partition: settings.partition });
// A partition waits for its connection rather than fail a whole batch on a busy machine.
// Generic plans: the engine's few fixed statements are planned once per connection, not at every batch.
const db = createPool(settings.databaseUrl, { max: settings.poolSize, log, connectionTimeoutMs: 30_000, options: '-c plan_cache_mode=force_generic_plan' });
const runtime = new PartitionRuntime({ db, log, cacheSize: settings.cacheSize, cacheTtlMs: settings.cacheTtlMs, maxBatch: settings.maxBatch, batchesInFlight: settings.batchesInFlight, partition: settings.partition, insightsRollup: settings.insightsRollup });
const port = parentPort!;

port.on('message', (request: PartitionRequest) => {
  runtime.handle(
    request.call,
    (result) => port.postMessage({ id: request.id, result } satisfies PartitionReply),
    (error) => {
      const problem = error instanceof ProblemError ? error.code : undefined;
      const detail = error instanceof Error ? error.message : String(error);
      const state = sqlState(error);
      port.postMessage({ id: request.id, error: { ...(problem ? { problem } : {}), detail, ...(state ? { sqlState: state } : {}) } } satisfies PartitionReply);
    },
  );
});
port.postMessage({ id: 0, result: 'ready' } satisfies PartitionReply);
