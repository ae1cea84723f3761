// Validation sessions as a partition holds them: each cached voucher's live reservations (one use, and gift credits,
// per checkout key), and the changes a batch decides, which reach the cache only after its COMMIT.
import type { Reserved } from '../../checkout/redemption.rules.js';

export interface Reservation {
  /** Gift credits reserved (0 for a discount voucher). */
  amount: number;
  /** Epoch ms; from then on the reservation holds nothing. */
  expiresAt: number;
}

const NOTHING: Reserved = Object.freeze({ uses: 0, balance: 0 });

/**
 * The live reservations of one voucher, with their running totals, so a decision on a hot code costs no walk over its
 * sessions. Expired ones are dropped when the earliest expiry has passed.
 */
export class SessionBook {
  private readonly live = new Map<string, Reservation>();
  private uses = 0;
  private balance = 0;
  private nextExpiry = Infinity;

  constructor(loaded: Iterable<readonly [string, Reservation]> = []) {
    for (const [key, reservation] of loaded) this.set(key, reservation);
  }

  get size(): number {
    return this.live.size;
  }

  get(key: string, now: number): Reservation | undefined {
    const found = this.live.get(key);
    return found && found.expiresAt > now ? found : undefined;
  }

  set(key: string, reservation: Reservation): void {
    this.delete(key);
    this.live.set(key, reservation);
    this.uses += 1;
    this.balance += reservation.amount;
    this.nextExpiry = Math.min(this.nextExpiry, reservation.expiresAt);
  }

  delete(key: string): void {
    const found = this.live.get(key);
    if (!found) return;
    this.live.delete(key);
    this.uses -= 1;
    this.balance -= found.amount;
  }

  /** What live reservations hold, but the one of `own` (the caller's own session). */
  reserved(now: number, own?: string): Reserved {
    if (now >= this.nextExpiry) this.prune(now);
    if (this.uses === 0) return NOTHING;
    const mine = own === undefined ? undefined : this.live.get(own);
    return mine ? { uses: this.uses - 1, balance: this.balance - mine.amount } : { uses: this.uses, balance: this.balance };
  }

  private prune(now: number): void {
    this.nextExpiry = Infinity;
    for (const [key, reservation] of this.live) {
      if (reservation.expiresAt <= now) this.delete(key);
      else this.nextExpiry = Math.min(this.nextExpiry, reservation.expiresAt);
    }
  }
}

/** What a batch decides for the sessions of its vouchers, per voucher: a key's new reservation, or null (it ends). */
export class SessionChanges<V extends { sessions: SessionBook }> {
  private readonly byVoucher = new Map<V, Map<string, Reservation | null>>();

  /** The key's live reservation as the batch sees it so far. */
  get(voucher: V, key: string, now: number): Reservation | undefined {
    const changed = this.byVoucher.get(voucher)?.get(key);
    if (changed !== undefined) return changed && changed.expiresAt > now ? changed : undefined;
    return voucher.sessions.get(key, now);
  }

  set(voucher: V, key: string, reservation: Reservation | null): void {
    let changes = this.byVoucher.get(voucher);
    if (!changes) this.byVoucher.set(voucher, (changes = new Map()));
    changes.set(key, reservation);
  }

  /** What the other sessions' live reservations hold, with the batch's changes so far. */
  reserved(voucher: V, now: number, own?: string): Reserved {
    const committed = voucher.sessions.reserved(now, own);
    const changes = this.byVoucher.get(voucher);
    if (!changes) return committed;
    let { uses, balance } = committed;
    for (const [key, reservation] of changes) {
      if (key === own) continue;
      const before = voucher.sessions.get(key, now);
      if (before) {
        uses -= 1;
        balance -= before.amount;
      }
      if (reservation && reservation.expiresAt > now) {
        uses += 1;
        balance += reservation.amount;
      }
    }
    return { uses, balance };
  }

  /**
   * What the batch reserves beyond the committed reservations (new keys, larger amounts), counted as taken while it
   * commits; what it ends still counts until then, so the vouchers' other decisions stay on the safe side.
   */
  added(now: number): Map<V, Reserved> {
    const added = new Map<V, Reserved>();
    for (const [voucher, changes] of this.byVoucher) {
      let uses = 0;
      let balance = 0;
      for (const [key, reservation] of changes) {
        if (!reservation) continue;
        const before = voucher.sessions.get(key, now);
        if (!before) uses += 1;
        balance += Math.max(0, reservation.amount - (before?.amount ?? 0));
      }
      if (uses || balance) added.set(voucher, { uses, balance });
    }
    return added;
  }

  /** After COMMIT: the cache holds what was written. */
  apply(): void {
    for (const [voucher, changes] of this.byVoucher) {
      for (const [key, reservation] of changes) {
        if (reservation) voucher.sessions.set(key, reservation);
        else voucher.sessions.delete(key);
      }
    }
  }
}
