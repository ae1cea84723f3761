// The customers a batch's redemptions name by sourceId alone (CustomerUse.find), found or created before the batch is
// decided: one statement for all of them (per workspace), on the partition's own connection, where the web thread sent
// one of its own for every few requests. A redemption whose customer the finder cannot answer (a workspace with AUTO
// segments, a sourceId another transaction is creating) is answered CUSTOMER_UNRESOLVED, writes nothing, and is sent
// again by the web thread with its customer resolved there (redemption-engine.ts).
import { customerUseOf } from '../../checkout/redemption.rules.js';
import type { CustomerFacts } from '../../checkout/condition.rules.js';
import type { CustomerToFind, CustomerUse } from '../../contract/engine-port.js';
import type { Sql } from '../../platform/database.js';
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

/** Whether a call names a customer its batch is to find or create. */
export function namesCustomerToFind(call: PartitionCall): call is Extract<PartitionCall, { type: 'redeem' }> {
  return call.type === 'redeem' && call.customer.find !== undefined;
}

/**
 * The customers of these calls (each naming one to find), found or created in one statement per workspace, by call;
 * a call the finder could not answer is absent.
 */
export async function findBatchCustomers(db: Sql, finder: BatchCustomerFinder, calls: ReadonlyArray<Extract<PartitionCall, { type: 'redeem' }>>): Promise<Map<PartitionCall, CustomerUse>> {
  const byWorkspace = new Map<string, Array<Extract<PartitionCall, { type: 'redeem' }>>>();
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
