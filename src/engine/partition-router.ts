// The web thread's side of the partitions: one worker thread each, a stable route (hash of workspace and code, mod P),
// request ids matched to replies, and a dead partition restarted (its callers get 503, never a hang).
import { Worker } from 'node:worker_threads';
import { ProblemError } from '../contract/problems.js';
import type { Logger } from '../platform/logger.js';
import { projectRoot } from '../platform/paths.js';
import { isRefused, type CustomerUse, type PartitionCall, type PartitionReply, type PartitionSettings, type SnapshotEntry } from './messages.js';

const PARTITION_ENTRY = new URL(`file://${projectRoot}/dist/workers/partition.js`);

/** FNV-1a over workspace id and code: cheap, stable across processes and restarts. */
export function partitionOf(workspaceId: string, code: string, partitions: number): number {
  let hash = 0x811c9dc5;
  const key = `${workspaceId}\u0000${code}`;
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % partitions;
}

interface Waiting {
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

class PartitionThread {
  private worker!: Worker;
  private readonly waiting = new Map<number, Waiting>();
  private nextId = 1;
  ready = false;
  private stopping = false;
  private readyPromise!: Promise<void>;

  constructor(
    private readonly settings: PartitionSettings,
    private readonly log: Logger,
  ) {
    this.spawn();
  }

  private spawn(): void {
    this.ready = false;
    this.worker = new Worker(PARTITION_ENTRY, { workerData: this.settings });
    this.readyPromise = new Promise((resolve, reject) => {
      const onReady = (reply: PartitionReply) => {
        if (reply.id === 0) {
          this.ready = true;
          resolve();
        }
      };
      this.worker.once('message', onReady);
      this.worker.once('error', reject);
    });
    this.readyPromise.catch(() => undefined);
    this.worker.on('message', (reply: PartitionReply) => {
      if (reply.id === 0) return;
      const waiting = this.waiting.get(reply.id);
      if (!waiting) return;
      this.waiting.delete(reply.id);
      if ('result' in reply) {
        if (isRefused(reply.result)) {
          const { problem, detail, errors } = reply.result.refused;
          waiting.reject(new ProblemError(problem, detail, { errors }));
        } else waiting.resolve(reply.result);
      }
      else if (reply.error.problem) waiting.reject(new ProblemError(reply.error.problem, reply.error.detail));
      else {
        // Keeps the SQLSTATE, so an outage still answers 503 and a refused value 400.
        const error = new Error(`partition ${this.settings.partition}: ${reply.error.detail}`);
        if (reply.error.sqlState) Object.assign(error, { code: reply.error.sqlState });
        waiting.reject(error);
      }
    });
    this.worker.on('error', (error) => this.log.error({ err: error, partition: this.settings.partition }, 'partition failed'));
    this.worker.on('exit', (code) => {
      this.ready = false;
      for (const waiting of this.waiting.values()) {
        waiting.reject(new ProblemError('service_unavailable', 'a redemption partition restarted; retry', { headers: { 'Retry-After': '1' } }));
      }
      this.waiting.clear();
      if (!this.stopping) {
        this.log.error({ partition: this.settings.partition, code }, 'partition exited; restarting it');
        setTimeout(() => this.spawn(), 100).unref();
      }
    });
  }

  started(): Promise<void> {
    return this.readyPromise;
  }

  call(call: PartitionCall): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage({ id, call });
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.worker.terminate();
  }
}

export class PartitionRouter {
  private readonly threads: PartitionThread[];

  constructor(settings: Omit<PartitionSettings, 'partition'>, count: number, log: Logger) {
    this.threads = Array.from({ length: count }, (_, partition) => new PartitionThread({ ...settings, partition }, log));
  }

  get count(): number {
    return this.threads.length;
  }

  async started(): Promise<void> {
    await Promise.all(this.threads.map((t) => t.started()));
  }

  route(workspaceId: string, code: string): number {
    return partitionOf(workspaceId, code, this.threads.length);
  }

  /**
   * The snapshots of several codes (each decided for this customer), asking every owning partition at once.
   * `sessions`: the session key of a code, whose own reservation is not counted as taken.
   */
  async snapshots(workspaceId: string, codes: Iterable<string>, customer: CustomerUse, sessions?: ReadonlyMap<string, string>): Promise<Map<string, SnapshotEntry>> {
    const byPartition = new Map<number, string[]>();
    for (const code of new Set(codes)) {
      const p = this.route(workspaceId, code);
      byPartition.set(p, [...(byPartition.get(p) ?? []), code]);
    }
    const answers = await Promise.all(
      [...byPartition].map(([p, some]) => {
        const keys = sessions && some.flatMap((code) => (sessions.has(code) ? [[code, sessions.get(code)!] as const] : []));
        return this.call<SnapshotEntry[]>(p, { type: 'snapshot', workspaceId, codes: some, customer, ...(keys?.length ? { sessions: Object.fromEntries(keys) } : {}) });
      }),
    );
    return new Map(answers.flat().map((entry) => [entry.code, entry]));
  }

  call<T>(partition: number, call: PartitionCall): Promise<T> {
    return this.threads[partition]!.call(call) as Promise<T>;
  }

  broadcast(call: PartitionCall): Promise<unknown[]> {
    return Promise.all(this.threads.map((t) => t.call(call)));
  }

  /** Every partition answers a ping within the time-out. */
  async check(timeoutMs: number): Promise<{ ok: boolean; detail: string; partitions: unknown[] }> {
    const answers = await Promise.all(
      this.threads.map((t, i) =>
        Promise.race([
          t.call({ type: 'ping' }),
          new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), timeoutMs).unref()),
        ])
          .catch(() => undefined)
          .then((stats) => ({ i, stats })),
      ),
    );
    const down = answers.filter((a) => !a.stats).map((a) => a.i);
    const partitions = answers.map((a) => ({ partition: a.i, ...(a.stats ? (a.stats as object) : { status: 'not answering' }) }));
    return down.length
      ? { ok: false, detail: `partitions ${down.join(', ')} not answering`, partitions }
      : { ok: true, detail: `${answers.length} partitions`, partitions };
  }

  /** Each partition writes what it counted in memory (refusals), bounded in time, then all are stopped. */
  async stop(): Promise<void> {
    await Promise.all(
      this.threads.map((t) =>
        Promise.race([t.call({ type: 'flush' }), new Promise((resolve) => setTimeout(resolve, 2_000).unref())]).catch(() => undefined),
      ),
    );
    await Promise.all(this.threads.map((t) => t.stop()));
  }
}
