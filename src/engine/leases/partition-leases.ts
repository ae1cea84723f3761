// This process's share of the partition slots. Every tick (a third of the lease time) it says it is alive, renews what
// it holds, and moves towards its share: floor(SLOTS / members), one more for the first (SLOTS mod members) members in
// id order, so the shares add up to SLOTS; it releases any excess at once (the next owner needs no expiry) and takes
// free or expired slots up to its share. A member killed with -9 stops renewing: its
// slots are taken by the others once their leases expire, with new tokens, so none of its writes can land after.
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import type { Pool } from '../../platform/database.js';
import type { Logger } from '../../platform/logger.js';
import { acquireLeases, heartbeat, leaveMembers, loadLeases, releaseEveryLease, releaseLeases, renewLeases, type LeaseRow, type Member } from './lease.sql.js';

/** Logical partitions: fixed, since every process must hash a code to the same slot (schema/0034 holds 64 rows). */
export const SLOTS = 64;

export interface LeaseOptions {
  db: Pool;
  log: Logger;
  /** A lease lasts this long unless renewed (default 5 s); renewed every third of it. */
  leaseMs: number;
  /** Where this member answers forwarded calls. */
  url: string;
  /** Told of every change: slots gained (with their tokens) and lost. */
  onChange: (gained: ReadonlyArray<readonly [number, number]>, lost: readonly number[]) => void;
}

export class PartitionLeases {
  readonly memberId = randomUUID();
  /** slot → token, of the leases this process holds. */
  private readonly owned = new Map<number, number>();
  /** Every slot's owner as last read (refreshed each tick, and at once when a call finds it out of date). */
  private map: LeaseRow[] = [];
  private mapReadAt = 0;
  private refreshing: Promise<void> | undefined;
  private renewedAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> = Promise.resolve();
  /** Told when the tick in flight (or, between ticks, the next one) ends, renewed or not. */
  private tickWaiters: Array<() => void> = [];
  private stopped = false;
  members = 1;
  private share = SLOTS;

  constructor(private readonly options: LeaseOptions) {}

  private get member(): Member {
    return { memberId: this.memberId, url: this.options.url, pid: process.pid, host: os.hostname() };
  }

  /**
   * Joins, and waits until this process holds its share or every slot has an owner. Returns early when `signal` aborts
   * or the leases are stopped (a stop during the start): the caller then stops them, which gives up what was taken.
   */
  async start(signal?: AbortSignal): Promise<void> {
    const tick = () => (this.ticking = this.tick());
    await tick();
    for (let i = 0; i < 20 && this.map.some((l) => !l.live) && this.owned.size < this.share; i++) {
      if (this.stopped || signal?.aborted) return;
      await new Promise((r) => setTimeout(r, this.options.leaseMs / 10));
      if (this.stopped || signal?.aborted) return;
      await tick();
    }
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.ticking = this.tick().finally(() => this.schedule());
    }, this.options.leaseMs / 3);
    this.timer.unref();
  }

  /** The token of this process's lease on `slot`, if it holds one that cannot have expired yet. */
  tokenOf(slot: number): number | undefined {
    if (performance.now() - this.renewedAt > this.options.leaseMs * 0.9) return undefined;
    return this.owned.get(slot);
  }

  /** The owner of a slot this process does not hold: its member id and url, or undefined while none holds it. */
  ownerOf(slot: number): { owner: string; url: string } | undefined {
    const lease = this.map[slot];
    if (!lease || !lease.live || !lease.owner || !lease.url || lease.owner === this.memberId) return undefined;
    return { owner: lease.owner, url: lease.url };
  }

  /**
   * This process holds the slot by the last reading but could not renew in time (the database slow or unreachable):
   * callers wait for the ticks at most one lease time, then are answered 503 rather than wait for an owner that is this
   * very process.
   */
  lapsed(slot: number): boolean {
    return this.owned.has(slot) && this.tokenOf(slot) === undefined;
  }

  /**
   * Resolves true once the tick in flight, or the next one, has ended (renewed or failed), or after `withinMs`; false at
   * once when stopped (no tick will come). A renewal that was slow (a database slowed by load) thus lets a call go on
   * instead of refusing it.
   */
  nextTick(withinMs: number): Promise<boolean> {
    if (this.stopped) return Promise.resolve(false);
    return new Promise((resolve) => {
      const timer = setTimeout(done, withinMs);
      function done() {
        clearTimeout(timer);
        resolve(true);
      }
      this.tickWaiters.push(done);
    });
  }

  /** Reads every slot's owner again (at most once per 50 ms however many callers ask). */
  refresh(): Promise<void> {
    if (this.refreshing) return this.refreshing;
    if (performance.now() - this.mapReadAt < 50) return new Promise((r) => setTimeout(r, 50));
    this.refreshing = loadLeases(this.options.db)
      .then((rows) => {
        this.map = rows;
        this.mapReadAt = performance.now();
      })
      .catch((error: unknown) => this.options.log.warn({ err: (error as Error).message }, 'reading partition leases failed'))
      .finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  /** For /ready: this member, the slots it holds, and how many members are alive. */
  status() {
    return { member: this.memberId, url: this.options.url, members: this.members, slots: SLOTS, owned: [...this.owned.keys()].sort((a, b) => a - b) };
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    const { db, log, leaseMs } = this.options;
    const started = performance.now();
    try {
      const alive = (await heartbeat(db, this.member, leaseMs, leaseMs * 10)).sort();
      this.members = alive.length;
      this.share = Math.floor(SLOTS / alive.length) + (alive.indexOf(this.memberId) < SLOTS % alive.length ? 1 : 0);
      const renewed = await renewLeases(db, this.memberId, leaseMs);
      const still = new Map(renewed.map((r) => [r.slot, r.token]));
      const lost = [...this.owned.keys()].filter((slot) => still.get(slot) !== this.owned.get(slot));
      for (const slot of lost) this.owned.delete(slot);
      // A lease the database names this member for that it does not know of (an acquisition that committed but whose
      // answer was lost with its connection) is renewed with the others: it is served too, or nobody would.
      const found: Array<[number, number]> = renewed.filter((r) => !this.owned.has(r.slot)).map((r) => [r.slot, r.token]);
      for (const [slot, token] of found) this.owned.set(slot, token);
      if (found.length) log.warn({ found: found.map(([slot]) => slot) }, 'partition leases held without knowing it, now served');
      this.renewedAt = started;
      const share = this.share;
      let gained: Array<[number, number]> = [...found];
      if (this.owned.size > share) {
        // Highest slots first, so that members agree which ones move.
        const excess = [...this.owned.keys()].sort((a, b) => b - a).slice(0, this.owned.size - share);
        for (const slot of excess) {
          this.owned.delete(slot);
          if (this.map[slot]) this.map[slot] = { ...this.map[slot], owner: null, url: null, live: false };
        }
        await releaseLeases(db, this.memberId, excess);
        lost.push(...excess);
        log.info({ released: excess.length, members: this.members }, 'partition leases released to rebalance');
      } else if (this.owned.size < share) {
        const taken: Array<[number, number]> = (await acquireLeases(db, this.member, share - this.owned.size, leaseMs)).map((r) => [r.slot, r.token]);
        for (const [slot, token] of taken) this.owned.set(slot, token);
        if (taken.length) log.info({ gained: taken.map(([s]) => s), members: this.members }, 'partition leases taken');
        gained.push(...taken);
      }
      gained = gained.filter(([slot]) => this.owned.has(slot));
      if (lost.length) log.warn({ lost }, 'partition leases lost or released');
      if (gained.length || lost.length) this.options.onChange(gained, lost);
      this.map = await loadLeases(db);
      this.mapReadAt = performance.now();
    } catch (error) {
      log.warn({ err: (error as Error).message }, 'partition lease tick failed');
    } finally {
      const waiters = this.tickWaiters;
      this.tickWaiters = [];
      for (const done of waiters) done();
    }
  }

  /**
   * Gives every lease up and leaves, so that the others take the slots at their next tick: every lease the database
   * names this member for, after the tick in flight (one of the start's included) has ended.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    for (const done of this.tickWaiters.splice(0)) done();
    await this.ticking.catch(() => undefined);
    this.owned.clear();
    const { db, log } = this.options;
    await releaseEveryLease(db, this.memberId).catch((error: unknown) =>
      log.warn({ err: (error as Error).message }, 'giving the partition leases up failed; the others take them when they expire'),
    );
    await leaveMembers(db, this.memberId).catch(() => undefined);
  }
}
