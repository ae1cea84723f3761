// A batch's plan (write-plan.ts) written in one statement (batch-commit.sql.ts): idempotency keys, the guarded counter
// updates and validation sessions, then the rows (redemptions, rollbacks, ledger, points debits, outbox events); points
// given back, referral conversions and audit entries follow in the same transaction. Any guard that does not hold undoes
// everything and says which part was stale, so the partition reloads it and decides again.
import { withTransaction, type Pool, type Sql } from '../../platform/database.js';
import { MAX_AMOUNT } from '../../contract/checkout.schemas.js';
import { recordAuditedWrites } from './audited-writes.js';
import { CommitStatements, type BatchResult } from './batch-commit.sql.js';
import { settleBalances, type BatchWrites, type VoucherAfter } from './batch-writes.js';
import { findStoredReplies } from '../../platform/idempotency-keys.sql.js';
import type { UsageKey } from './hot-path.sql.js';
import { refundPoints } from './points-moves.sql.js';
import { insertConversions, revertConversions } from './referral-conversions.sql.js';
import { mergePlans, type WritePlan } from './write-plan.js';

export type CommitResult =
  | { ok: true; vouchers: VoucherAfter[]; usage: Array<UsageKey & { uses: number }> }
  | { ok: false; fenced: boolean; takenKeys: string[]; staleVouchers: string[]; staleUsage: UsageKey[]; racedRollbacks: string[]; staleBudgets: string[] };

const failed = (part: Partial<Omit<Extract<CommitResult, { ok: false }>, 'ok'>>): CommitResult => ({
  ok: false,
  fenced: false,
  takenKeys: [],
  staleVouchers: [],
  staleUsage: [],
  racedRollbacks: [],
  staleBudgets: [],
  ...part,
});

/**
 * Commits plans, each in one statement (its own transaction), with the batch statements it built so far. A failed guard
 * names what was stale, to reload. A plan with audited writes, points given back or referral conversions adds them in
 * that transaction; a plan of redemptions (paid with points too) stays one statement. One per writer: a partition,
 * the stack committer.
 */
export class PlanWriter {
  private readonly statements = new CommitStatements();

  constructor(
    private readonly db: Pool,
    private readonly rollup: RollupWriter,
  ) {}

  /**
   * `locked`: the transaction of `underLocks`, which the plan is written in (its failure undoes the plan's writes only,
   * and the locks stay until the caller's work ends).
   */
  async commit(plan: WritePlan, locked?: Sql): Promise<CommitResult> {
    const writes = batchWritesOf(plan, this.rollup);
    const inTransaction = plan.audited.length > 0 || plan.pointsRefunds.length > 0 || plan.conversions.length > 0 || plan.revertedConversions.length > 0;
    const result = locked
      ? await this.commitInSavepoint(locked, plan, writes)
      : inTransaction
        ? await this.commitInTransaction(plan, writes)
        : await this.statements.commit(this.db, writes);
    if (!result.ok) return this.failure(plan, writes, result.failed);
    settle(plan, result.vouchers);
    return { ok: true, vouchers: result.vouchers, usage: result.usage };
  }

  /**
   * Runs `work` in one transaction that first locks the rows of the vouchers `ids` (in id order, as every writer of
   * vouchers does): what `work` reads of them then stays true until it commits, so a plan decided on those reads and
   * written with `commit(plan, tx)` cannot find them changed. For a batch that kept finding its vouchers changed by
   * writers outside the engine (a loyalty card's points adjusted, an order returned): optimism lost, it waits its turn.
   */
  underLocks<T>(ids: readonly string[], work: (tx: Sql) => Promise<T>): Promise<T> {
    return withTransaction(this.db, async (tx) => {
      if (ids.length) await tx.query('SELECT id FROM vouchers WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE', [[...new Set(ids)].sort()]);
      return work(tx);
    });
  }

  private async failure(plan: WritePlan, writes: BatchWrites, part: Extract<BatchResult, { ok: false }>['failed']): Promise<CommitResult> {
    switch (part) {
      case 'fence':
        // A lease of this batch moved to another process: nothing was written; the caller asks the new owner.
        return failed({ fenced: true });
      case 'keys': {
        // Which keys another request took first: those that exist now.
        const taken = await findStoredReplies(this.db, plan.keys);
        return failed({ takenKeys: taken.map((k) => `${k.workspaceId} ${k.key}`) });
      }
      case 'rollbacks':
        return failed({ racedRollbacks: plan.rollbackIds });
      case 'vouchers':
        return failed({ staleVouchers: [...new Set([...writes.deltas.map((d) => d.id), ...writes.sessions.map((s) => s.voucherId)])] });
      case 'usage':
        return failed({ staleUsage: writes.usage.map((u) => ({ voucherId: u.voucherId, customerId: u.customerId })) });
      case 'budget':
        return failed({ staleBudgets: [...new Set([...plan.budgets.values()].map((b) => b.campaignId))] });
    }
  }

  /**
   * The batch statement (its points debits included), then the points its rollbacks give back, its referral conversions
   * and the audit entries and events of its rollbacks and adjustments, in one transaction: they commit together or not
   * at all, and a retried batch (guard failure, deadlock) starts from nothing, never doubled.
   */
  private async commitInTransaction(plan: WritePlan, writes: BatchWrites): Promise<BatchResult> {
    try {
      return await withTransaction(this.db, (tx) => this.writeAll(tx, plan, writes));
    } catch (error) {
      if (error instanceof GuardFailed) return error.result;
      throw error;
    }
  }

  /** As commitInTransaction, inside the caller's transaction (underLocks): a failed guard undoes the plan's writes only. */
  private async commitInSavepoint(tx: Sql, plan: WritePlan, writes: BatchWrites): Promise<BatchResult> {
    await tx.query('SAVEPOINT engine_plan');
    try {
      const result = await this.writeAll(tx, plan, writes);
      await tx.query('RELEASE SAVEPOINT engine_plan');
      return result;
    } catch (error) {
      // Anything else (a deadlock, a lost connection) ends the caller's whole transaction.
      if (!(error instanceof GuardFailed)) throw error;
      await tx.query('ROLLBACK TO SAVEPOINT engine_plan');
      return error.result;
    }
  }

  private async writeAll(tx: Sql, plan: WritePlan, writes: BatchWrites): Promise<Extract<BatchResult, { ok: true }>> {
    const result = await this.statements.commit(tx, writes);
    if (!result.ok) throw new GuardFailed(result);
    await refundPoints(tx, plan.pointsRefunds);
    if (!(await insertConversions(tx, plan.conversions))) throw new GuardFailed({ ok: false, failed: 'vouchers' });
    await revertConversions(tx, plan.revertedConversions);
    settle(plan, result.vouchers);
    await recordAuditedWrites(tx, plan.audited);
    return result;
  }
}

/** Who adds a plan's insight figures to the rollup: a partition's number (-1: the stack committer), or nobody (off). */
export type RollupWriter = { writer: number } | 'off';

function batchWritesOf(plan: WritePlan, rollup: RollupWriter): BatchWrites {
  const usage = [...plan.usage.values()].filter((u) => u.delta !== 0);
  return {
    keys: plan.keys,
    rollbackIds: plan.rollbackIds,
    deltas: [...plan.deltas.values()],
    usage,
    usageLimits: [...plan.usageLimits].flatMap(([voucherId, limit]) =>
      limit !== null && usage.some((u) => u.voucherId === voucherId && u.delta > 0) ? [{ voucherId, limit }] : [],
    ),
    redemptions: plan.redemptions,
    rollbacks: plan.rollbacks,
    ledger: [...plan.ledger.values()].flat(),
    events: plan.events,
    budgets: [...plan.budgets.values()].filter((b) => b.uses !== 0 || b.amount !== 0),
    sessions: [...plan.sessions.values()],
    pointsDebits: plan.pointsDebits,
    rollups: rollup === 'off' ? [] : [...plan.rollups.values()],
    writer: rollup === 'off' ? 0 : rollup.writer,
    fences: [...plan.fences].map((f) => f.split(':').map(Number) as [number, number]),
  };
}

/** The ledger rows (shown by top-up replies, adjustment entries and events) get the balances the statement computed. */
function settle(plan: WritePlan, vouchers: readonly VoucherAfter[]): void {
  for (const after of vouchers) {
    const rows = plan.ledger.get(after.id);
    if (rows) settleBalances(rows, after.giftBalance ?? 0);
  }
}

/** A failed guard inside the audited transaction: rolls it back, then is answered like any failed guard. */
class GuardFailed extends Error {
  constructor(readonly result: Extract<BatchResult, { ok: false }>) {
    super(`engine guard: ${result.failed}`);
  }
}

/** `fenced`: a lease the plan was decided under has moved (its holds are void): decide again with the new owners. */
export type PlanResult = 'ok' | 'taken' | 'stale' | 'fenced';

/**
 * Group commit for writers outside a partition (stacks): plans submitted while a transaction runs are merged and
 * committed together in the next one. Should a merged transaction fail a guard, its plans are committed one by one,
 * so each learns its own result.
 */
export class PlanCommitter {
  private readonly waiting: Array<{ plan: WritePlan; resolve: (r: PlanResult) => void; reject: (e: unknown) => void }> = [];
  private busy = false;
  private readonly writer: PlanWriter;

  constructor(pool: Pool, rollup: RollupWriter) {
    this.writer = new PlanWriter(pool, rollup);
  }

  submit(plan: WritePlan): Promise<PlanResult> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ plan, resolve, reject });
      this.kick();
    });
  }

  private kick(): void {
    if (this.busy || this.waiting.length === 0) return;
    this.busy = true;
    const batch = this.waiting.splice(0, 200);
    this.commitBatch(batch)
      .catch((error: unknown) => batch.forEach((b) => b.reject(error)))
      .finally(() => {
        this.busy = false;
        this.kick();
      });
  }

  private async commitBatch(batch: Array<{ plan: WritePlan; resolve: (r: PlanResult) => void }>): Promise<void> {
    if (batch.length > 1) {
      const result = await this.writer.commit(mergePlans(batch.map((b) => b.plan)));
      if (result.ok) {
        batch.forEach((b) => b.resolve('ok'));
        return;
      }
    }
    for (const b of batch) {
      const result = await this.writer.commit(b.plan);
      b.resolve(result.ok ? 'ok' : result.fenced ? 'fenced' : result.takenKeys.length ? 'taken' : 'stale');
    }
  }
}
