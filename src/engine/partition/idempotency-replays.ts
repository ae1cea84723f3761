// Idempotency keys of a partition's writes, the facility of contract/idempotency.ts batched: a request whose key was
// used before gets the stored reply (`idempotent: true`), or 409 for another body; a key repeated within one batch
// waits for the first request's outcome. Keys are not looked up before a batch: most are new, and the batch statement
// claims them with a guard. A key used here recently is answered from memory; any other used key fails the
// statement's key guard, and is read then.
import { LRUCache } from 'lru-cache';
import { replayOf, type StoredReply } from '../../contract/idempotency.js';
import type { Pool } from '../../platform/database.js';
import { findStoredReplies } from '../../platform/idempotency-keys.sql.js';
import type { PartitionCall } from '../messages.js';

const RECENT_KEYS = 10_000;

export interface KeyedRequest {
  call: PartitionCall;
  reply: (result: unknown) => void;
  fail: (error: unknown) => void;
}

export class IdempotencyReplays<R extends KeyedRequest> {
  /** Outcomes of keys used recently in this partition, so most replays cost no query. */
  private readonly recent = new LRUCache<string, StoredReply>({ max: RECENT_KEYS });

  constructor(
    private readonly db: Pool,
    private readonly answerWith: (request: R, result: unknown) => void,
    private readonly refuseWith: (request: R, error: unknown) => void,
  ) {}

  /** After COMMIT: a request's outcome, stored with its key in the same transaction. */
  remember(call: PartitionCall, outcome: unknown): void {
    const claim = claimOf(call);
    if (claim) this.recent.set(idOf(call, claim.key), { hash: claim.hash, response: outcome as Record<string, unknown> });
  }

  /**
   * Answers the requests whose key was used recently here, or is in `taken` (keys a commit found taken: read now);
   * returns those still to run.
   */
  async answer(requests: R[], taken?: Set<string>): Promise<R[]> {
    const lookups: Array<{ workspaceId: string; key: string }> = [];
    for (const request of requests) {
      const claim = claimOf(request.call);
      if (claim && taken?.has(idOf(request.call, claim.key))) lookups.push({ workspaceId: workspaceOf(request.call), key: claim.key });
    }
    const stored = await findStoredReplies(this.db, lookups);
    for (const s of stored) this.recent.set(`${s.workspaceId} ${s.key}`, { hash: s.requestHash, response: s.response });
    const remaining: R[] = [];
    const firstOfKey = new Map<string, R>();
    for (const request of requests) {
      const claim = claimOf(request.call);
      if (!claim) {
        remaining.push(request);
        continue;
      }
      const id = idOf(request.call, claim.key);
      const known = this.recent.get(id);
      if (known) {
        this.replay(request, claim.hash, known);
        continue;
      }
      const first = firstOfKey.get(id);
      if (first) {
        // Same key twice in one batch: answer the second from the first once it is known.
        const { reply, fail } = request;
        const answerFirst = first.reply;
        const failFirst = first.fail;
        first.reply = (result) => {
          answerFirst(result);
          this.replay({ ...request, reply, fail }, claim.hash, { hash: claimOf(first.call)!.hash, response: result as Record<string, unknown> });
        };
        first.fail = (error) => {
          failFirst(error);
          fail(error);
        };
        continue;
      }
      firstOfKey.set(id, request);
      remaining.push(request);
    }
    return remaining;
  }

  private replay(request: R, hash: string, stored: StoredReply): void {
    let reply: Record<string, unknown>;
    try {
      reply = replayOf(stored, hash);
    } catch (conflict) {
      this.refuseWith(request, conflict);
      return;
    }
    this.answerWith(request, reply);
  }
}

function claimOf(call: PartitionCall) {
  return call.type === 'redeem' || call.type === 'rollback' || call.type === 'stack' ? call.idempotency : undefined;
}

const workspaceOf = (call: PartitionCall) => (call as { workspaceId: string }).workspaceId;
const idOf = (call: PartitionCall, key: string) => `${workspaceOf(call)} ${key}`;
