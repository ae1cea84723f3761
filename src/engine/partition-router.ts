// The web thread's side of the partitions: a stable route (hash of workspace and code, mod SLOTS), the slots this
// process leases served by its worker threads (slot mod threads; request ids matched to replies; a dead thread
// restarted, its callers answered 503, never a hang), and every other slot's calls forwarded to the member that holds it.
import { Worker } from 'node:worker_threads';
import { ProblemError } from '../contract/problems.js';
import type { Logger } from '../platform/logger.js';
import { projectRoot } from '../platform/paths.js';
import { activeTraceCarrier, recordSpan, type TraceCarrier } from '../platform/tracing.js';
import { errorOf, NotOwner, type LinkClient } from './leases/engine-link.js';
import { SLOTS, type PartitionLeases } from './leases/partition-leases.js';
import type { EngineFigures, PartitionFigureSnapshot } from '../contract/engine-port.js';
import type { BatchTiming } from './partition/partition-figures.js';
import { isRefused, PARTITION_MOVED, type CustomerUse, type Fence, type FencedCall, type PartitionCall, type PartitionReply, type PartitionRequest, type PartitionSettings, type SnapshotEntry } from './messages.js';

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
  /** The span of a traced request: its batch's spans are recorded under it when the answer comes. */
  trace?: TraceCarrier | undefined;
}

/** A traced request's batch, decided and committed in the partition thread, as two spans of its trace. */
function recordBatchSpans(parent: TraceCarrier, timing: BatchTiming, partition: number): void {
  const attributes = { 'engine.partition': partition, 'engine.batch.writes': timing.writes, 'engine.commit.attempts': timing.attempts };
  const batch = recordSpan(parent, 'engine.batch', timing.startedAt, timing.committedAt, attributes);
  recordSpan(batch, 'engine.commit', timing.commitStartedAt, timing.committedAt, attributes);
}

class PartitionThread {
  private worker!: Worker;
  private readonly waiting = new Map<number, Waiting>();
  private nextId = 1;
  private outbox: PartitionRequest[] = [];
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
    this.worker.on('message', (message: PartitionReply | PartitionReply[]) => {
      if (Array.isArray(message)) for (const reply of message) this.settle(reply);
    });
    this.worker.on('error', (error) => this.log.error({ err: error, partition: this.settings.partition }, 'partition failed'));
    this.worker.on('exit', (code) => {
      this.ready = false;
      this.outbox = [];
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

  private settle(reply: PartitionReply): void {
    const waiting = this.waiting.get(reply.id);
    if (!waiting) return;
    this.waiting.delete(reply.id);
    if ('result' in reply) {
      if (reply.timing && waiting.trace) recordBatchSpans(waiting.trace, reply.timing, this.settings.partition);
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
  }

  started(): Promise<void> {
    return this.readyPromise;
  }

  /**
   * Calls made in one turn of the event loop travel in one message, sent once the turn's I/O callbacks have run
   * (setImmediate): a message costs a structured clone and a wake-up of the thread, whatever it carries.
   */
  call(call: FencedCall): Promise<unknown> {
    const id = this.nextId++;
    // A forwarded call brings its caller's trace; a local one takes the current span (none while tracing is off).
    const trace = call.trace ?? activeTraceCarrier();
    if (trace) call = { ...call, trace };
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject, trace });
      if (this.outbox.push({ id, call }) === 1) setImmediate(this.flush);
    });
  }

  private readonly flush = (): void => {
    const sending = this.outbox;
    this.outbox = [];
    if (sending.length) this.worker.postMessage(sending);
  };

  async stop(): Promise<void> {
    this.stopping = true;
    await this.worker.terminate();
  }
}

/** Calls that change nothing: asked again of the next owner whatever became of the first attempt. */
const SAFE_TO_REPEAT: ReadonlySet<PartitionCall['type']> = new Set<PartitionCall['type']>(['snapshot', 'hold', 'release', 'forget', 'forgetAll', 'ping', 'figures', 'flush']);
const isRead = (call: PartitionCall) => SAFE_TO_REPEAT.has(call.type) || (call.type === 'validate' && !call.session);
const LINK_TIMEOUT_MS = 15_000;

export class PartitionRouter {
  private readonly threads: PartitionThread[];
  private leases!: PartitionLeases;
  private link!: LinkClient;
  private failoverMs = 0;
  private renewalGraceMs = 0;

  constructor(settings: Omit<PartitionSettings, 'partition'>, count: number, private readonly log: Logger) {
    this.threads = Array.from({ length: count }, (_, partition) => new PartitionThread({ ...settings, partition }, log));
  }

  /** Ownership: which slots this process serves, and the link to the members that hold the others. */
  attach(leases: PartitionLeases, link: LinkClient, leaseMs: number): void {
    this.leases = leases;
    this.link = link;
    // A call waits for a slot's next owner at most this long: the dead owner's lease to expire, a tick to take it.
    this.failoverMs = leaseMs * 2 + 2_000;
    this.renewalGraceMs = leaseMs;
  }

  get count(): number {
    return this.threads.length;
  }

  async started(): Promise<void> {
    await Promise.all(this.threads.map((t) => t.started()));
  }

  /** The slot of a code: the same in every process. */
  route(workspaceId: string, code: string): number {
    return partitionOf(workspaceId, code, SLOTS);
  }

  /** This process's thread for a slot it holds. */
  private threadOf(slot: number): PartitionThread {
    return this.threads[slot % this.threads.length]!;
  }

  /**
   * The snapshots of several codes (each decided for this customer), asking every owning partition at once: one
   * message per thread of this process for the codes of the slots it holds (a qualification's offers hash to many
   * slots, mostly served by the same one or two threads), the others slot by slot, where they are held.
   * `sessions`: the session key of a code, whose own reservation is not counted as taken.
   */
  async snapshots(workspaceId: string, codes: Iterable<string>, customer: CustomerUse, sessions?: ReadonlyMap<string, string>): Promise<Map<string, SnapshotEntry>> {
    const bySlot = new Map<number, string[]>();
    for (const code of new Set(codes)) {
      const slot = this.route(workspaceId, code);
      const some = bySlot.get(slot);
      if (some) some.push(code);
      else bySlot.set(slot, [code]);
    }
    const snapshotCall = (some: string[]): PartitionCall => {
      const keys = sessions && some.flatMap((code) => (sessions.has(code) ? [[code, sessions.get(code)!] as const] : []));
      return { type: 'snapshot', workspaceId, codes: some, customer, ...(keys?.length ? { sessions: Object.fromEntries(keys) } : {}) };
    };
    const bySlots = (slots: readonly number[]) => slots.map((slot) => this.call<SnapshotEntry[]>(slot, snapshotCall(bySlot.get(slot)!)));
    const here = new Map<PartitionThread, number[]>();
    const elsewhere: number[] = [];
    for (const slot of bySlot.keys()) {
      if (this.leases.tokenOf(slot) === undefined) elsewhere.push(slot);
      else {
        const thread = this.threadOf(slot);
        const slots = here.get(thread);
        if (slots) slots.push(slot);
        else here.set(thread, [slot]);
      }
    }
    const asked: Array<Promise<SnapshotEntry[]>> = bySlots(elsewhere);
    for (const slots of here.values()) {
      // Should a slot have moved meanwhile (callOwned declines, or the thread answers that it moved), slot by slot.
      const together = this.callOwned(slots, snapshotCall(slots.flatMap((slot) => bySlot.get(slot)!))) as Promise<SnapshotEntry[]> | undefined;
      asked.push(
        together
          ? together.catch(async (error: unknown) => {
              if (error instanceof ProblemError && error.message === PARTITION_MOVED) return (await Promise.all(bySlots(slots))).flat();
              throw error;
            })
          : Promise.all(bySlots(slots)).then((answers) => answers.flat()),
      );
    }
    const answers = await Promise.all(asked);
    const found = new Map<string, SnapshotEntry>();
    for (const answer of answers) for (const entry of answer) found.set(entry.code, entry);
    return found;
  }

  /**
   * A call about several slots that this process holds and one of its threads serves: sent to that thread with every
   * slot's fence (a write is refused should any lease have moved). Undefined when they are not all that thread's.
   */
  private callOwned(slots: readonly number[], call: PartitionCall): Promise<unknown> | undefined {
    if (slots.length === 0) return undefined;
    const thread = this.threadOf(slots[0]!);
    const fences: Fence[] = [];
    for (const slot of new Set(slots)) {
      const token = this.leases.tokenOf(slot);
      if (token === undefined || this.threadOf(slot) !== thread) return undefined;
      fences.push([slot, token]);
    }
    return thread.call({ ...call, fences });
  }

  /**
   * A call about several slots (a stack's) for the one thread that serves them all: here, or at the one member that
   * holds them all (which checks the same). Undefined, with nothing written, when no one thread serves them all or a
   * slot moved meanwhile: the caller then goes its way across owners. A forwarded write whose fate is unknown throws.
   */
  async callOneThread<T>(slots: readonly number[], call: PartitionCall): Promise<T | undefined> {
    try {
      const here = this.callOwned(slots, call);
      if (here) return (await here) as T;
      const owners = new Set(slots.map((slot) => this.leases.ownerOf(slot)?.url));
      const [url] = owners;
      if (owners.size !== 1 || url === undefined) return undefined;
      return (await this.forward(url, slots[0]!, call)) as T;
    } catch (error) {
      if (error instanceof Moved || (error instanceof ProblemError && error.message === PARTITION_MOVED)) return undefined;
      throw error;
    }
  }

  /**
   * A call for a slot: to this process's thread with the lease's token when it holds the slot, else to its holder.
   * While a slot moves (a holder gone, a lease released) the call waits for the next owner, up to the failover time.
   * A write whose fate is unknown (the link broke after it was sent) is never sent twice: it answers 503.
   */
  async call<T>(slot: number, call: PartitionCall): Promise<T> {
    const deadline = performance.now() + this.failoverMs;
    let renewalDeadline: number | undefined;
    for (;;) {
      const token = this.leases.tokenOf(slot);
      try {
        if (token !== undefined) return (await this.threadOf(slot).call({ ...call, fence: [slot, token] })) as T;
        const owner = this.leases.ownerOf(slot);
        if (owner) return (await this.forward(owner.url, slot, call)) as T;
      } catch (error) {
        const moved = error instanceof Moved || (error instanceof ProblemError && error.message === PARTITION_MOVED);
        if (!moved) throw error;
      }
      if (this.leases.lapsed(slot)) {
        // A renewal under way may only be slow (a database slowed by load): wait for the ticks, at most one lease time,
        // before refusing, rather than answer 503 for a lease that a moment later proves renewed.
        renewalDeadline ??= Math.min(deadline, performance.now() + this.renewalGraceMs);
        const left = renewalDeadline - performance.now();
        if (left > 0 && (await this.leases.nextTick(left))) continue;
        throw new ProblemError('service_unavailable', 'this process cannot renew its partition leases (is the database reachable?); retry', { headers: { 'Retry-After': '1' } });
      }
      if (performance.now() > deadline) {
        throw new ProblemError('service_unavailable', 'the partition of this voucher has no owner that answers; retry', { headers: { 'Retry-After': '1' } });
      }
      await this.leases.refresh();
    }
  }

  private async forward(url: string, slot: number, call: PartitionCall): Promise<unknown> {
    let reply;
    try {
      const trace = activeTraceCarrier();
      const traced: FencedCall = trace ? { ...call, trace } : call;
      reply = await this.link.call(url, slot, traced, LINK_TIMEOUT_MS);
    } catch (error) {
      // Refused before anything was sent, or a call that changes nothing: ask the next owner. Else the fate is unknown.
      if ((error as { code?: string }).code === 'ECONNREFUSED' || isRead(call)) throw new Moved();
      this.log.warn({ err: (error as Error).message, slot }, 'a forwarded write got no answer');
      throw new ProblemError('service_unavailable', 'the process holding this voucher stopped answering; whether the write was made is unknown: retry with the same idempotency key', {
        headers: { 'Retry-After': '1' },
      });
    }
    if ('result' in reply) {
      if (isRefused(reply.result)) {
        const { problem, detail, errors } = reply.result.refused;
        throw new ProblemError(problem, detail, { errors });
      }
      return reply.result;
    }
    if ('notOwner' in reply) throw new Moved();
    const error = errorOf(reply);
    if (error.message === PARTITION_MOVED) throw new Moved();
    throw error;
  }

  /**
   * A call forwarded here by another member: served by the thread, with this process's token, only while it holds
   * the slot. The reply travels as the thread gave it (a refusal naming fields stays a result).
   */
  async serve(slot: number, call: PartitionCall): Promise<unknown> {
    if (call.type === 'stack') {
      const together = this.callOwned(call.vouchers.map((v) => this.route(call.workspaceId, v.code)), call);
      if (!together) throw new NotOwner();
      return together;
    }
    const token = Number.isInteger(slot) && slot >= 0 && slot < SLOTS ? this.leases.tokenOf(slot) : undefined;
    if (token === undefined) throw new NotOwner();
    return this.threadOf(slot).call({ ...call, fence: [slot, token] });
  }

  /** To every thread of this process (other members hear of changes through the engine's notification channel). */
  broadcast(call: PartitionCall): Promise<unknown[]> {
    return Promise.all(this.threads.map((t) => t.call(call)));
  }

  /** A lease gained: the thread serving that slot reads again what it cached (another owner may have changed it). */
  async gained(slots: readonly number[]): Promise<void> {
    const threads = new Set(slots.map((slot) => this.threadOf(slot)));
    await Promise.all([...threads].map((t) => t.call({ type: 'forgetAll' }).catch(() => undefined)));
  }

  /** Every partition answers a ping within the time-out; with the slots this member holds. */
  async check(timeoutMs: number): Promise<{ ok: boolean; detail: string; partitions: unknown[]; leases: ReturnType<PartitionLeases['status']> }> {
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
    const leases = this.leases.status();
    const held = `${leases.owned.length} of ${leases.slots} slots held, ${leases.members} member(s)`;
    return down.length
      ? { ok: false, detail: `partitions ${down.join(', ')} not answering; ${held}`, partitions, leases }
      : { ok: true, detail: `${answers.length} partitions; ${held}`, partitions, leases };
  }

  /** Each thread's figures for /metrics (undefined for one not answering within the time-out), and the slots held. */
  async figures(timeoutMs: number): Promise<EngineFigures> {
    const partitions = await Promise.all(
      this.threads.map((t) =>
        Promise.race([t.call({ type: 'figures' }) as Promise<PartitionFigureSnapshot>, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), timeoutMs).unref())]).catch(() => undefined),
      ),
    );
    const leases = this.leases.status();
    return { partitions, slotsHeld: leases.owned.length, members: leases.members };
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

/** The slot moved (or has no owner yet): ask again. */
class Moved extends Error {}
