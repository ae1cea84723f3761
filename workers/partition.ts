// worker_threads entry of one engine partition: its own small pool, its runtime, and the message loop.
import { parentPort, workerData } from 'node:worker_threads';
import type { PartitionReply, PartitionRequest, PartitionSettings } from '../src/engine/messages.js';
import { PartitionRuntime } from '../src/engine/partition/partition-runtime.js';
import { ProblemError } from '../src/contract/problems.js';
import { ZoneCalendar } from '../src/contract/zone-calendar.js';
import { createPool, sqlState } from '../src/platform/database.js';
import { createLogger } from '../src/platform/logger.js';
import { sourceIdFinder } from '../src/domains/customers/index.js';

const settings = workerData as PartitionSettings;
const log = createLogger(settings.logLevel).child({ partition: settings.partition });
// A partition waits for its connection rather than fail a whole batch on a busy machine.
// Generic plans: the engine's few fixed statements are planned once per connection, not at every batch.
const db = createPool(settings.databaseUrl, { max: settings.poolSize, log, connectionTimeoutMs: 30_000, options: '-c plan_cache_mode=force_generic_plan' });
// The customers its redemptions name by sourceId alone: found or created by the batch that decides them.
const customers = sourceIdFinder();
const runtime = new PartitionRuntime({ db, log, cacheSize: settings.cacheSize, cacheTtlMs: settings.cacheTtlMs, maxBatch: settings.maxBatch, batchesInFlight: settings.batchesInFlight, partition: settings.partition, insightsRollup: settings.insightsRollup, calendar: new ZoneCalendar(), customers });
const port = parentPort!;

// Requests come in arrays (the calls of one turn of the web thread); replies given in one turn of this thread go back
// in one message too (a batch's commit answers all its callers at once).
let replies: PartitionReply[] = [];
const flush = () => {
  const sending = replies;
  replies = [];
  port.postMessage(sending);
};
const reply = (answer: PartitionReply) => {
  if (replies.push(answer) === 1) setImmediate(flush);
};

port.on('message', (requests: PartitionRequest[]) => {
  for (const request of requests) {
    runtime.handle(
      request.call,
      (result, timing) => reply(timing ? { id: request.id, result, timing } : { id: request.id, result }),
      (error) => {
        const problem = error instanceof ProblemError ? error.code : undefined;
        const detail = error instanceof Error ? error.message : String(error);
        const state = sqlState(error);
        reply({ id: request.id, error: { ...(problem ? { problem } : {}), detail, ...(state ? { sqlState: state } : {}) } });
      },
    );
  }
});
port.postMessage({ id: 0, result: 'ready' } satisfies PartitionReply);
