// The customers a batch's redemptions name by sourceId alone (CustomerUse.find), found or created before the batch is
// decided: one statement for all of them (per workspace), on the partition's own connection, where the web thread sent
// one of its own for every few requests. A redemption whose customer this does not answer (a workspace with AUTO
// segments, a sourceId another transaction is creating, a statement still waiting past BatchCustomers' wait) is
// answered CUSTOMER_UNRESOLVED, writes nothing, and is sent again by the web thread with its customer resolved there
// (redemption-engine.ts).
import { customerUseOf } from '../../checkout/redemption.rules.js';
import type { CustomerFacts } from '../../checkout/condition.rules.js';
import type { CustomerToFind, CustomerUse } from '../../contract/engine-port.js';
import type { Sql } from '../../platform/database.js';
import type { Logger } from '../../platform/logger.js';
import type { PartitionCall } from '../messages.js';

/**
 * Finds or creates a workspace's customers by sourceId: each one's facts at its reference's place, undefined where it
 * cannot answer. Built at the thread's root (the customers domain's sourceIdFinder), one per partition thread.
 */
export type BatchCustomerFinder = (db: Sql, workspaceId: string, refs: readonly CustomerToFind[]) => Promise<ReadonlyArray<CustomerFacts | undefined>>;

/** The answer of a redemption whose customer its batch could not find or create: nothing was written for it. */
export const CUSTOMER_UNRESOLVED = { customerUnresolved: true } as const;

export function isCustomerUnresolved(result: unknown): result is typeof CUSTOMER_UNRESOLVED {
  return typeof result === 'object' && result !== null && (result as { customerUnresolved?: unknown }).customerUnresolved === true;
}

type RedeemCall = Extract<PartitionCall, { type: 'redeem' }>;

/** Whether a call names a customer its batch is to find or create. */
export function namesCustomerToFind(call: PartitionCall): call is RedeemCall {
  return call.type === 'redeem' && call.customer.find !== undefined;
}

/**
 * How long a batch waits for its customers' statement (a millisecond or so as a rule; a new connection's first, on a
 * busy machine, tens). Past it the statement is likely waiting on another transaction's insert of one of them (a
 * customer import's chunk holds 5,000 for its whole transaction): the batch sends those redemptions back and goes on,
 * and no other customers' statement is sent until that one ends.
 */
export const CUSTOMERS_WAIT_MS = 100;

/** A partition's customers' statements: one out at once, waited for `waitMs` at most. None without a finder. */
export class BatchCustomers {
  /** A statement is out (past its wait, when a batch asks): the batches meanwhile answer none. */
  private out = false;

  constructor(
    private readonly db: Sql,
    private readonly finder: BatchCustomerFinder | undefined,
    private readonly log: Logger,
    private readonly waitMs = CUSTOMERS_WAIT_MS,
  ) {}

  /** The customers of these calls (each naming one to find), by call; a call not answered is absent. */
  async find(calls: readonly RedeemCall[]): Promise<Map<PartitionCall, CustomerUse>> {
    if (!this.finder || this.out) return new Map();
    this.out = true;
    const statement = findCustomers(this.db, this.finder, calls).finally(() => {
      this.out = false;
    });
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), this.waitMs)));
    try {
      const found = await Promise.race([statement, waited]);
      if (found) return found;
    } finally {
      clearTimeout(timer);
    }
    // Waiting on another transaction's insert of one of them (an import's, most likely): left to finish on its own.
    statement.catch((error: unknown) => this.log.warn({ err: (error as Error).message }, 'finding the customers of a batch failed after it went on'));
    return new Map();
  }
}

/** One statement per workspace of the calls: each answered call's customer, by call. */
async function findCustomers(db: Sql, finder: BatchCustomerFinder, calls: readonly RedeemCall[]): Promise<Map<PartitionCall, CustomerUse>> {
  const byWorkspace = new Map<string, RedeemCall[]>();
  for (const call of calls) {
    const theirs = byWorkspace.get(call.workspaceId);
    if (theirs) theirs.push(call);
    else byWorkspace.set(call.workspaceId, [call]);
  }
  const found = new Map<PartitionCall, CustomerUse>();
  for (const [workspaceId, theirs] of byWorkspace) {
    const facts = await finder(db, workspaceId, theirs.map((c) => c.customer.find!));
    theirs.forEach((call, i) => {
      const f = facts[i];
      if (f) found.set(call, customerUseOf(f));
    });
  }
  return found;
}
