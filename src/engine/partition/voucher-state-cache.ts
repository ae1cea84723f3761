// The hot state a partition keeps of its vouchers: the committed snapshot, per-customer use counts, live validation
// sessions, and what stack holds and the batch being committed take from it. Bounded (lru-cache); an entry older than the TTL, or marked stale,
// is reloaded from PostgreSQL before its next decision.
import { LRUCache } from 'lru-cache';
import type { RefereeFacts, Reserved, UseContext, VoucherSnapshot } from '../../checkout/redemption.rules.js';
import { SessionBook, type Reservation } from './session-reservations.js';

export interface Hold {
  voucherKey: string;
  /** The entry the hold was taken from, and its `commits` then. */
  entry: HotVoucher;
  commits: number;
  uses: number;
  balance: number;
  customerId: string | null;
  /** The stack entry's validation session (its commit consumes the reservation). */
  session: boolean;
}

export interface HotVoucher {
  /** null: no voucher with this code (a negative entry). */
  snapshot: VoucherSnapshot | null;
  loadedAt: number;
  stale: boolean;
  /** Committed uses per customer id, loaded on demand. */
  customerUses: Map<string, number>;
  /** A referral code's referees by customer id, read for the batch deciding on them. */
  referees: Map<string, RefereeFacts>;
  /** Live reservations of validation sessions, as committed. */
  sessions: SessionBook;
  heldUses: number;
  heldBalance: number;
  heldByCustomer: Map<string, number>;
  /** Taken by the batch being committed right now. */
  pendingUses: number;
  pendingBalance: number;
  pendingByCustomer: Map<string, number>;
  /** Absolute counters stored since the entry was made (a load, a committed batch): a stack's hold compares it. */
  commits: number;
}

export const voucherKey = (workspaceId: string, code: string) => `${workspaceId}\u0000${code}`;

/** A request names a voucher code, or a promotion tier (a voucher row of kind TIER): the other kind is not found. */
export function ofKind(entry: HotVoucher | undefined, kind: 'CODE' | 'TIER' | undefined): VoucherSnapshot | undefined {
  const v = entry?.snapshot ?? undefined;
  return v && v.kind === (kind ?? 'CODE') ? v : undefined;
}

/** The use context of a request whose voucher is unknown: nothing used, held or reserved. */
export function noUse(customer: { id: string | null; given: boolean }): UseContext {
  return { customerId: customer.id, customerGiven: customer.given, customerUses: 0, heldUses: 0, heldBalance: 0 };
}

export function emptyEntry(snapshot: VoucherSnapshot | null, now: number, sessions: SessionBook = new SessionBook()): HotVoucher {
  return {
    snapshot,
    loadedAt: now,
    stale: false,
    customerUses: new Map(),
    referees: new Map(),
    sessions,
    heldUses: 0,
    heldBalance: 0,
    heldByCustomer: new Map(),
    pendingUses: 0,
    pendingBalance: 0,
    pendingByCustomer: new Map(),
    commits: 0,
  };
}

/**
 * Whether decisions may reuse a voucher's loaded state. Not a loyalty card (its points change outside the engine too:
 * earning, rewards, transfers, expiry) nor a referral code (its referees' orders and conversions do): those are read
 * again for every batch that decides on them.
 */
function cacheable(v: VoucherSnapshot | null | undefined): boolean {
  return !v || (v.type !== 'LOYALTY_CARD' && v.referral === null);
}

export class VoucherStateCache {
  private readonly entries: LRUCache<string, HotVoucher>;

  constructor(
    max: number,
    private readonly ttlMs: number,
  ) {
    this.entries = new LRUCache({ max });
  }

  get size(): number {
    return this.entries.size;
  }

  peek(key: string): HotVoucher | undefined {
    return this.entries.peek(key);
  }

  /** The entry when it can be decided on without a load (never one of a voucher that is not cacheable). */
  fresh(key: string, now: number): HotVoucher | undefined {
    const entry = this.entries.get(key);
    if (!entry || entry.stale || now - entry.loadedAt > this.ttlMs || !cacheable(entry.snapshot)) return undefined;
    return entry;
  }

  /** Stores a freshly loaded snapshot and its sessions, keeping what holds and a running batch take from the voucher. */
  store(key: string, snapshot: VoucherSnapshot | null, now: number, sessions: Iterable<readonly [string, Reservation]> = []): HotVoucher {
    const previous = this.entries.peek(key);
    if (previous && previous.snapshot?.id === snapshot?.id) {
      previous.snapshot = snapshot;
      previous.loadedAt = now;
      previous.stale = false;
      previous.customerUses.clear();
      previous.referees.clear();
      previous.sessions = new SessionBook(sessions);
      previous.commits += 1;
      return previous;
    }
    const entry = emptyEntry(snapshot, now, new SessionBook(sessions));
    this.entries.set(key, entry);
    return entry;
  }

  markStale(key: string): void {
    const entry = this.entries.peek(key);
    if (entry) entry.stale = true;
  }

  markCampaignStale(workspaceId: string, campaignId: string): void {
    for (const entry of this.entries.values()) {
      if (entry.snapshot?.workspaceId === workspaceId && entry.snapshot.campaignId === campaignId) entry.stale = true;
    }
  }

  /** A rule or a workspace setting changed: every voucher of the workspace is read again before its next decision. */
  markWorkspaceStale(workspaceId: string): void {
    for (const entry of this.entries.values()) {
      if (entry.snapshot?.workspaceId === workspaceId) entry.stale = true;
    }
  }

  /** A lease gained: every voucher is read again before its next decision (another owner may have changed it). */
  markAllStale(): void {
    for (const entry of this.entries.values()) entry.stale = true;
  }

  /** A voucher created or generated: forget every "no such voucher" entry of the workspace. */
  dropMissing(workspaceId: string): void {
    const prefix = voucherKey(workspaceId, '');
    const missing = [...this.entries.entries()].filter(([key, entry]) => entry.snapshot === null && key.startsWith(prefix));
    for (const [key] of missing) this.entries.delete(key);
  }
}

/**
 * What a decision about `entry` must count as taken: holds, the batch in commit, earlier items of this batch, and the
 * live reservations of other sessions (`reserved`).
 */
export function useContext(
  entry: HotVoucher,
  customerId: string | null,
  customerGiven: boolean,
  extra: { uses: number; balance: number; byCustomer: number } | undefined,
  reserved: Reserved,
): UseContext {
  const committedByCustomer = customerId ? (entry.customerUses.get(customerId) ?? 0) : 0;
  const heldByCustomer = customerId ? (entry.heldByCustomer.get(customerId) ?? 0) + (entry.pendingByCustomer.get(customerId) ?? 0) : 0;
  return {
    customerId,
    customerGiven,
    customerUses: committedByCustomer + heldByCustomer + (extra?.byCustomer ?? 0),
    ...(customerId && entry.referees.has(customerId) ? { referee: entry.referees.get(customerId) } : {}),
    heldUses: entry.heldUses + entry.pendingUses + (extra?.uses ?? 0),
    heldBalance: entry.heldBalance + entry.pendingBalance + (extra?.balance ?? 0),
    ...(reserved.uses ? { reserved } : {}),
  };
}
