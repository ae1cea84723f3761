// The engine's writes: one batch of decisions in one guarded statement (its own transaction). Every write carries its
// guard, so a stale cache or a second process can never over-redeem nor over-reserve: a guard that does not hold
// undoes the whole statement and names the stale part, never leaving half a batch.
import { preparedQuery, type Sql } from '../../platform/database.js';
import { numberParameters, type NumberedStatement } from '../../platform/statement-parts.js';
import type { UsageKey } from './hot-path.sql.js';
import type { BatchWrites, VoucherAfter } from './batch-writes.js';
import type { CommitPart, CommitSql } from './commit-part.js';
import { budgetPart, fencePart, keysPart, lockedPart, rolledPart, sessionsPart, usagePart, vouchersPart } from './commit-guarded-parts.sql.js';
import { eventsPart, ledgerPart, redemptionsPart, rollbacksPart, rollupPart } from './commit-row-parts.sql.js';
import { pointsPart } from './points-moves.sql.js';

/**
 * One batch in one statement, so one round trip and its own transaction: idempotency keys, rollbacks, the guarded
 * counter updates (rows locked in id order: engine writes never deadlock), per-customer uses, then the rows and the
 * outbox events. Should any guard not hold, engine_guard() raises and the whole statement is undone; the error names
 * the part that was stale. Only the parts a batch needs are included, in this order (later CTEs read earlier ones):
 * most batches are redemptions and events only.
 */
const PARTS: readonly CommitPart[] = [
  fencePart, keysPart, rolledPart, lockedPart, vouchersPart, pointsPart, usagePart, budgetPart, sessionsPart,
  redemptionsPart, rollbacksPart, ledgerPart, eventsPart, rollupPart,
];

// The order engine_guard's CASE reads the parts in. Redemptions and events are read first though they guard nothing,
// so that their rows are inserted before the voucher rows are locked: a batch waiting for another's voucher locks has
// then done most of its work, and holds the locks only briefly itself. The fence comes first of all. Points come after
// the vouchers: a card's row is locked before its buckets, as every writer of points locks them.
const GUARD_ORDER: readonly string[] = ['fence', 'keys', 'redemptions', 'events', 'rolled', 'locked', 'vouchers', 'points', 'usage', 'budget'];

export type GuardFailure = 'fence' | 'keys' | 'rollbacks' | 'vouchers' | 'usage' | 'budget';

interface CommitStatement {
  name: string;
  text: string;
  values: NumberedStatement<BatchWrites, CommitSql>['values'];
}

/** The statement for a set of parts (in PARTS order): the same parts always give the same text and numbers. */
function buildCommitStatement(name: string, parts: readonly CommitPart[]): CommitStatement {
  const numbered = numberParameters(parts);
  const guards = [...numbered.sql].flatMap(([part, sql]) => {
    if (sql.guard === undefined) return [];
    const rank = GUARD_ORDER.indexOf(part);
    if (rank < 0) throw new Error(`commit part ${part} has a guard but no place in GUARD_ORDER`);
    return [{ rank, when: `WHEN ${sql.guard}` }];
  });
  const whens = guards.sort((a, b) => a.rank - b.rank).map((g) => g.when);
  const vouchers = numbered.sql.has('vouchers')
    ? `(SELECT coalesce(json_agg(json_build_array(id, redeemed_count, gift_balance)), '[]') FROM upd)`
    : `'[]'::json`;
  const usage = numbered.sql.has('usage')
    ? `(SELECT coalesce(json_agg(json_build_array(voucher_id, customer_id, uses)), '[]') FROM usage_after)`
    : `'[]'::json`;
  const text = `WITH ${[...numbered.sql.values()].map((sql) => sql.cte).join(', ')}
SELECT engine_guard(${whens.length ? `CASE ${whens.join(' ')} END` : 'NULL'}) AS ok, ${vouchers} AS vouchers, ${usage} AS usage`;
  return { name, text, values: numbered.values };
}

export type BatchResult =
  | { ok: true; vouchers: VoucherAfter[]; usage: Array<UsageKey & { uses: number }> }
  | { ok: false; failed: GuardFailure };

/**
 * A writer's batch statements, built once per combination of parts and prepared once per connection, named by a bit
 * per part (PostgreSQL cuts names at 63 bytes). One per writer of plans (a partition, the stack committer).
 */
export class CommitStatements {
  private readonly built = new Map<string, CommitStatement>();

  async commit(db: Sql, w: BatchWrites): Promise<BatchResult> {
    const statement = this.statementFor(w);
    try {
      const { rows } = await preparedQuery<{ vouchers: Array<[string, number, number | null]>; usage: Array<[string, string, number]> }>(
        db,
        statement.name,
        statement.text,
        statement.values(w),
      );
      const row = rows[0]!;
      return {
        ok: true,
        vouchers: row.vouchers.map(([id, redeemedCount, giftBalance]) => ({ id, redeemedCount, giftBalance })),
        usage: row.usage.map(([voucherId, customerId, uses]) => ({ voucherId, customerId, uses })),
      };
    } catch (error) {
      const message = error instanceof Error ? error.message : '';
      const failed = /^engine guard: (fence|keys|rollbacks|vouchers|usage|budget)$/.exec(message)?.[1] as GuardFailure | undefined;
      if ((error as { code?: string }).code === 'P0001' && failed) return { ok: false, failed };
      throw error;
    }
  }

  private statementFor(w: BatchWrites): CommitStatement {
    const parts = PARTS.filter((part) => part.rows(w) > 0);
    const name = `engine.commit.${parts.reduce((mask, part) => mask | (1 << PARTS.indexOf(part)), 0).toString(16)}`;
    let statement = this.built.get(name);
    if (!statement) this.built.set(name, (statement = buildCommitStatement(name, parts)));
    return statement;
  }
}
